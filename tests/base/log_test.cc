#include "base/log.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <string>

#include "tests/src/log_capture.h"

namespace kvfs {
namespace {

TEST(LogTest, FormatsItsArgumentsAtTheLevelAsked) {
  LogCapture capture;
  LogWarn("kvfs: {} of {} ({})", 3, 4, std::string("chunks"));
  Log(LogLevel::kError, "kvfs: plain {}", "text");
  EXPECT_NE(capture.text().find("warning: kvfs: 3 of 4 (chunks)"), std::string::npos)
      << capture.text();
  EXPECT_NE(capture.text().find("error: kvfs: plain text"), std::string::npos) << capture.text();
}

TEST(LogTest, WritesNothingBelowTheLoggersLevel) {
  LogCapture capture;
  spdlog::default_logger()->set_level(spdlog::level::warn);
  EXPECT_FALSE(LogEnabled(LogLevel::kDebug));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarn));
  LogDebug("kvfs: hidden {}", 1);
  LogInfo("kvfs: hidden too");
  EXPECT_EQ(capture.text().find("hidden"), std::string::npos) << capture.text();
}

}  // namespace
}  // namespace kvfs
