// kvfs entry point. For now: parses the command line and the configuration, and prints it with
// --dump-config. Mounting is wired in when the filesystem layer lands.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/cli.h"
#include "src/config.h"
#include "src/logging.h"

int main(int argc, char** argv) {
  using namespace kvfs;
  std::string program = "kvfs";
  auto cmd = ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program.c_str(),
                 cmd.status().message().c_str(), program.c_str());
    return kExitUsage;
  }
  if (cmd->command == Command::kHelp) {
    std::fputs(UsageText(program).c_str(), stdout);
    return 0;
  }
  if (cmd->command == Command::kVersion) {
    std::fputs(VersionText().c_str(), stdout);
    return 0;
  }
  auto config = ResolveConfig(*cmd, [](const char* name) { return std::getenv(name); });
  if (!config.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), config.status().message().c_str());
    return kExitUsage;
  }
  LoggingOptions log;
  log.level = config->log_level;
  Status st = SetupLogging(log);
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), st.message().c_str());
    return kExitUsage;
  }
  if (cmd->dump_config) {
    std::fputs(DumpConfig(*config).c_str(), stdout);
    return 0;
  }
  std::fprintf(stderr, "%s: mounting is not implemented yet\n", program.c_str());
  return 1;
}
