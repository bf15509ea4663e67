// Deadline: a time limit for everything one caller's request does, carried by the thread that
// serves it. The FUSE adapter sets one per kernel request (blocking_timeout); the S3 client reads
// it when an operation starts, so the operation's retries stop at it and each attempt's transfer
// timeout is clipped to what is left. Work handed to other threads does not inherit it: an
// operation started from a thread with a deadline keeps that deadline (it is copied at the start).
//
// Times are steady-clock milliseconds (MonotonicMs). Thread-safety: the deadline is thread-local;
// every function is safe to call from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace kvfs {

// Milliseconds of std::chrono::steady_clock.
int64_t MonotonicMs();

// The calling thread's deadline (MonotonicMs time), or 0 when it has none.
int64_t ThreadDeadlineMs();
// The setting that set the calling thread's deadline, for messages ("blocking_timeout=10s");
// empty when it has none.
const std::string& ThreadDeadlineSource();

// Sets a deadline `timeout_ms` from now on the calling thread for the scope; an earlier deadline
// already in force stays (scopes nest to the earliest). timeout_ms <= 0: no change.
// With kReplace the scope's deadline replaces the one in force (timeout_ms <= 0: none), for
// clean-up that must still run after a request's deadline passed (aborting a multipart upload).
class ScopedDeadline {
 public:
  enum Mode { kNest, kReplace };
  ScopedDeadline(int64_t timeout_ms, std::string source, Mode mode = kNest);
  ~ScopedDeadline();
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

 private:
  int64_t saved_deadline_;
  std::string saved_source_;
};

// `run` made into a task for another thread (Executor) that keeps the calling thread's deadline:
// it runs under what is left of it, or `late` runs instead when the deadline passed before the
// task started - so a queue behind a dead store drains within the requests' own time limits.
std::function<void()> KeepingDeadline(std::function<void()> run, std::function<void()> late);

}  // namespace kvfs
