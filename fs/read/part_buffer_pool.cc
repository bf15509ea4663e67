#include "fs/read/part_buffer_pool.h"

#include <cstdlib>

namespace kvfs {

PartBufferPool::PartBufferPool(uint64_t buffer_size, size_t max_buffers)
    : buffer_size_(buffer_size), max_buffers_(max_buffers == 0 ? 1 : max_buffers) {}

PartBufferPool::~PartBufferPool() {
  for (char* b : free_) std::free(b);
}

char* PartBufferPool::Acquire(std::weak_ptr<BufferWaiter> waiter) {
  std::lock_guard<std::mutex> l(mu_);
  if (!free_.empty()) {
    char* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (allocated_ < max_buffers_) {
    // Page-aligned so the kernel copies whole pages on pwrite.
    char* b = static_cast<char*>(std::aligned_alloc(4096, (buffer_size_ + 4095) / 4096 * 4096));
    if (b != nullptr) {
      allocated_++;
      return b;
    }
  }
  waiters_.push_back(std::move(waiter));
  return nullptr;
}

void PartBufferPool::Release(char* buf) {
  // Wake every waiter, not one: a woken waiter may no longer need a buffer (finished, failed, or
  // queued twice), and a single wake-up handed to it would leave the others waiting forever. The
  // ones that find no buffer queue again.
  std::deque<std::weak_ptr<BufferWaiter>> wake;
  {
    std::lock_guard<std::mutex> l(mu_);
    free_.push_back(buf);
    wake.swap(waiters_);
  }
  for (auto& w : wake) {
    if (auto s = w.lock()) s->OnBufferAvailable();
  }
}

size_t PartBufferPool::allocated() const {
  std::lock_guard<std::mutex> l(mu_);
  return allocated_;
}

}  // namespace kvfs
