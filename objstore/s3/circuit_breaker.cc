#include "objstore/s3/circuit_breaker.h"

namespace kvfs::s3 {

bool CircuitBreaker::Allow(int64_t now_ms, int64_t* retry_in_ms) {
  if (options_.failures <= 0) return true;
  MutexLock l(&mu_);
  if (!open_) return true;
  if (now_ms >= open_until_ms_ && !probe_out_) {
    probe_out_ = true;  // half-open: this attempt is the probe
    return true;
  }
  rejected_++;
  if (retry_in_ms != nullptr) {
    *retry_in_ms = now_ms < open_until_ms_ ? open_until_ms_ - now_ms : 0;
  }
  return false;
}

void CircuitBreaker::OnSuccess() {
  if (options_.failures <= 0) return;
  MutexLock l(&mu_);
  consecutive_ = 0;
  open_ = false;
  probe_out_ = false;
}

void CircuitBreaker::OnFailure(int64_t now_ms) {
  if (options_.failures <= 0) return;
  MutexLock l(&mu_);
  if (open_) {
    // The probe failed (or an attempt sent before the breaker opened): wait another cool-down.
    if (probe_out_ || now_ms >= open_until_ms_) OpenLocked(now_ms);
    return;
  }
  if (++consecutive_ >= options_.failures) OpenLocked(now_ms);
}

void CircuitBreaker::OnNeutral() {
  if (options_.failures <= 0) return;
  MutexLock l(&mu_);
  probe_out_ = false;
}

void CircuitBreaker::OpenLocked(int64_t now_ms) {
  if (!open_) opens_++;
  open_ = true;
  probe_out_ = false;
  open_until_ms_ = now_ms + options_.cooldown_ms;
}

CircuitBreaker::Stats CircuitBreaker::stats() const {
  MutexLock l(&mu_);
  return Stats{opens_, rejected_, open_};
}

}  // namespace kvfs::s3
