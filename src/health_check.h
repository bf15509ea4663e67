// HealthCheck: what a container's probes ask of a mount, answered on the metrics listener
// (`metrics_listen`) beside /metrics:
//   GET /healthz  liveness: 200 while the daemon answers at all (a hung or dead daemon does not).
//   GET /readyz   readiness: 200 once the file system is mounted and the store answered a
//                 request - CheckAccess: one LIST of at most one key, or the directory store's
//                 access check - within the last `interval`; 503 with the reason otherwise (not
//                 mounted yet or any more, wrong credentials, missing bucket, unreachable or
//                 failing store, circuit breaker open).
// The store is asked at most once per `interval`, whatever the probe period: a kubelet probing
// every few seconds costs one small request per interval.
//
// Thread-safe. Ready() blocks while it asks the store (bounded by the store's own timeouts);
// concurrent callers wait for that one answer.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "base/mutex.h"
#include "base/status.h"

namespace kvfs {

class ObjectStore;

class HealthCheck {
 public:
  static constexpr std::chrono::seconds kDefaultInterval{10};

  explicit HealthCheck(std::shared_ptr<ObjectStore> store,
                       std::chrono::milliseconds interval = kDefaultInterval);

  // Set when the kernel mount is up, cleared when it ends.
  void SetMounted(bool mounted) { mounted_.store(mounted); }

  // OK when ready; otherwise why not, for the probe's reply body.
  Status Ready() EXCLUDES(mu_);

 private:
  const std::shared_ptr<ObjectStore> store_;
  const std::chrono::milliseconds interval_;
  std::atomic<bool> mounted_{false};
  Mutex mu_;
  std::optional<std::chrono::steady_clock::time_point> asked_at_ GUARDED_BY(mu_);
  Status answer_ GUARDED_BY(mu_);
};

}  // namespace kvfs
