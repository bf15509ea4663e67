// HealthCheck: what a container's probes ask of a mount, answered on the metrics listener
// (`metrics_listen`) beside /metrics:
//   GET /healthz  liveness: 200 while the daemon answers at all (a hung or dead daemon does not).
//                 It never looks at the store: a stalled store is no reason to restart kvfs.
//   GET /readyz   readiness: 200 once the file system is mounted and the store's last answer to
//                 CheckAccess (one LIST of at most one key, or the directory store's access check)
//                 was OK; 503 with the reason otherwise (not mounted yet or any more, wrong
//                 credentials, missing bucket, unreachable or failing store, circuit breaker open,
//                 or a check that is taking too long).
//
// Ready() never waits on the store: the store is asked on HealthCheck's own thread, and Ready()
// answers at once from what is known, by these rules, in this order:
//   1. not mounted                                      -> "not mounted";
//   2. a check has been outstanding for >= stall_bound  -> "the store has not answered for N s";
//   3. no check has answered yet since construction     -> "the store has not answered yet";
//   4. otherwise                                        -> the last check's answer.
// A check starts when the mount comes up (SetMounted(true)) and when Ready() finds the last
// answer `interval` old or older with none outstanding - so the store is asked at most once per
// `interval`, whatever the probe period (a kubelet probing every few seconds costs one small
// request per interval), and not at all while nobody probes. The answer Ready() gives under rule
// 4 is therefore as old as `interval` plus the time since the previous Ready() (probes every
// `interval` or faster: at most two intervals). Each check runs under a deadline of `interval`
// (base/deadline.h), so the S3 store gives up on it by the time the next one would be due and at
// most one is outstanding; a store that ignores deadlines (a directory on a hung NFS server) keeps
// its one check outstanding, and rule 2 answers until it returns.
//
// Thread-safe. Ready() and SetMounted() hold mu_ only for a few field reads and writes; the store
// runs on the checker thread with no lock held. The destructor waits for a check in progress
// (with the S3 store: at most `interval`, its deadline).
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "base/executor.h"
#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"

namespace kvfs {

class ObjectStore;

class HealthCheck {
 public:
  static constexpr std::chrono::seconds kDefaultInterval{10};
  // A LIST of one key takes milliseconds; five seconds without an answer is a store in trouble,
  // and well inside the readiness probe's 10 s period (docs/kubernetes.md).
  static constexpr std::chrono::seconds kDefaultStallBound{5};

  explicit HealthCheck(std::shared_ptr<ObjectStore> store,
                       std::chrono::milliseconds interval = kDefaultInterval,
                       std::chrono::milliseconds stall_bound = kDefaultStallBound);
  ~HealthCheck();
  HealthCheck(const HealthCheck&) = delete;
  HealthCheck& operator=(const HealthCheck&) = delete;

  // Set when the kernel mount is up (which starts the first check), cleared when it ends.
  void SetMounted(bool mounted) EXCLUDES(mu_);

  // OK when ready; otherwise why not, for the probe's reply body. Never blocks on the store.
  Status Ready() EXCLUDES(mu_);

 private:
  using Clock = std::chrono::steady_clock;

  // Schedules one check on checker_ unless one is outstanding.
  void StartCheckLocked(Clock::time_point now) REQUIRES(mu_);
  void RunCheck() EXCLUDES(mu_);  // on checker_

  const std::shared_ptr<ObjectStore> store_;
  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds stall_bound_;

  Mutex mu_;
  bool mounted_ GUARDED_BY(mu_) = false;
  std::optional<Clock::time_point> check_started_ GUARDED_BY(mu_);  // the check outstanding
  std::optional<Clock::time_point> answered_at_ GUARDED_BY(mu_);    // the last check's end
  Status answer_ GUARDED_BY(mu_);                                   // and its answer
  // Last: destroyed first, so a running check still finds the fields above. One thread: checks
  // never overlap (StartCheckLocked), and a queued one is pointless once the owner goes away.
  Executor checker_{1, Executor::kDropQueued};
};

}  // namespace kvfs
