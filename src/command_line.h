// CommandLine: what `kvfs [options] SOURCE MOUNTPOINT` (or a subcommand) asked for, as parsed -
// before any layering into a KvfsConfig. Built by ParseCommandLine (src/cli.h), whose -o strings
// ParseMountOptions (src/mount_options.h) applies; a room of its own so that neither of those
// includes the other.
//
// Thread-compatible: a plain value.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kvfs {

enum class Command {
  kMount,     // kvfs [options] [SOURCE] MOUNTPOINT (SOURCE may come from the config)
  kHelp,      // --help / -h
  kVersion,   // --version / -V
  kWarm,      // kvfs warm [options] MOUNTPOINT NAME... ("-" reads names from stdin)
  kStats,     // kvfs stats [options] MOUNTPOINT
  kSync,      // kvfs sync MOUNTPOINT: every chunk accepted so far is in the store
  kLogLevel,  // kvfs log-level MOUNTPOINT [LEVEL]
  kDu,        // kvfs du MOUNTPOINT [DIR...]
  kGc,        // kvfs gc SOURCE|MOUNTPOINT [--dry-run] (src/gc_command.h)
};

struct CommandLine {
  Command command = Command::kMount;
  std::string source;              // SOURCE: s3://bucket[/prefix] or file:///abs/dir
  std::string mountpoint;          // MOUNTPOINT (mount, warm, stats)
  std::vector<std::string> names;  // warm: chunk names to fetch; log-level: LEVEL; du: DIRs

  bool foreground = false;     // -f; also implied by -d
  bool debug = false;          // -d / -o debug: debug log level, FUSE request tracing
  bool single_thread = false;  // -s: single-threaded FUSE loop (debugging)
  bool dump_config = false;    // --dump-config: print the effective config (redacted) and exit
  bool dry_run = false;        // gc --dry-run: plan, print, change nothing
  std::string config_path;     // --config FILE / -o config=FILE

  // kvfs settings from -o key=value (or a bare boolean key), in command-line order.
  std::vector<std::pair<std::string, std::string>> settings;
  // Generic mount options for libfuse (ro, nosuid, nodev, fsname=...), in order.
  std::vector<std::string> fuse_options;
  // Options accepted for fstab's sake and ignored (_netdev, nofail, x-systemd.*...), for logs.
  std::vector<std::string> ignored_options;
};

}  // namespace kvfs
