#include "fs/read/work_pool.h"

namespace kvfs {

WorkPool::WorkPool(int threads) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; i++) threads_.emplace_back([this] { Run(); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkPool::Post(std::function<void()> task) {
  // Notify under the lock: the task may be the last one its owner waits for, and the owner may
  // destroy this pool as soon as it has run; the poster must be done with cv_ by then.
  std::lock_guard<std::mutex> l(mu_);
  tasks_.push_back(std::move(task));
  cv_.notify_one();
}

void WorkPool::Run() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stop_ and drained
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    l.unlock();
    task();
    l.lock();
  }
}

}  // namespace kvfs
