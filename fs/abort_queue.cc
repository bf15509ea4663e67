#include "fs/abort_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "base/deadline.h"

namespace kvfs {

AbortQueue::AbortQueue() : thread_([this] { Worker(); }) {}

AbortQueue::~AbortQueue() {
  {
    MutexLock l(&mu_);
    stop_by_ms_ = MonotonicMs() + kAbortTimeoutMs;
  }
  cv_.SignalAll();
  thread_.join();
}

void AbortQueue::Abort(ObjectStore* store, std::string key, std::string upload_id) {
  {
    MutexLock l(&mu_);
    queue_.push_back(Job{store, std::move(key), std::move(upload_id)});
  }
  cv_.SignalAll();
}

void AbortQueue::Worker() {
  for (;;) {
    Job job;
    int64_t timeout_ms = kAbortTimeoutMs;
    {
      MutexLock l(&mu_);
      cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return stop_by_ms_ != 0 || !queue_.empty(); });
      if (queue_.empty()) return;
      if (stop_by_ms_ != 0) {
        timeout_ms = stop_by_ms_ - MonotonicMs();
        if (timeout_ms <= 0) {
          spdlog::warn(
              "kvfs: {} multipart upload(s) not aborted at unmount; the stale-upload "
              "clean-up aborts them later (stale_upload_age_secs)",
              queue_.size());
          queue_.clear();
          return;
        }
      }
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const ScopedDeadline deadline(timeout_ms, "aborting a multipart upload",
                                  ScopedDeadline::kReplace);
    Status st = job.store->AbortMultipartUpload(job.key, job.upload_id);
    if (!st.ok()) spdlog::warn("aborting the upload of {} failed: {}", job.key, st.ToString());
  }
}

}  // namespace kvfs
