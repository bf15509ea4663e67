// fs/reply_log: which failed replies are warnings, what a line says, and the rate limit.
#include "fs/fuse/reply_log.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "tests/src/log_capture.h"

namespace kvfs {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

TEST(ReplyLogTest, FailureIsAWarningNamingOpTargetErrnoAndCause) {
  LogCapture cap;
  LogRateLimiter limiter(10, 1000);
  LogFailedReply(&limiter, "write", "inode 42", ENOSPC,
                 Status::NoSpace("writing spool file for 'a.pt': No space left on device"));
  const std::string t = cap.text();
  EXPECT_NE(t.find("warning: fuse: write inode 42: ENOSPC (No space left on device): NoSpace: "
                   "writing spool file for 'a.pt'"),
            std::string::npos)
      << t;
}

TEST(ReplyLogTest, ExpectedAnswersAreDebugOnly) {
  LogCapture cap;
  LogRateLimiter limiter(10, 1000);
  LogFailedReply(&limiter, "getxattr", "security.selinux of inode 5", ENODATA, Status::OK());
  LogFailedReply(&limiter, "create", "'a.pt' in inode 1", EEXIST, Status::AlreadyExists("x"));
  LogFailedReply(&limiter, "unlink", "'b.pt' in inode 1", ENOENT, Status::NotFound("x"));
  const std::string t = cap.text();
  EXPECT_EQ(Count(t, "debug: fuse: "), 3u) << t;
  EXPECT_EQ(t.find("warning"), std::string::npos) << t;
  EXPECT_TRUE(ExpectedReplyError("getxattr", ENOTSUP));
  EXPECT_FALSE(ExpectedReplyError("read", ENOTSUP));
  EXPECT_FALSE(ExpectedReplyError("read", EIO));
  EXPECT_FALSE(ExpectedReplyError("close", ENOSPC));
}

TEST(ReplyLogTest, RateLimitedWithASuppressedCount) {
  int64_t now = 1000;
  LogRateLimiter limiter(3, 1000, [&] { return now; });
  LogCapture cap;
  for (int i = 0; i < 10; i++) LogFailedReply(&limiter, "read", "inode 7", EIO, Status::OK());
  EXPECT_EQ(Count(cap.text(), "fuse: read inode 7"), 3u) << cap.text();
  now += 999;  // same window
  LogFailedReply(&limiter, "read", "inode 7", EIO, Status::OK());
  EXPECT_EQ(Count(cap.text(), "fuse: read inode 7"), 3u);
  now += 1;  // next window: the count of what was left out comes first
  LogFailedReply(&limiter, "read", "inode 7", EIO, Status::OK());
  const std::string t = cap.text();
  EXPECT_EQ(Count(t, "fuse: read inode 7"), 4u) << t;
  EXPECT_NE(t.find("fuse: 8 more failed replies were not logged"), std::string::npos) << t;
}

TEST(ReplyLogTest, LimiterAloneCountsRefusals) {
  int64_t now = 0;
  LogRateLimiter limiter(2, 100, [&] { return now; });
  uint64_t suppressed = 99;
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 0u);
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  EXPECT_FALSE(limiter.Allow(&suppressed));
  now = 100;
  EXPECT_TRUE(limiter.Allow(&suppressed));
  EXPECT_EQ(suppressed, 2u);
}

}  // namespace
}  // namespace kvfs
