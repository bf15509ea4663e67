#include "fs/write_back.h"

#include <algorithm>
#include <string>

#include "base/deadline.h"

namespace kvfs {

WriteBack::WriteBack(int uploads, uint64_t max_bytes, int64_t max_age_ms)
    : max_bytes_(max_bytes), max_age_ms_(max_age_ms), pool_(uploads), helpers_(kHelperThreads) {}

WriteBack::~WriteBack() { Drain(); }

bool WriteBack::RoomFor(uint64_t bytes) const {
  if (pending_ == 0) return true;  // one chunk alone may pass either bound
  if (pending_bytes_ + bytes > max_bytes_) return false;
  return max_age_ms_ <= 0 || since_.empty() || MonotonicMs() - *since_.begin() <= max_age_ms_;
}

void WriteBack::PublishGaugesLocked() {
  counters_.pending.store(pending_);
  counters_.pending_bytes.store(pending_bytes_);
}

Status WriteBack::Reserve(uint64_t bytes) {
  MutexLock l(&mu_);
  if (!RoomFor(bytes)) {
    ++counters_.waits;
    const int64_t deadline = ThreadDeadlineMs();
    // Woken by each upload's end; the age bound also needs the clock, so it looks once a second.
    while (!RoomFor(bytes)) {
      const int64_t now = MonotonicMs();
      if (deadline > 0 && now >= deadline) {
        const bool old = max_age_ms_ > 0 && !since_.empty() && now - *since_.begin() > max_age_ms_;
        return Status::DeadlineExceeded(
            old ? "write-back: the oldest of " + std::to_string(pending_) +
                      " chunk(s) accepted at close() has waited " +
                      std::to_string((now - *since_.begin()) / 1000) +
                      " s for the store (write_back_max_age " + std::to_string(max_age_ms_ / 1000) +
                      " s): no more are taken until it is stored (" + ThreadDeadlineSource() + ")"
                : "write-back: " + std::to_string(pending_bytes_) +
                      " bytes accepted at close() still wait for the store (write_back_bytes " +
                      std::to_string(max_bytes_) + ") (" + ThreadDeadlineSource() + ")");
      }
      const int64_t step = deadline > 0 ? std::min<int64_t>(deadline - now, 1000) : 1000;
      room_.WaitFor(&mu_, std::chrono::milliseconds(step));
    }
  }
  pending_bytes_ += bytes;
  ++pending_;
  PublishGaugesLocked();
  return Status::OK();
}

void WriteBack::Unreserve(uint64_t bytes) {
  MutexLock l(&mu_);
  pending_bytes_ -= bytes;
  --pending_;
  PublishGaugesLocked();
  room_.SignalAll();
}

void WriteBack::Submit(uint64_t bytes, std::function<Ending()> upload) {
  int64_t since;
  {
    MutexLock l(&mu_);
    since = MonotonicMs();
    since_.insert(since);
  }
  ++counters_.queued;
  pool_.Schedule([this, bytes, since, upload = std::move(upload)]() mutable {
    const Ending ending = upload();
    upload = nullptr;  // what it holds (the file, its spool) goes before Drain() can return
    ++(ending == Ending::kStored   ? counters_.uploaded
       : ending == Ending::kFailed ? counters_.failed
                                   : counters_.kept);
    // Signal under the lock: Drain's caller may destroy this queue as soon as it sees zero.
    MutexLock l(&mu_);
    since_.erase(since_.find(since));
    pending_bytes_ -= bytes;
    --pending_;
    PublishGaugesLocked();
    room_.SignalAll();
  });
}

WriteBackStats WriteBack::Stats() const {
  WriteBackStats s = counters_.Snapshot();
  MutexLock l(&mu_);
  s.oldest_pending_ms = since_.empty() ? 0 : static_cast<uint64_t>(MonotonicMs() - *since_.begin());
  return s;
}

void WriteBack::Post(std::function<void()> task) {
  {
    MutexLock l(&mu_);
    ++posted_;
  }
  helpers_.Schedule([this, task = std::move(task)] {
    task();
    MutexLock l(&mu_);
    --posted_;
    room_.SignalAll();
  });
}

void WriteBack::Drain() {
  MutexLock l(&mu_);
  room_.Wait(&mu_, [this]() REQUIRES(mu_) { return pending_ == 0 && posted_ == 0; });
}

bool WriteBack::DrainFor(std::chrono::milliseconds limit) {
  MutexLock l(&mu_);
  return room_.WaitFor(&mu_, limit,
                       [this]() REQUIRES(mu_) { return pending_ == 0 && posted_ == 0; });
}

bool WriteBack::WaitToRetry(std::chrono::milliseconds backoff) {
  ++counters_.retries;
  MutexLock l(&mu_);
  stop_.WaitFor(&mu_, backoff, [this]() REQUIRES(mu_) { return stopping_.load(); });
  return !stopping_.load();
}

void WriteBack::Stop() {
  MutexLock l(&mu_);
  stopping_.store(true);
  stop_.SignalAll();
}

}  // namespace kvfs
