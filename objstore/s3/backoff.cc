#include "objstore/s3/backoff.h"

#include <algorithm>
#include <chrono>

namespace kvfs::s3 {
namespace {

class SteadyClock : public Clock {
 public:
  int64_t NowMs() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock* Clock::Real() {
  static SteadyClock* clock = new SteadyClock();
  return clock;
}

RetryPolicy::RetryPolicy(Options options, Clock* clock, std::function<uint64_t()> random)
    : options_(options), clock_(clock), random_(std::move(random)), rng_(std::random_device{}()) {}

int64_t RetryPolicy::BackoffMs(int retry) {
  const int shift = std::clamp(retry - 1, 0, 30);
  const int64_t cap = std::min<int64_t>(
      options_.max_ms, static_cast<int64_t>(std::max(options_.base_ms, 1)) << shift);
  if (cap <= 0) return 0;
  MutexLock lock(&mu_);
  const uint64_t r = random_ ? random_() : rng_();
  return static_cast<int64_t>(r % static_cast<uint64_t>(cap + 1));
}

std::optional<int64_t> RetryPolicy::NextDelayMs(const Status& error, int attempts_made,
                                                int64_t deadline_ms) {
  if (!error.retryable() || attempts_made >= options_.max_attempts) return std::nullopt;
  const int64_t delay = BackoffMs(attempts_made);
  if (clock_->NowMs() + delay >= deadline_ms) return std::nullopt;
  return delay;
}

}  // namespace kvfs::s3
