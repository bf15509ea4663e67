#include "base/log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace kvfs {
namespace {

// spdlog's level for each LogLevel, in LogLevel's order.
constexpr spdlog::level::level_enum kSpdlogLevels[] = {
    spdlog::level::trace, spdlog::level::debug, spdlog::level::info,
    spdlog::level::warn,  spdlog::level::err,   spdlog::level::critical};

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  return kSpdlogLevels[static_cast<int>(level)];
}

}  // namespace

bool LogEnabled(LogLevel level) {
  return spdlog::default_logger_raw()->should_log(ToSpdlog(level));
}

void VLog(LogLevel level, fmt::string_view format, fmt::format_args args) {
  spdlog::logger* logger = spdlog::default_logger_raw();
  const spdlog::level::level_enum at = ToSpdlog(level);
  if (!logger->should_log(at)) return;
  fmt::memory_buffer text;
  try {
    fmt::vformat_to(fmt::appender(text), format, args);
  } catch (const std::exception& e) {
    // A formatter that throws must not take the caller down with it; say which message it was.
    text.clear();
    fmt::format_to(fmt::appender(text), "kvfs: a log message could not be formatted ({}): {}",
                   e.what(), format);
  }
  logger->log(at, spdlog::string_view_t(text.data(), text.size()));
}

}  // namespace kvfs
