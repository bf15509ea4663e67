#include "fs/read/object_fetch.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/crc32c.h"
#include "base/deadline.h"

namespace kvfs {
ObjectFetch::ObjectFetch(const FetchContext& ctx, std::string key, ObjectInfo info)
    : ctx_(ctx),
      key_(std::move(key)),
      info_(std::move(info)),
      part_size_(std::max<uint64_t>(ctx.part_size, 1)),
      nparts_((info_.size + part_size_ - 1) / part_size_),
      probe_(info_.etag.empty()),
      parts_(nparts_, PartState::kPending),
      have_(nparts_, 0),
      wake_at_(nparts_, kNoWaiter),
      part_crc_(nparts_, 0),
      expected_crc_(info_.crc32c),
      checksum_known_(info_.crc32c.has_value() || !ctx.verify) {}

ObjectFetch::~ObjectFetch() {
  if (fd_ >= 0) close(fd_);
}

bool ObjectFetch::Matches(const ObjectInfo& info) const {
  return info.size == info_.size &&
         (info.etag.empty() || info_.etag.empty() || info.etag == info_.etag);
}

uint64_t ObjectFetch::PartLength(size_t p) const {
  return std::min(part_size_, info_.size - PartOffset(p));
}

void ObjectFetch::Start(FillRef fill) {
  int fd = fcntl(fill.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    Abandon(Status::FromErrno(errno, "dup of cache fill fd for " + key_));
    return;
  }
  bool finish = false;
  {
    MutexLock l(&mu_);
    fd_ = fd;
    fill_ = std::move(fill);
    state_ = State::kRunning;
    if (nparts_ == 0 && !probe_) {
      state_ = State::kComplete;
      finish = true;
    }
    cv_.SignalAll();
  }
  ctx_.counters->fetches_in_flight++;
  if (finish) {
    ctx_.workers->Post([self = shared_from_this()] { self->Finish(); });
  } else {
    Pump();
  }
}

void ObjectFetch::Abandon(Status st) {
  MutexLock l(&mu_);
  state_ = State::kAbandoned;
  error_ = std::move(st);
  cv_.SignalAll();
}

Status ObjectFetch::WaitStarted() {
  MutexLock l(&mu_);
  cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return state_ != State::kStarting; });
  return state_ == State::kAbandoned ? error_ : Status::OK();
}

bool ObjectFetch::DrainedLocked() {
  // A failed fetch is drained when no GET is outstanding and its partial fill is gone; reported
  // once, by whichever thread sees it last.
  if (state_ != State::kFailed || inflight_ != 0 || !fill_dropped_ || drained_) return false;
  drained_ = true;
  return true;
}

void ObjectFetch::Finish() {
  uint32_t crc = 0;
  FillRef fill;
  std::optional<uint32_t> expected;
  Status mismatch;
  {
    MutexLock l(&mu_);
    for (size_t p = 0; p < nparts_; p++) crc = Crc32cCombine(crc, part_crc_[p], PartLength(p));
    fill = std::move(fill_);
    expected = ctx_.verify ? expected_crc_ : std::nullopt;
    if (expected && *expected != crc) {
      state_ = State::kFailed;
      error_ = Status::DataLoss("download of " + key_ + " does not match its checksum (CRC32C " +
                                FormatCrc32c(crc) + ", recorded " + FormatCrc32c(*expected) +
                                "): changed on the wire or in the store; not served");
      mismatch = error_;
      stopped_ = true;
      drained_ = true;  // no GET is outstanding after the last part
    } else {
      verified_ = true;
    }
    cv_.SignalAll();
  }
  if (!mismatch.ok()) {
    spdlog::error("read: {}", mismatch.ToString());
    ctx_.counters->verify_failures++;
    ctx_.counters->fetch_failures++;
    ctx_.owner->FetchFinished(key_, this);
    fill.Reset();  // never cached
    ctx_.counters->fetches_in_flight--;
    ctx_.owner->FetchDrained();
    return;
  }
  if (!expected) ctx_.counters->unverified++;
  Result<EntryRef> entry = fill.Commit(crc);
  if (!entry.ok()) {
    // The bytes are all in our fd, so open handles are unaffected; only later opens miss.
    spdlog::warn("read: {} downloaded but not cached: {}", key_, entry.status().ToString());
  } else {
    MutexLock l(&mu_);
    entry_ = std::move(entry).value();
  }
  ctx_.owner->FetchFinished(key_, this);
  ctx_.counters->fetches_in_flight--;
  ctx_.owner->FetchDrained();
}

bool ObjectFetch::WouldWait(uint64_t offset, uint64_t length) const {
  MutexLock l(&mu_);
  if (state_ == State::kFailed || state_ == State::kAbandoned) {
    return error_.code() == StatusCode::kNoSpace;
  }
  if (state_ == State::kStarting || HoldsBytesLocked()) return true;
  if (length == 0 || offset >= info_.size) return false;
  const uint64_t end = std::min(info_.size, offset + length);
  for (size_t p = offset / part_size_; p <= (end - 1) / part_size_; p++) {
    const uint64_t need = std::min(end, PartOffset(p) + PartLength(p)) - PartOffset(p);
    if (have_[p] < need) return true;
  }
  return false;
}

Status ObjectFetch::WaitFor(uint64_t offset, uint64_t length) {
  if (length == 0 || offset >= info_.size) return WaitStarted();
  const uint64_t end = std::min(info_.size, offset + length);
  const size_t first = offset / part_size_;
  const size_t last = (end - 1) / part_size_;
  MutexLock l(&mu_);
  bool want = false;
  for (size_t p = first; p <= last; p++) {
    if (parts_[p] == PartState::kPending) {
      urgent_.push_back(p);
      want = true;
    }
  }
  if (want && state_ == State::kRunning) {
    MutexUnlock u(&mu_);
    Pump();
  }
  // A reader with a deadline (a FUSE request's blocking_timeout) stops waiting at it; the download
  // goes on for the others.
  const int64_t deadline = ThreadDeadlineMs();
  auto wait = [&]() REQUIRES(mu_) {
    if (deadline == 0) {
      cv_.Wait(&mu_);
      return true;
    }
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) return false;
    cv_.WaitFor(&mu_, std::chrono::milliseconds(left));
    return true;
  };
  const auto late = [&] {
    return Status::DeadlineExceeded("reading " + key_ + ": the bytes did not arrive within " +
                                    ThreadDeadlineSource());
  };
  for (;;) {
    if (state_ == State::kFailed || state_ == State::kAbandoned) return error_;
    if (state_ == State::kStarting) {
      if (!wait()) return late();
      continue;
    }
    bool ready = true;
    for (size_t p = first; p <= last; p++) {
      // Bytes of part p this read needs, counted from the part's start.
      const uint64_t need = std::min(end, PartOffset(p) + PartLength(p)) - PartOffset(p);
      if (have_[p] < need) {
        ready = false;
        wake_at_[p] = std::min(wake_at_[p], need);
      }
    }
    if (ready && !HoldsBytesLocked()) return Status::OK();
    if (!wait()) return late();
  }
}

}  // namespace kvfs
