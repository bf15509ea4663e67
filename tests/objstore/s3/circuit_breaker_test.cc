// CircuitBreaker: opens after N consecutive failures, refuses during the cool-down, lets exactly
// one probe through after it, and closes on the probe's success. No real time: times are given.
#include "objstore/s3/circuit_breaker.h"

#include <gtest/gtest.h>

namespace kvfs::s3 {
namespace {

TEST(CircuitBreakerTest, OpensAfterConsecutiveFailuresOnly) {
  CircuitBreaker b({/*failures=*/3, /*cooldown_ms=*/1000});
  b.OnFailure(0);
  b.OnFailure(0);
  b.OnSuccess();  // an answer in between: the count starts over
  b.OnFailure(0);
  b.OnFailure(0);
  EXPECT_TRUE(b.Allow(0));
  b.OnFailure(0);
  int64_t wait = -1;
  EXPECT_FALSE(b.Allow(100, &wait));
  EXPECT_EQ(wait, 900);
  EXPECT_EQ(b.stats().opens, 1u);
  EXPECT_EQ(b.stats().rejected, 1u);
  EXPECT_TRUE(b.stats().open);
}

TEST(CircuitBreakerTest, OneProbeAfterTheCooldownThenClosesOnSuccess) {
  CircuitBreaker b({1, 1000});
  b.OnFailure(0);
  EXPECT_FALSE(b.Allow(999));
  EXPECT_TRUE(b.Allow(1000));   // the probe
  EXPECT_FALSE(b.Allow(1001));  // only one at a time
  b.OnSuccess();
  EXPECT_TRUE(b.Allow(1002));
  EXPECT_FALSE(b.stats().open);
}

TEST(CircuitBreakerTest, FailedProbeOpensForAnotherCooldown) {
  CircuitBreaker b({1, 1000});
  b.OnFailure(0);
  EXPECT_TRUE(b.Allow(1000));
  b.OnFailure(1500);
  EXPECT_FALSE(b.Allow(2400));
  EXPECT_TRUE(b.Allow(2500));
  EXPECT_EQ(b.stats().opens, 1u) << "still the same outage";
}

TEST(CircuitBreakerTest, NeutralEndOfAProbeGivesItsTurnBack) {
  CircuitBreaker b({1, 1000});
  b.OnFailure(0);
  EXPECT_TRUE(b.Allow(1000));
  b.OnNeutral();  // e.g. cancelled
  EXPECT_TRUE(b.Allow(1001));
}

TEST(CircuitBreakerTest, ZeroFailuresIsOff) {
  CircuitBreaker b({0, 1000});
  for (int i = 0; i < 100; i++) b.OnFailure(0);
  EXPECT_TRUE(b.Allow(0));
  EXPECT_EQ(b.stats().opens, 0u);
}

}  // namespace
}  // namespace kvfs::s3
