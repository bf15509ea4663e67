// Retry policy: a bounded number of attempts, exponential back-off with full jitter, and an
// overall deadline. Clock and random source are injectable so tests need no real time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"

namespace kvfs::s3 {

// Monotonic milliseconds. Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() = 0;
  static Clock* Real();  // steady_clock; never destroyed
};

// Thread-safe (the random source is guarded by a mutex).
class RetryPolicy {
 public:
  struct Options {
    int max_attempts = 5;  // attempts in total, >= 1
    int base_ms = 50;      // cap of the first back-off
    int max_ms = 5000;     // cap of any back-off
  };
  // `random` returns uniformly distributed 64-bit values; default: a seeded mt19937_64.
  RetryPolicy(Options options, Clock* clock, std::function<uint64_t()> random = nullptr);

  // Full jitter: uniform in [0, min(max_ms, base_ms * 2^(retry-1))], retry = 1 for the first.
  int64_t BackoffMs(int retry) EXCLUDES(mu_);

  // After attempt number `attempts_made` (1-based) failed with `error`: the delay before the next
  // attempt, or nullopt when the error is not retryable, the attempts are used up, or the next
  // attempt could not start before `deadline_ms` (Clock time).
  std::optional<int64_t> NextDelayMs(const Status& error, int attempts_made, int64_t deadline_ms)
      EXCLUDES(mu_);

  const Options& options() const { return options_; }
  Clock* clock() const { return clock_; }

 private:
  const Options options_;
  Clock* const clock_;
  Mutex mu_;
  std::function<uint64_t()> random_ GUARDED_BY(mu_);
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace kvfs::s3
