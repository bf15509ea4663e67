// AbortQueue: aborts multipart uploads on a thread of its own, so that a close() that gave up on
// its upload (blocking_timeout passed, a rejected or abandoned chunk) returns without waiting for
// the clean-up. An abort only frees the parts already stored; nothing is visible either way, and
// an upload whose abort fails or never runs is aborted later by the stale-upload clean-up
// (stale_upload_age_secs).
//
// Each abort runs under its own deadline (kAbortTimeoutMs), never the closing request's, which has
// often passed already. The destructor (unmount) runs what is queued within one kAbortTimeoutMs
// in all, then leaves the rest.
//
// Thread-safe. Every store given to Abort must outlive the queue.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/executor.h"
#include "objstore/object_store.h"

namespace kvfs {

class AbortQueue {
 public:
  static constexpr int64_t kAbortTimeoutMs = 30'000;

  AbortQueue();
  ~AbortQueue();
  AbortQueue(const AbortQueue&) = delete;
  AbortQueue& operator=(const AbortQueue&) = delete;

  // Queues the abort of `upload_id` (of `key`) on `store`; returns at once.
  void Abort(ObjectStore* store, std::string key, std::string upload_id);

 private:
  void Run(ObjectStore* store, const std::string& key, const std::string& upload_id);

  std::atomic<int64_t> stop_by_ms_{0};  // MonotonicMs; set when stopping
  std::atomic<int> left_{0};            // aborts skipped at unmount (stop_by_ms_ passed)
  Executor worker_{1};                  // last: runs what is queued before the members go
};

}  // namespace kvfs
