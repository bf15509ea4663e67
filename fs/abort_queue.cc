#include "fs/abort_queue.h"

#include <utility>

#include "base/deadline.h"
#include "base/log.h"

namespace kvfs {

AbortQueue::AbortQueue() = default;

AbortQueue::~AbortQueue() {
  stop_by_ms_ = MonotonicMs() + kAbortTimeoutMs;
  worker_.Shutdown();
  if (left_ > 0) {
    LogWarn(
        "kvfs: {} multipart upload(s) not aborted at unmount; the stale-upload clean-up aborts "
        "them later (stale_upload_age_secs)",
        left_.load());
  }
}

void AbortQueue::Abort(ObjectStore* store, std::string key, std::string upload_id) {
  worker_.Schedule([this, store, key = std::move(key), upload_id = std::move(upload_id)] {
    Run(store, key, upload_id);
  });
}

void AbortQueue::Run(ObjectStore* store, const std::string& key, const std::string& upload_id) {
  int64_t timeout_ms = kAbortTimeoutMs;
  if (const int64_t stop_by = stop_by_ms_; stop_by != 0) {
    timeout_ms = stop_by - MonotonicMs();
    if (timeout_ms <= 0) {
      left_++;
      return;
    }
  }
  const ScopedDeadline deadline(timeout_ms, "aborting a multipart upload",
                                ScopedDeadline::kReplace);
  Status st = store->AbortMultipartUpload(key, upload_id);
  if (!st.ok()) LogWarn("aborting the upload of {} failed: {}", key, st.ToString());
}

}  // namespace kvfs
