#include "src/health_check.h"

#include <cstdio>
#include <string>

#include "base/deadline.h"
#include "objstore/object_store.h"

namespace kvfs {
namespace {

std::string Seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

HealthCheck::HealthCheck(std::shared_ptr<ObjectStore> store, std::chrono::milliseconds interval,
                         std::chrono::milliseconds stall_bound)
    : store_(std::move(store)), interval_(interval), stall_bound_(stall_bound) {}

// Explicit, though member order does the same: the running check must end before anything else
// of this object goes away.
HealthCheck::~HealthCheck() { checker_.Shutdown(); }

void HealthCheck::SetMounted(bool mounted) {
  MutexLock l(&mu_);
  mounted_ = mounted;
  // Asked now, so that the first probe after the mount finds an answer rather than rule 3.
  if (mounted && !answered_at_) StartCheckLocked(Clock::now());
}

Status HealthCheck::Ready() {
  const auto now = Clock::now();
  MutexLock l(&mu_);
  if (!mounted_) return Status::Unavailable("not mounted");
  if (check_started_) {
    const auto waiting = now - *check_started_;
    if (waiting >= stall_bound_) {
      return Status::Unavailable("the store has not answered for " + Seconds(waiting) +
                                 " (CheckAccess outstanding; the bound is " +
                                 Seconds(stall_bound_) + ")");
    }
  } else if (!answered_at_ || now - *answered_at_ >= interval_) {
    StartCheckLocked(now);
  }
  if (!answered_at_) return Status::Unavailable("the store has not answered yet (first check)");
  return answer_;
}

void HealthCheck::StartCheckLocked(Clock::time_point now) {
  if (check_started_) return;
  // False only once the destructor has begun: then nobody asks any more.
  if (checker_.Schedule([this] { RunCheck(); })) check_started_ = now;
}

void HealthCheck::RunCheck() {
  Status st;
  {
    // The S3 client's retries stop at it: one check per interval at most, even when stalled.
    ScopedDeadline deadline(interval_.count(),
                            "the health check's interval (" + Seconds(interval_) + ")");
    st = store_->CheckAccess();
  }
  MutexLock l(&mu_);
  answer_ = std::move(st);
  answered_at_ = Clock::now();
  check_started_.reset();
}

}  // namespace kvfs
