#include "objstore/s3/backoff.h"

#include <gtest/gtest.h>

namespace kvfs::s3 {
namespace {

class FakeClock : public Clock {
 public:
  int64_t NowMs() override { return now; }
  int64_t now = 1000;
};

TEST(RetryPolicy, FullJitterDoublesTheCapUpToTheMax) {
  FakeClock clock;
  uint64_t next = 0;
  // A "random" source returning the largest value below the cap exposes the cap itself.
  RetryPolicy policy({10, 50, 1000}, &clock, [&next] { return next; });
  next = ~uint64_t{0};
  // Cap for retry n is min(1000, 50 * 2^(n-1)); value = r % (cap + 1).
  for (int retry = 1; retry <= 8; ++retry) {
    const int64_t cap = std::min<int64_t>(1000, int64_t{50} << (retry - 1));
    next = static_cast<uint64_t>(cap);  // r % (cap+1) == cap
    EXPECT_EQ(policy.BackoffMs(retry), cap) << retry;
    next = static_cast<uint64_t>(cap + 1);  // wraps to 0: full jitter reaches zero
    EXPECT_EQ(policy.BackoffMs(retry), 0) << retry;
  }
}

TEST(RetryPolicy, RealRandomStaysWithinTheCap) {
  FakeClock clock;
  RetryPolicy policy({5, 100, 400}, &clock);
  for (int i = 0; i < 1000; ++i) {
    const int64_t d = policy.BackoffMs(3);
    EXPECT_GE(d, 0);
    EXPECT_LE(d, 400);
  }
}

TEST(RetryPolicy, StopsOnAttemptsDeadlineAndNonRetryableErrors) {
  FakeClock clock;
  RetryPolicy policy({3, 100, 1000}, &clock, [] { return uint64_t{60}; });
  const Status transient = Status::Unavailable("503");
  const int64_t deadline = clock.now + 10000;
  EXPECT_EQ(policy.NextDelayMs(transient, 1, deadline), 60);
  EXPECT_EQ(policy.NextDelayMs(transient, 2, deadline), 60);
  EXPECT_FALSE(policy.NextDelayMs(transient, 3, deadline).has_value());  // attempts used up
  EXPECT_FALSE(policy.NextDelayMs(Status::NotFound("x"), 1, deadline).has_value());
  EXPECT_FALSE(policy.NextDelayMs(Status::PermissionDenied("x"), 1, deadline).has_value());
  // The next attempt would start after the deadline.
  clock.now = deadline - 30;
  EXPECT_FALSE(policy.NextDelayMs(transient, 1, deadline).has_value());
  clock.now = deadline - 61;
  EXPECT_EQ(policy.NextDelayMs(transient, 1, deadline), 60);
}

}  // namespace
}  // namespace kvfs::s3
