#include "src/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

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

TEST_F(LoggingTest, SyslogWhenDaemonized) {
  ASSERT_TRUE(SetupLogging({.level = "info", .to_syslog = true, .ident = "kvfs-test"}).ok());
  EXPECT_EQ(spdlog::default_logger()->sinks().size(), 1u);
}

}  // namespace
}  // namespace kvfs
