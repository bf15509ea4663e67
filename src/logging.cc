#include "src/logging.h"

#include <spdlog/sinks/dup_filter_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <syslog.h>

#include <memory>

namespace kvfs {

namespace {

Result<spdlog::level::level_enum> ParseLevel(const std::string& text) {
  const std::string name = text == "warning" ? "warn" : text;
  spdlog::level::level_enum level = spdlog::level::from_str(name);
  // from_str answers "off" for anything it does not know; only accept "off" when asked for.
  if (level == spdlog::level::off && name != "off") {
    return Status::InvalidArgument("log level '" + text +
                                   "' is not one of: trace, debug, info, warn, error, critical, "
                                   "off");
  }
  return level;
}

}  // namespace

Status SetupLogging(const LoggingOptions& options) {
  KVFS_ASSIGN_OR_RETURN(spdlog::level::level_enum level, ParseLevel(options.level));
  // A store that fails every request would repeat the same line thousands of times a second:
  // identical consecutive messages within 10 s are folded into one "Skipped N duplicate
  // messages" line.
  auto sink = std::make_shared<spdlog::sinks::dup_filter_sink_mt>(std::chrono::seconds(10));
  if (options.to_syslog) {
    // syslog stamps the time itself; keep the thread id to follow one request.
    sink->add_sink(
        std::make_shared<spdlog::sinks::syslog_sink_mt>(options.ident, LOG_PID, LOG_DAEMON, true));
  } else {
    sink->add_sink(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  auto logger = std::make_shared<spdlog::logger>("kvfs", sink);
  logger->set_pattern(options.to_syslog ? "[%t] %v" : "%Y-%m-%d %H:%M:%S.%e %-5l [%t] %v");
  logger->set_level(level);
  // Errors and warnings reach the log at once even if the process dies right after.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return Status::OK();
}

Status SetLogLevel(const std::string& level) {
  KVFS_ASSIGN_OR_RETURN(spdlog::level::level_enum parsed, ParseLevel(level));
  spdlog::default_logger()->set_level(parsed);
  return Status::OK();
}

}  // namespace kvfs
