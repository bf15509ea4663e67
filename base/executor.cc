#include "base/executor.h"

#include <utility>

namespace kvfs {

Executor::Executor(int threads, AtShutdown at_shutdown) : at_shutdown_(at_shutdown) {
  MutexLock l(&join_mu_);
  for (int i = 0; i < (threads < 1 ? 1 : threads); i++) threads_.emplace_back([this] { Run(); });
}

Executor::~Executor() { Shutdown(); }

bool Executor::Schedule(std::function<void()> task) {
  // Signal under the lock: the task may be the last one its owner waits for, and the owner may
  // destroy this executor as soon as it has run; the scheduler must be done with cv_ by then.
  MutexLock l(&mu_);
  if (stopping_) return false;
  tasks_.push_back(std::move(task));
  cv_.Signal();
  return true;
}

void Executor::Shutdown() {
  std::deque<std::function<void()>> dropped;  // destroyed without mu_ held: captures may lock
  {
    MutexLock l(&mu_);
    stopping_ = true;
    if (at_shutdown_ == kDropQueued) dropped.swap(tasks_);
  }
  cv_.SignalAll();
  MutexLock j(&join_mu_);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

size_t Executor::queued() const {
  MutexLock l(&mu_);
  return tasks_.size();
}

void Executor::Run() {
  MutexLock l(&mu_);
  for (;;) {
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing is left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    {
      MutexUnlock u(&mu_);
      task();
      task = nullptr;  // the closure's captures die here, without mu_ held
    }
  }
}

}  // namespace kvfs
