#include "fs/early_upload.h"

#include <algorithm>

#include "base/deadline.h"
#include "base/log.h"

namespace kvfs {
namespace {

// Out-of-order pieces remembered at most: an O_DIRECT write has a few dozen in flight; more means
// random writes, which an early upload cannot serve anyway.
constexpr size_t kMaxPending = 1024;

}  // namespace

EarlyUpload::EarlyUpload(ObjectStore* store, std::string key, int fd, uint64_t part_size,
                         int parallelism, AbortQueue* aborts, std::string user_xattrs)
    : store_(store),
      key_(std::move(key)),
      fd_(fd),
      part_size_(std::max<uint64_t>(part_size, 1)),
      parallelism_(std::max(parallelism, 1)),
      aborts_(aborts),
      user_xattrs_(std::move(user_xattrs)) {}

EarlyUpload::~EarlyUpload() {
  {
    MutexLock l(&shared_->mu);
    shared_->cv.Wait(&shared_->mu,
                     [this]() REQUIRES(shared_->mu) { return shared_->in_flight == 0; });
  }
  if (!finished_) Abort();
}

void EarlyUpload::Abort() {
  finished_ = true;
  if (upload_id_.empty()) return;
  // A request with a deadline (a close() under blocking_timeout) does not wait for the clean-up.
  if (aborts_ != nullptr && ThreadDeadlineMs() > 0) {
    aborts_->Abort(store_, key_, upload_id_);
    return;
  }
  // Runs after a request's blocking_timeout too (that is often why it aborts): the abort gets
  // its own bound, or it would fail at once and leave the parts behind.
  const ScopedDeadline cleanup(30'000, "aborting a multipart upload", ScopedDeadline::kReplace);
  Status st = store_->AbortMultipartUpload(key_, upload_id_);
  if (!st.ok()) LogWarn("aborting early upload of {} failed: {}", key_, st.ToString());
}

bool EarlyUpload::Usable(uint64_t size) const {
  if (!valid_ || finished_ || next_part_ == 0 || size < sent_end()) return false;
  MutexLock l(&shared_->mu);
  return shared_->error.ok();
}

void EarlyUpload::OnWrite(uint64_t offset, uint64_t n) {
  if (!valid_ || finished_) return;
  if (offset < sent_end()) {  // rewrites bytes already sent
    valid_ = false;
    return;
  }
  if (!AddWritten(offset, offset + n)) {
    valid_ = false;
    return;
  }
  const int whole = static_cast<int>(contiguous_ / part_size_);
  if (whole > next_part_) {
    Status st = SendParts(whole, contiguous_, /*wait=*/false);
    if (!st.ok()) {
      // Not an error of the write: close() uploads the normal way.
      LogDebug("early upload of {} given up: {}", key_, st.ToString());
      valid_ = false;
    }
  }
}

bool EarlyUpload::AddWritten(uint64_t start, uint64_t end) {
  if (end <= contiguous_) return true;
  if (start > contiguous_) {
    // Past a gap: merge into the remembered ranges it overlaps or touches.
    auto it = pending_.upper_bound(start);
    if (it != pending_.begin() && std::prev(it)->second >= start) {
      --it;
      start = it->first;
      end = std::max(end, it->second);
    }
    while (it != pending_.end() && it->first <= end) {
      end = std::max(end, it->second);
      it = pending_.erase(it);
    }
    pending_.emplace(start, end);
    return pending_.size() <= kMaxPending;
  }
  contiguous_ = end;
  // The gap may be filled now: take in the ranges that start inside the prefix.
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= contiguous_;) {
    contiguous_ = std::max(contiguous_, it->second);
    it = pending_.erase(it);
  }
  return true;
}

Status EarlyUpload::SendParts(int end, uint64_t size, bool wait) {
  if (upload_id_.empty()) {
    MultipartOptions opts;
    opts.user_xattrs = user_xattrs_;
    KVFS_ASSIGN_OR_RETURN(upload_id_, store_->CreateMultipartUpload(key_, opts));
  }
  while (next_part_ < end) {
    const int index = next_part_;
    {
      MutexLock l(&shared_->mu);
      if (wait) {
        shared_->cv.Wait(&shared_->mu, [this]() REQUIRES(shared_->mu) {
          return shared_->in_flight < parallelism_ || !shared_->error.ok();
        });
      } else if (shared_->in_flight >= parallelism_) {
        return Status::OK();  // the next write (or Complete) sends it
      }
      if (!shared_->error.ok()) return shared_->error;
      shared_->in_flight++;
      if (shared_->parts.size() <= static_cast<size_t>(index)) shared_->parts.resize(index + 1);
    }
    next_part_++;
    const uint64_t off = static_cast<uint64_t>(index) * part_size_;
    const uint64_t len = std::min(part_size_, size - off);
    std::shared_ptr<Shared> sh = shared_;
    store_->UploadPartAsync(key_, upload_id_, index + 1, Body::FromFile(fd_, off, len),
                            [sh, index](Result<std::string> etag) {
                              MutexLock l(&sh->mu);
                              if (etag.ok()) {
                                sh->parts[index] = CompletedPart{index + 1, *etag};
                              } else if (sh->error.ok()) {
                                sh->error = etag.status();
                              }
                              sh->in_flight--;
                              sh->cv.SignalAll();
                            });
  }
  return Status::OK();
}

Result<ObjectInfo> EarlyUpload::Complete(uint64_t size, bool conditional) {
  const int nparts = static_cast<int>((size + part_size_ - 1) / part_size_);
  Status st = SendParts(nparts, size, /*wait=*/true);
  std::vector<CompletedPart> parts;
  {
    MutexLock l(&shared_->mu);
    shared_->cv.Wait(&shared_->mu,
                     [this]() REQUIRES(shared_->mu) { return shared_->in_flight == 0; });
    if (st.ok()) st = shared_->error;
    parts = shared_->parts;
  }
  if (st.ok()) {
    PutOptions opts;
    opts.if_none_match = conditional;
    Result<ObjectInfo> r = store_->CompleteMultipartUpload(key_, upload_id_, parts, opts);
    if (r.ok()) {
      finished_ = true;
      if (r->size == 0) r->size = size;
      r->user_xattrs = user_xattrs_;  // given at creation; a completion does not say
      return r;
    }
    st = r.status();
  }
  Abort();
  return st;
}

}  // namespace kvfs
