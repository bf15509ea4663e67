#include "fs/write_back.h"

namespace kvfs {

WriteBack::WriteBack(int uploads, uint64_t max_bytes)
    : max_bytes_(max_bytes), pool_(uploads), releases_(kReleaseThreads) {}

WriteBack::~WriteBack() { Drain(); }

void WriteBack::Submit(uint64_t bytes, std::function<Ending()> upload) {
  {
    MutexLock l(&mu_);
    if (pending_ > 0 && pending_bytes_ + bytes > max_bytes_) {
      ++counters_.waits;
      room_.Wait(&mu_, [&]() REQUIRES(mu_) {
        return pending_ == 0 || pending_bytes_ + bytes <= max_bytes_;
      });
    }
    pending_bytes_ += bytes;
    ++pending_;
    counters_.pending.store(pending_);
    counters_.pending_bytes.store(pending_bytes_);
  }
  ++counters_.queued;
  pool_.Schedule([this, bytes, upload = std::move(upload)]() mutable {
    const Ending ending = upload();
    upload = nullptr;  // what it holds (the file, its spool) goes before Drain() can return
    ++(ending == Ending::kStored   ? counters_.uploaded
       : ending == Ending::kFailed ? counters_.failed
                                   : counters_.kept);
    // Signal under the lock: Drain's caller may destroy this queue as soon as it sees zero.
    MutexLock l(&mu_);
    pending_bytes_ -= bytes;
    --pending_;
    counters_.pending.store(pending_);
    counters_.pending_bytes.store(pending_bytes_);
    room_.SignalAll();
  });
}

void WriteBack::Post(std::function<void()> task) {
  {
    MutexLock l(&mu_);
    ++posted_;
  }
  releases_.Schedule([this, task = std::move(task)] {
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
