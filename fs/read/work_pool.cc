#include "fs/read/work_pool.h"

namespace kvfs {

WorkPool::WorkPool(int threads) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; i++) threads_.emplace_back([this] { Run(); });
}

WorkPool::~WorkPool() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  for (auto& t : threads_) t.join();
}

void WorkPool::Post(std::function<void()> task) {
  // Notify under the lock: the task may be the last one its owner waits for, and the owner may
  // destroy this pool as soon as it has run; the poster must be done with cv_ by then.
  MutexLock l(&mu_);
  tasks_.push_back(std::move(task));
  cv_.Signal();
}

void WorkPool::Run() {
  MutexLock l(&mu_);
  for (;;) {
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stop_ and drained
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    MutexUnlock u(&mu_);
    task();
  }
}

}  // namespace kvfs
