// Subcommands that talk to a running mount through the filesystem itself (no second connection to
// the store, no access to the locked cache directory):
//   kvfs stats MOUNTPOINT          prints the daemon's counters (xattr user.kvfs.stats of the root)
//   kvfs warm MOUNTPOINT NAME...   reads each chunk once so it lands in the cache ("-": names on
//                                  stdin), with progress, a summary and exit 1 if any failed.
//   kvfs log-level MOUNTPOINT [LEVEL]  prints (and first sets) the daemon's log level
//                                  (xattr user.kvfs.log_level of the root)
//   kvfs du MOUNTPOINT [DIR...]    files, bytes, oldest and newest per directory, and in all
#pragma once

#include "src/cli.h"

namespace kvfs {

// Each returns the process exit status. Thread-safety: call from main() only.
int RunStats(const CommandLine& cmd);
// kvfs sync MOUNTPOINT: returns once every chunk the mount accepted before it (write_back) is in
// the store, or names each that is not (exit 1).
int RunSync(const CommandLine& cmd);
int RunWarm(const CommandLine& cmd);
int RunLogLevel(const CommandLine& cmd);
int RunDu(const CommandLine& cmd);

}  // namespace kvfs
