#include "fs/read/object_fetch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/crc32c.h"
#include "base/deadline.h"
#include "base/log.h"
#include "base/posix_io.h"

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
      checksum_known_(info_.crc32c.has_value() || !ctx.verify),
      slices_(info_.crc32c ? UsableSlices(info_.slice_crcs) : std::nullopt) {}

std::optional<SliceCrcs> ObjectFetch::UsableSlices(const std::optional<SliceCrcs>& s) const {
  if (!ctx_.verify || !s || !s->Fits(info_.size) || part_size_ % s->slice_size != 0) {
    return std::nullopt;
  }
  return s;
}

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
    ctx_.workers->Schedule([self = shared_from_this()] { self->Finish(); });
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
  bool sliced = false;
  Status mismatch;
  {
    MutexLock l(&mu_);
    sliced = slices_.has_value();
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
    LogError("read: {}", mismatch.ToString());
    ctx_.counters->verify_failures++;
    ctx_.counters->fetch_failures++;
    ctx_.owner->FetchFinished(key_, this);
    fill.Reset();  // never cached
    ctx_.counters->fetches_in_flight--;
    ctx_.owner->FetchDrained();
    return;
  }
  if (!expected) ctx_.counters->unverified++;
  if (expected && sliced) ctx_.counters->verified_by_slice++;
  Result<EntryRef> entry = fill.Commit(crc);
  if (!entry.ok()) {
    // The bytes are all in our fd, so open handles are unaffected; only later opens miss.
    LogWarn("read: {} downloaded but not cached: {}", key_, entry.status().ToString());
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

// ---------------------------------------------------------------------------------------------
// ObjectFetch's parts: which part goes out next and its ranged GET (Pump), the bytes of a part as
// they land in the cache file (OnBytes, OnInfo), and a part's end (CheckPart, OnPartDone). The
// download's start, end and the readers' waits are in object_fetch.cc.

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
          self->ctx_.workers->Schedule([self, part, progress, got = std::move(got)] {
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
  if (!progress->mode_known) {
    // This GET's reply has been seen (on_info runs before its first byte): the mode is settled.
    MutexLock l(&mu_);
    progress->mode_known = true;
    if (slices_) progress->slice_size = slices_->slice_size;
  }
  // Checksummed while the bytes are still in the CPU cache: slice by slice when checked so (a
  // part is whole slices), the part's CRC combined from theirs - one pass either way.
  std::vector<std::pair<size_t, uint32_t>> finished;  // (slice, its CRC)
  if (progress->slice_size == 0) {
    progress->crc = Crc32c(progress->crc, data, n);
  } else {
    const uint64_t slice = progress->slice_size;
    uint64_t pos = PartOffset(part) + progress->received;
    for (size_t done = 0; done < n;) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n - done, slice - pos % slice));
      progress->slice_crc = Crc32c(progress->slice_crc, data + done, take);
      done += take;
      pos += take;
      if (pos % slice == 0 || pos == info_.size) {
        finished.emplace_back((pos - 1) / slice, progress->slice_crc);
        progress->crc = Crc32cCombine(progress->crc, progress->slice_crc, (pos - 1) % slice + 1);
        progress->slice_crc = 0;
      }
    }
  }
  progress->received += n;
  ctx_.counters->bytes_from_store += n;
  MutexLock l(&mu_);
  if (progress->slice_size == 0) {
    have_[part] = progress->received;
  } else {
    KVFS_RETURN_IF_ERROR(CheckSlicesLocked(part, finished));
  }
  if (have_[part] >= wake_at_[part]) {
    wake_at_[part] = kNoWaiter;
    cv_.SignalAll();
  }
  return Status::OK();
}

Status ObjectFetch::CheckSlicesLocked(size_t part,
                                      const std::vector<std::pair<size_t, uint32_t>>& done) {
  for (const auto& [i, crc] : done) {
    const uint64_t off = i * slices_->slice_size;
    if (crc != slices_->crcs[i]) {
      Status st =
          Status::DataLoss("download of " + key_ + " does not match its checksum in " +
                           Range(off, slices_->SliceLength(i, info_.size)) + " (CRC32C " +
                           FormatCrc32c(crc) + ", recorded " + FormatCrc32c(slices_->crcs[i]) +
                           "): changed on the wire or in the store; not served");
      LogError("read: {}", st.ToString());
      ctx_.counters->verify_failures++;
      return st;  // the GET ends with it: the fetch fails (OnPartDone), have_ stays before it
    }
    have_[part] = std::min(info_.size, off + slices_->slice_size) - PartOffset(part);
  }
  return Status::OK();
}

void ObjectFetch::OnInfo(const ObjectInfo& info) {
  MutexLock l(&mu_);
  if (checksum_known_) return;
  checksum_known_ = true;
  expected_crc_ = info.crc32c;
  if (info.crc32c) slices_ = UsableSlices(info.slice_crcs);
}

bool ObjectFetch::HoldsBytesLocked() const {
  if (!ctx_.verify || verified_ || slices_) return false;
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
    LogWarn("read: download of {} failed: {}", key_, st.ToString());
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

bool ObjectFetch::Stored() const {
  MutexLock l(&mu_);
  return entry_.valid();
}

}  // namespace kvfs
