// ObjectFetch's parts: which part goes out next and its ranged GET (Pump), the bytes of a part as
// they land in the cache file (OnBytes, OnInfo), and a part's end (CheckPart, OnPartDone). The
// download's start, end and the readers' waits are in object_fetch.cc.
#include <spdlog/spdlog.h>

#include <cerrno>

#include "base/crc32c.h"
#include "base/posix_io.h"
#include "fs/read/object_fetch.h"

namespace kvfs {
namespace {

std::string Range(uint64_t off, uint64_t len) {
  return "bytes " + std::to_string(off) + "-" + std::to_string(off + len - 1);
}

}  // namespace

size_t ObjectFetch::NextPartLocked() {
  while (!urgent_.empty()) {
    size_t p = urgent_.front();
    urgent_.pop_front();
    if (parts_[p] == PartState::kPending) return p;
  }
  while (next_ < nparts_ && parts_[next_] != PartState::kPending) next_++;
  return next_ < nparts_ ? next_ : kNone;
}

void ObjectFetch::Pump() {
  for (;;) {
    size_t part = kNone;
    GetRequest req;
    req.key = key_;
    req.if_match = info_.etag;
    req.on_info = [self = shared_from_this()](const ObjectInfo& i) { self->OnInfo(i); };
    {
      MutexLock l(&mu_);
      if (state_ != State::kRunning) return;
      if (probe_ && !probe_issued_) {
        probe_issued_ = true;
        part = nparts_;
        req.offset = info_.size;
        req.length = 1;
      } else {
        if (inflight_ >= ctx_.max_parallel_parts) return;
        part = NextPartLocked();
        if (part == kNone) return;
        parts_[part] = PartState::kInFlight;
        req.offset = PartOffset(part);
        req.length = PartLength(part);
      }
      inflight_++;
    }
    ctx_.counters->parts_in_flight++;
    ctx_.counters->get_requests++;
    auto progress = std::make_shared<PartProgress>();
    auto self = shared_from_this();
    ctx_.store->GetStreamAsync(
        req,
        [self, part, progress](const char* data, size_t n) {
          return self->OnBytes(part, progress.get(), data, n);
        },
        // Runs on the store's I/O thread (or inline): the rest happens on a worker.
        [self, part, progress](Result<uint64_t> got) {
          self->ctx_.workers->Post([self, part, progress, got = std::move(got)] {
            self->OnPartDone(part, *progress, got);
          });
        });
  }
}

Status ObjectFetch::OnBytes(size_t part, PartProgress* progress, const char* data, size_t n) {
  if (stopped_.load(std::memory_order_relaxed)) {
    return Status::Cancelled("download of " + key_ + " stopped");
  }
  if (part == nparts_) {  // the probe past the end: only counted
    progress->received += n;
    return Status::OK();
  }
  KVFS_RETURN_IF_ERROR(
      PwriteFull(fd_, data, n, PartOffset(part) + progress->received, "cache fill of " + key_));
  progress->crc = Crc32c(progress->crc, data, n);  // the bytes are still in the CPU cache
  progress->received += n;
  ctx_.counters->bytes_from_store += n;
  MutexLock l(&mu_);
  have_[part] = progress->received;
  if (progress->received >= wake_at_[part]) {
    wake_at_[part] = kNoWaiter;
    cv_.SignalAll();
  }
  return Status::OK();
}

void ObjectFetch::OnInfo(const ObjectInfo& info) {
  MutexLock l(&mu_);
  if (checksum_known_) return;
  checksum_known_ = true;
  expected_crc_ = info.crc32c;
}

bool ObjectFetch::HoldsBytesLocked() const {
  if (!ctx_.verify || verified_) return false;
  // Not known yet: no GET has answered, so no byte has arrived either.
  return !checksum_known_ || expected_crc_.has_value();
}

Status ObjectFetch::CheckPart(size_t part, const Result<uint64_t>& got) const {
  if (part == nparts_) {  // the probe past the end
    if (!got.ok()) return got.status().Annotate("GET " + key_ + " past its listed end");
    if (*got != 0) {
      return ObjectSizeChanged(key_, info_.size, "GET past its end returned bytes");
    }
    return Status::OK();
  }
  const uint64_t off = PartOffset(part);
  const uint64_t len = PartLength(part);
  if (!got.ok()) return got.status().Annotate("GET " + key_ + " " + Range(off, len));
  if (*got != len) {
    return ObjectSizeChanged(
        key_, info_.size,
        "GET " + Range(off, len) + " returned " + std::to_string(*got) + " bytes");
  }
  return Status::OK();
}

void ObjectFetch::OnPartDone(size_t part, const PartProgress& progress, Result<uint64_t> got) {
  ctx_.counters->parts_in_flight--;
  bool failed_now = false, finish = false, drained = false;
  Status st;
  FillRef to_drop;
  {
    MutexLock l(&mu_);
    inflight_--;
    // After a failure the remaining parts are only drained: their bytes are not wanted.
    if (state_ == State::kRunning) st = CheckPart(part, got);
    if (state_ == State::kRunning) {
      if (!st.ok()) {
        state_ = State::kFailed;
        error_ = st;
        stopped_ = true;
        to_drop = std::move(fill_);
        failed_now = true;
      } else if (part == nparts_) {
        probe_done_ = true;
      } else {
        parts_[part] = PartState::kDone;
        part_crc_[part] = progress.crc;
        done_++;
      }
      if (state_ == State::kRunning && done_ == nparts_ && (!probe_ || probe_done_)) {
        state_ = State::kComplete;
        finish = true;
      }
    }
    drained = DrainedLocked();
    cv_.SignalAll();
  }
  if (failed_now) {
    spdlog::warn("read: download of {} failed: {}", key_, st.ToString());
    ctx_.counters->fetch_failures++;
    ctx_.owner->FetchFinished(key_, this);
    to_drop.Reset();  // drop the partial fill now so a new Open can start afresh
    MutexLock l(&mu_);
    fill_dropped_ = true;
    drained = DrainedLocked();
  }
  if (finish) {
    Finish();
  } else if (drained) {
    ctx_.counters->fetches_in_flight--;
    ctx_.owner->FetchDrained();
  } else {
    Pump();
  }
}

}  // namespace kvfs
