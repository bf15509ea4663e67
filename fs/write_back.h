// WriteBack: the uploads that run after close() has returned (FsOptions::write_back). A whole
// chunk is accepted (and sealed) into the spool at close() or rename(); its upload is queued here
// and runs on one of `uploads` threads, tried again with backoff while the store fails
// (WaitToRetry). At most `max_bytes` of chunks wait or upload at once: a close that would pass it
// waits for room (the push-back on writers), so the spool and the store's backlog stay bounded.
// Drain() (unmount, SIGTERM) waits until every queued upload has ended; DrainFor() waits at most
// a time, and Stop() then ends the retries and the uploads not yet begun: their chunks stay
// sealed for the next mount.
//
// Thread-safety: thread-safe. mu_ is a leaf: tasks run without it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <set>

#include "base/executor.h"
#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "fs/write_back_stats.h"

namespace kvfs {

class WriteBack {
 public:
  // Post()ed tasks: the recovery of sealed chunks at mount, the delete of an object made for a
  // name unlinked during its upload. Neither waits for an upload, so one thread serves.
  static constexpr int kHelperThreads = 1;
  // max_age_ms: while the oldest pending chunk is older, no new chunk is taken (0: no limit).
  WriteBack(int uploads, uint64_t max_bytes, int64_t max_age_ms = 0);
  ~WriteBack();  // Drain(), then the threads end

  // What an upload task did with its chunk (counted).
  enum class Ending { kStored, kFailed, kKept /* left sealed at Stop() */ };
  // Room for a chunk of `bytes` before it is accepted: waits while other chunks hold max_bytes
  // (one alone may be larger) or the oldest has been pending longer than max_age, until the
  // calling thread's deadline (base/deadline.h); then kDeadlineExceeded, saying which bound held.
  // The room is held until Submit (or Unreserve, if the chunk was not accepted after all).
  Status Reserve(uint64_t bytes) EXCLUDES(mu_);
  void Unreserve(uint64_t bytes) EXCLUDES(mu_);
  // Queues `upload`, a chunk of `bytes` that Reserve() made room for.
  void Submit(uint64_t bytes, std::function<Ending()> upload) EXCLUDES(mu_);
  // An upload failed and is to be tried again: waits `backoff` (counted as a retry). False once
  // Stop() was called: the caller leaves its chunk sealed (Ending::kKept).
  bool WaitToRetry(std::chrono::milliseconds backoff) EXCLUDES(mu_);
  bool stopping() const { return stopping_.load(); }
  // Runs `task` on a thread of its own (kHelperThreads), not on a FUSE worker nor an upload
  // thread; Drain() waits for it too. The uploads never wait for these tasks.
  void Post(std::function<void()> task) EXCLUDES(mu_);
  // Waits until no upload or posted task is queued or running.
  void Drain() EXCLUDES(mu_);
  // Drain() for at most `limit`; returns whether everything ended.
  bool DrainFor(std::chrono::milliseconds limit) EXCLUDES(mu_);
  // From now on retries end and uploads not yet begun are not begun (unmount past its limit).
  void Stop() EXCLUDES(mu_);

  // A sealed chunk of an earlier run found at mount: queued (`queued`) or refused (its bytes did
  // not match its seal).
  void NoteRecovered(bool queued) { ++(queued ? counters_.recovered : counters_.recovery_refused); }

  WriteBackStats Stats() const EXCLUDES(mu_);

 private:
  // Whether a chunk of `bytes` fits now (both bounds).
  bool RoomFor(uint64_t bytes) const REQUIRES(mu_);
  void PublishGaugesLocked() REQUIRES(mu_);

  const uint64_t max_bytes_;
  const int64_t max_age_ms_;
  WriteBackCounters counters_;
  mutable Mutex mu_;
  CondVar room_;                                // signalled when an upload ends
  uint64_t pending_bytes_ GUARDED_BY(mu_) = 0;  // reserved, queued or uploading
  uint64_t pending_ GUARDED_BY(mu_) = 0;
  std::multiset<int64_t> since_ GUARDED_BY(mu_);  // MonotonicMs of each queued upload's Submit
  uint64_t posted_ GUARDED_BY(mu_) = 0;           // Post()ed tasks not yet run
  std::atomic<bool> stopping_{false};
  CondVar stop_;      // signalled by Stop(): ends WaitToRetry
  Executor pool_;     // the uploads
  Executor helpers_;  // Post()ed tasks; last: its threads end first (after Drain)
};

}  // namespace kvfs
