// Log: the one door every layer logs through. The call sites build only a small table of
// references to their arguments (fmt::format_args); the formatting and the logger behind it are
// compiled once, in log.cc. Calling spdlog's templates directly instead made every message
// instantiate and compile spdlog's and fmt's formatting machinery again in each file: two
// messages took 11 of the 18 s one 124-line file needed under AddressSanitizer.
//
// The format string is checked at compile time, as spdlog's own functions check it. Messages go
// to spdlog's default logger at the time of the call (src/logging.cc sets it up; tests swap it).
// Thread-safety: every function is safe to call from any thread (spdlog's loggers are).
#pragma once

#include <fmt/core.h>

#include <utility>

namespace kvfs {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kCritical };

// Whether a message at `level` would be written (the default logger's level allows it).
bool LogEnabled(LogLevel level);

// Formats `format` with `args` and writes it at `level`, if LogEnabled(level).
void VLog(LogLevel level, fmt::string_view format, fmt::format_args args);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  VLog(level, format, fmt::make_format_args(args...));
}
template <typename... Args>
void LogTrace(fmt::format_string<Args...> format, Args&&... args) {
  VLog(LogLevel::kTrace, format, fmt::make_format_args(args...));
}
template <typename... Args>
void LogDebug(fmt::format_string<Args...> format, Args&&... args) {
  VLog(LogLevel::kDebug, format, fmt::make_format_args(args...));
}
template <typename... Args>
void LogInfo(fmt::format_string<Args...> format, Args&&... args) {
  VLog(LogLevel::kInfo, format, fmt::make_format_args(args...));
}
template <typename... Args>
void LogWarn(fmt::format_string<Args...> format, Args&&... args) {
  VLog(LogLevel::kWarn, format, fmt::make_format_args(args...));
}
template <typename... Args>
void LogError(fmt::format_string<Args...> format, Args&&... args) {
  VLog(LogLevel::kError, format, fmt::make_format_args(args...));
}
template <typename... Args>
void LogCritical(fmt::format_string<Args...> format, Args&&... args) {
  VLog(LogLevel::kCritical, format, fmt::make_format_args(args...));
}

}  // namespace kvfs
