#define FUSE_USE_VERSION 312
#include "fs/fuse/entry_invalidator.h"

#include <fuse_lowlevel.h>

namespace kvfs {

EntryInvalidator::EntryInvalidator(fuse_session* se) : se_(se), thread_([this] { Run(); }) {}

EntryInvalidator::~EntryInvalidator() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

void EntryInvalidator::Push(uint64_t parent, const std::string& name) {
  {
    MutexLock l(&mu_);
    queue_.emplace_back(parent, name);
  }
  cv_.SignalAll();
}

void EntryInvalidator::Run() {
  MutexLock l(&mu_);
  for (;;) {
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto [parent, name] = std::move(queue_.front());
    queue_.pop_front();
    MutexUnlock u(&mu_);
    fuse_lowlevel_notify_inval_entry(se_, parent, name.c_str(), name.size());
  }
}

}  // namespace kvfs
