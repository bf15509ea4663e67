#include "src/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <syslog.h>

#include <memory>

namespace kvfs {

Status SetupLogging(const LoggingOptions& options) {
  std::string name = options.level == "warning" ? "warn" : options.level;
  spdlog::level::level_enum level = spdlog::level::from_str(name);
  // from_str answers "off" for anything it does not know; only accept "off" when asked for.
  if (level == spdlog::level::off && name != "off") {
    return Status::InvalidArgument("log level '" + options.level +
                                   "' is not one of: trace, debug, info, warn, error, critical, "
                                   "off");
  }
  std::shared_ptr<spdlog::logger> logger;
  if (options.to_syslog) {
    // syslog stamps the time itself; keep the thread id to follow one request.
    logger = std::make_shared<spdlog::logger>(
        "kvfs",
        std::make_shared<spdlog::sinks::syslog_sink_mt>(options.ident, LOG_PID, LOG_DAEMON, true));
    logger->set_pattern("[%t] %v");
  } else {
    logger =
        std::make_shared<spdlog::logger>("kvfs", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %-5l [%t] %v");
  }
  logger->set_level(level);
  // Errors and warnings reach the log at once even if the process dies right after.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return Status::OK();
}

}  // namespace kvfs
