#include "fs/fuse/store_wait_pool.h"

#include <algorithm>
#include <utility>

#include "base/deadline.h"

namespace kvfs {

StoreWaitPool::StoreWaitPool(int threads) {
  for (int i = 0; i < std::max(1, threads); i++) threads_.emplace_back([this] { Worker(); });
}

StoreWaitPool::~StoreWaitPool() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  for (auto& t : threads_) t.join();
}

void StoreWaitPool::Submit(std::function<void()> run, std::function<void()> late) {
  Task t{ThreadDeadlineMs(), ThreadDeadlineSource(), std::move(run), std::move(late)};
  {
    MutexLock l(&mu_);
    queue_.push_back(std::move(t));
  }
  cv_.Signal();
}

void StoreWaitPool::Worker() {
  for (;;) {
    Task t;
    {
      MutexLock l(&mu_);
      cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing is left to answer
      t = std::move(queue_.front());
      queue_.pop_front();
    }
    if (t.deadline_ms == 0) {
      t.run();
      continue;
    }
    const int64_t left = t.deadline_ms - MonotonicMs();
    if (left <= 0) {
      t.late();
      continue;
    }
    const ScopedDeadline deadline(left, t.source);
    t.run();
  }
}

}  // namespace kvfs
