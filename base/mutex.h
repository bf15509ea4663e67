// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with clang thread-safety
// annotations, so that GUARDED_BY / REQUIRES are checked by the compiler (-Wthread-safety in the
// clang CI build). libstdc++'s own types carry no annotations, so code locks through these.
//
//   Mutex mu_;
//   int n_ GUARDED_BY(mu_);
//   void F() EXCLUDES(mu_) { MutexLock l(&mu_); ++n_; }
//   void G() REQUIRES(mu_);
//   cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return n_ > 0; });   // with mu_ held
//
// Thread-safety: as std::mutex / std::condition_variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace kvfs {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds it (where the analysis cannot see that, e.g. lambdas).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// Releases a held Mutex for its scope (e.g. around a blocking call), then takes it again.
class SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex* mu) RELEASE(mu) : mu_(mu) { mu_->Unlock(); }
  // RELEASE(), not ACQUIRE(): clang ends a scoped capability with its destructor, which undoes
  // what the constructor did (here: takes mu again). ACQUIRE() makes clang 14 report "releasing
  // mutex that was not held" at the end of every MutexUnlock scope.
  ~MutexUnlock() RELEASE() { mu_->Lock(); }
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // Waits for one Signal/SignalAll (or a spurious wake-up); mu must be held. For loops that
  // re-check several conditions, or must act between wake-ups, where one predicate does not fit.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> l(mu->mu_, std::adopt_lock);
    cv_.wait(l);
    l.release();
  }
  // As Wait(mu), for at most `d` (spurious wake-ups too: the caller re-checks its conditions).
  template <typename Rep, typename Period>
  void WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> d) REQUIRES(mu) {
    std::unique_lock<std::mutex> l(mu->mu_, std::adopt_lock);
    cv_.wait_for(l, d);
    l.release();
  }
  // Waits until pred() holds; mu must be held (it is released while waiting).
  template <typename Pred>
  void Wait(Mutex* mu, Pred pred) REQUIRES(mu) {
    std::unique_lock<std::mutex> l(mu->mu_, std::adopt_lock);
    cv_.wait(l, pred);
    l.release();
  }
  // As Wait, but gives up at `deadline`; returns pred()'s final value.
  template <typename Clock, typename Duration, typename Pred>
  bool WaitUntil(Mutex* mu, std::chrono::time_point<Clock, Duration> deadline, Pred pred)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> l(mu->mu_, std::adopt_lock);
    bool ok = cv_.wait_until(l, deadline, pred);
    l.release();
    return ok;
  }
  template <typename Rep, typename Period, typename Pred>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> d, Pred pred) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + d, std::move(pred));
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace kvfs
