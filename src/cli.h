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
#include "src/command_line.h"
#include "src/config.h"
#include "src/mount_options.h"  // ParseMountOptions, EscapeFuseOptionValue: the -o grammar

namespace kvfs {

// Exit status for a bad command line or configuration (as getopt-style tools use).
inline constexpr int kExitUsage = 2;

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
