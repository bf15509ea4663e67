// Process-wide logging set-up (spdlog): stderr in the foreground, syslog once daemonized.
// Call once from main before threads start; spdlog's loggers are thread-safe afterwards.
#pragma once

#include <string>

#include "src/base/status.h"

namespace kvfs {

struct LoggingOptions {
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  bool to_syslog = false;      // daemonized: syslog (LOG_DAEMON) instead of stderr
  std::string ident = "kvfs";  // syslog identity
};

// Replaces spdlog's default logger. kInvalidArgument for an unknown level.
Status SetupLogging(const LoggingOptions& options);

}  // namespace kvfs
