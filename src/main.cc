// kvfs entry point: parses the command line, then mounts or runs a subcommand.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fs/fuse/fuse_adapter.h"
#include "src/cli.h"
#include "src/client_commands.h"
#include "src/config.h"
#include "src/gc_command.h"
#include "src/logging.h"
#include "src/mount.h"
#include "src/process_setup.h"

int main(int argc, char** argv) {
  using namespace kvfs;
  const std::string program = "kvfs";
  auto cmd = ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program.c_str(),
                 cmd.status().message().c_str(), program.c_str());
    return kExitUsage;
  }
  switch (cmd->command) {
    case Command::kHelp:
      std::fputs(UsageText(program).c_str(), stdout);
      return 0;
    case Command::kVersion:
      // The libfuse line lives here, not in cli.cc, which is built without libfuse (fuzzers).
      std::fputs((VersionText() + FuseLibraryText() + "\n").c_str(), stdout);
      return 0;
    case Command::kStats:
      return RunStats(*cmd);
    case Command::kSync:
      return RunSync(*cmd);
    case Command::kWarm:
      return RunWarm(*cmd);
    case Command::kLogLevel:
      return RunLogLevel(*cmd);
    case Command::kDu:
      return RunDu(*cmd);
    case Command::kGc:
      if (cmd->source.empty()) return RunGcMount(*cmd);
      break;  // needs the configuration: below
    case Command::kMount:
      break;
  }
  auto config = ResolveConfig(*cmd, [](const char* name) { return std::getenv(name); });
  if (!config.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), config.status().message().c_str());
    return kExitUsage;
  }
  LoggingOptions log;
  log.level = cmd->debug ? "debug" : config->log_level;
  Status st = SetupLogging(log);
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), st.message().c_str());
    return kExitUsage;
  }
  if (cmd->dump_config) {
    std::fputs(DumpConfig(*config).c_str(), stdout);
    return 0;
  }
  if (cmd->command == Command::kGc) return RunGcSource(*cmd, *config);
  // Before RunMount daemonizes and moves to "/": "kvfs SRC mnt" must mount ./mnt, not /mnt.
  if (Status abs = MakePathsAbsolute(&*cmd, &*config); !abs.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), abs.message().c_str());
    return 1;
  }
  return RunMount(*cmd, *config);
}
