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
#include "tests/src/gate.h"

namespace kvfs {

class GatedStore : public StoreWrapper {
 public:
  GatedStore() : StoreWrapper(NewMemoryStore()) {}
  ~GatedStore() override { Open(); }  // a CheckAccess still waiting ends

  // While closed, CheckAccess waits until Open().
  void Close() { gate_.Close(); }
  void Open() { gate_.Open(); }
  void SetAnswer(Status st) EXCLUDES(mu_) {
    MutexLock l(&mu_);
    answer_ = std::move(st);
  }
  int calls() const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return calls_;
  }
  // Whether a CheckAccess is waiting at the gate now.
  bool held() const { return gate_.waiting(); }

  Status CheckAccess() override EXCLUDES(mu_) {
    {
      MutexLock l(&mu_);
      ++calls_;
    }
    gate_.Pass();
    MutexLock l(&mu_);
    return answer_;
  }

 private:
  Gate gate_;
  mutable Mutex mu_;
  int calls_ GUARDED_BY(mu_) = 0;
  Status answer_ GUARDED_BY(mu_);
};

}  // namespace kvfs
