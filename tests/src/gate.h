// Gate: a point test threads wait at until the test opens it - how the health-check and
// metrics-server tests hold a store request (GatedStore) or a render (a slow /metrics) the way a
// stopped RGW holds one.
//
// Thread-safe.
#pragma once

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace kvfs {

class Gate {
 public:
  ~Gate() { Open(); }

  // While closed, Pass() waits until Open().
  void Close() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    open_ = false;
  }
  void Open() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    open_ = true;
    cv_.SignalAll();
  }
  void Pass() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    ++waiting_;
    cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return open_; });
    --waiting_;
  }
  // Whether a thread is waiting in Pass() now.
  bool waiting() const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return waiting_ > 0;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool open_ GUARDED_BY(mu_) = true;
  int waiting_ GUARDED_BY(mu_) = 0;
};

}  // namespace kvfs
