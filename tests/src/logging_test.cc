#include "src/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/dup_filter_sink.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace kvfs {
namespace {

// Restores spdlog's default logger after a test replaced it.
class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override { spdlog::set_default_logger(saved_); }
  std::shared_ptr<spdlog::logger> saved_ = spdlog::default_logger();
};

TEST_F(LoggingTest, LevelsFromConfig) {
  ASSERT_TRUE(SetupLogging({.level = "debug"}).ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  ASSERT_TRUE(SetupLogging({.level = "warning"}).ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::warn);
  ASSERT_TRUE(SetupLogging({.level = "off"}).ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::off);
}

TEST_F(LoggingTest, UnknownLevelIsAnError) {
  Status st = SetupLogging({.level = "loud"});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'loud'"), std::string::npos);
}

// Daemonized, lines go to syslog (behind the duplicate filter) and none to stderr, which is
// /dev/null then. Without a syslog daemon (a container) the lines are lost, silently.
TEST_F(LoggingTest, SyslogWhenDaemonized) {
  ASSERT_TRUE(SetupLogging({.level = "info", .to_syslog = true, .ident = "kvfs-test"}).ok());
  ::testing::internal::CaptureStderr();
  spdlog::info("kvfs logging test: info");
  spdlog::warn("kvfs logging test: warning");
  spdlog::default_logger()->flush();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  const auto& sinks = spdlog::default_logger()->sinks();
  ASSERT_EQ(sinks.size(), 1u);
  auto filter = std::dynamic_pointer_cast<spdlog::sinks::dup_filter_sink_mt>(sinks[0]);
  ASSERT_NE(filter, nullptr);
  ASSERT_EQ(filter->sinks().size(), 1u);
  EXPECT_NE(std::dynamic_pointer_cast<spdlog::sinks::syslog_sink_mt>(filter->sinks()[0]), nullptr);
}

TEST_F(LoggingTest, LevelChangesWhileRunning) {
  ASSERT_TRUE(SetupLogging({.level = "info"}).ok());
  ASSERT_TRUE(SetLogLevel("debug").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);
  Status st = SetLogLevel("chatty");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'chatty'"), std::string::npos);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug) << "a bad level changes nothing";
}

TEST_F(LoggingTest, RepeatedLinesAreFolded) {
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(SetupLogging({.level = "info"}).ok());
  for (int i = 0; i < 100; i++) spdlog::warn("GET k: 503 SlowDown");
  spdlog::warn("something else");
  spdlog::default_logger()->flush();
  const std::string out = ::testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t p = 0; (p = out.find("GET k: 503", p)) != std::string::npos; p++) lines++;
  EXPECT_EQ(lines, 1u);
  EXPECT_NE(out.find("Skipped 99 duplicate messages"), std::string::npos);
}

}  // namespace
}  // namespace kvfs
