#include "src/health_check.h"

#include "objstore/object_store.h"

namespace kvfs {

HealthCheck::HealthCheck(std::shared_ptr<ObjectStore> store, std::chrono::milliseconds interval)
    : store_(std::move(store)), interval_(interval) {}

Status HealthCheck::Ready() {
  if (!mounted_.load()) return Status::Unavailable("not mounted");
  MutexLock l(&mu_);
  const auto now = std::chrono::steady_clock::now();
  if (!asked_at_ || now - *asked_at_ >= interval_) {
    answer_ = store_->CheckAccess();
    asked_at_ = std::chrono::steady_clock::now();
  }
  return answer_;
}

}  // namespace kvfs
