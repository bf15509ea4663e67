// PartBufferPool: the memory of the read path. A ranged GET of a miss lands in one of these
// buffers before it is written to the cache file, so the bytes held by downloads never exceed
// max_buffers x buffer_size, however many objects are being fetched. Buffers are allocated on
// first use and reused. When none is free, the asker is queued and called back when a buffer
// is released, so it can retry.
//
// Thread-safe. mu_ is a leaf lock; waiters are called after it is released.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "src/base/thread_annotations.h"

namespace kvfs {

class BufferWaiter {
 public:
  virtual ~BufferWaiter() = default;
  // A buffer was released: try Acquire again. Called on the releasing thread, no lock held.
  virtual void OnBufferAvailable() = 0;
};

class PartBufferPool {
 public:
  PartBufferPool(uint64_t buffer_size, size_t max_buffers);
  ~PartBufferPool();

  uint64_t buffer_size() const { return buffer_size_; }
  // A buffer of buffer_size() bytes, or nullptr after queueing `waiter` for the next release.
  char* Acquire(std::weak_ptr<BufferWaiter> waiter) EXCLUDES(mu_);
  void Release(char* buf) EXCLUDES(mu_);
  size_t allocated() const EXCLUDES(mu_);

 private:
  const uint64_t buffer_size_;
  const size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<char*> free_ GUARDED_BY(mu_);
  size_t allocated_ GUARDED_BY(mu_) = 0;
  std::deque<std::weak_ptr<BufferWaiter>> waiters_ GUARDED_BY(mu_);
};

}  // namespace kvfs
