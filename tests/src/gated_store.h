// GatedStore: an in-memory store whose CheckAccess can be held until the test opens the gate, as a
// stopped RGW holds a request (it ignores deadlines, as a hung NFS directory would). Used by the
// health-check and metrics-server tests.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <memory>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "objstore/store_wrapper.h"
#include "tests/fakes/memory_store.h"

namespace kvfs {

class GatedStore : public StoreWrapper {
 public:
  GatedStore() : StoreWrapper(NewMemoryStore()) {}
  ~GatedStore() override { Open(); }

  // While closed, CheckAccess waits until Open().
  void Close() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    open_ = false;
  }
  void Open() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    open_ = true;
    cv_.SignalAll();
  }
  void SetAnswer(Status st) EXCLUDES(mu_) {
    MutexLock l(&mu_);
    answer_ = std::move(st);
  }
  int calls() const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return calls_;
  }
  // Whether a CheckAccess is waiting at the gate now.
  bool held() const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return held_ > 0;
  }

  Status CheckAccess() override EXCLUDES(mu_) {
    MutexLock l(&mu_);
    ++calls_;
    ++held_;
    cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return open_; });
    --held_;
    return answer_;
  }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  bool open_ GUARDED_BY(mu_) = true;
  int calls_ GUARDED_BY(mu_) = 0;
  int held_ GUARDED_BY(mu_) = 0;
  Status answer_ GUARDED_BY(mu_);
};

}  // namespace kvfs
