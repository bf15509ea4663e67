// Process-wide logging set-up (spdlog): stderr in the foreground, syslog once daemonized.
// Call SetupLogging once from main before threads start; spdlog's loggers are thread-safe
// afterwards, and so is SetLogLevel.
#pragma once

#include <string>

#include "base/status.h"

namespace kvfs {

struct LoggingOptions {
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  bool to_syslog = false;      // daemonized: syslog (LOG_DAEMON) instead of stderr
  std::string ident = "kvfs";  // syslog identity
};

// Replaces spdlog's default logger. kInvalidArgument for an unknown level. Identical consecutive
// messages within 10 s are logged once, then counted ("Skipped N duplicate messages").
Status SetupLogging(const LoggingOptions& options);

// Changes the level of the running logger (the mount's user.kvfs.log_level, `kvfs log-level`);
// thread-safe. kInvalidArgument names an unknown level.
Status SetLogLevel(const std::string& level);

}  // namespace kvfs
