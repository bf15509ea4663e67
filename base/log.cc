#include "base/log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace kvfs {
namespace {

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kCritical:
      return spdlog::level::critical;
  }
  return spdlog::level::critical;
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
