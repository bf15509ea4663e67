// The command line: `kvfs [options] SOURCE MOUNTPOINT`, in the form mount(8) / mount.fuse3 use,
// plus reserved subcommands (`kvfs warm`, `kvfs stats`). Parsing only builds a CommandLine;
// ResolveConfig then layers defaults < environment < config file < command line into a
// KvfsConfig. Neither touches the filesystem except to read the config file.
//
// Thread-safety: pure functions over their arguments (reentrant).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "src/config.h"
#include "src/mount_options.h"  // ParseMountOptions, EscapeFuseOptionValue: the -o grammar

namespace kvfs {

// Exit status for a bad command line or configuration (as getopt-style tools use).
inline constexpr int kExitUsage = 2;

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

// Parses argv (args[0] is the program name). Errors are kInvalidArgument with a one-line message
// for the user; the caller prints it with a hint to --help and exits with kExitUsage.
Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args);
Result<CommandLine> ParseCommandLine(int argc, const char* const* argv);

// The effective configuration: defaults, then the environment (KVFS_*, AWS_REGION), then the
// config file (--config, -o config=, else $KVFS_CONFIG), then SOURCE and -o settings, then -d
// (log_level debug). Validated. Errors name the layer, key and reason.
Result<KvfsConfig> ResolveConfig(const CommandLine& cmd, const EnvLookup& getenv);

std::string UsageText(const std::string& program);
std::string VersionText();

}  // namespace kvfs
