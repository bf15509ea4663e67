// CircuitBreaker: stops sending requests to an S3 endpoint that keeps failing to answer, so FUSE
// requests fail fast instead of each waiting out its own timeouts (as LMCache's MP adapter does).
//
// Closed: every attempt goes out; `failures` consecutive connection failures or timeouts open it.
// Open: attempts are refused at once for `cooldown_ms`. Then half-open: exactly one attempt (the
// probe) goes out; its success closes the breaker, its failure opens it for another cool-down.
// Any answer from the server (an HTTP status, even 5xx) counts as success: the endpoint is alive
// and the retry policy handles the rest.
//
// Times are the caller's Clock milliseconds. Thread-safe (one internal mutex, a leaf lock).
#pragma once

#include <cstdint>

#include "base/mutex.h"

namespace kvfs::s3 {

class CircuitBreaker {
 public:
  struct Options {
    int failures = 5;            // consecutive failures that open it; 0: never opens
    int64_t cooldown_ms = 5000;  // refusing time before a probe goes out
  };
  struct Stats {
    uint64_t opens = 0;     // times it opened
    uint64_t rejected = 0;  // attempts refused while open
    bool open = false;      // open or half-open now
  };

  explicit CircuitBreaker(Options options) : options_(options) {}

  // Before an attempt: true to send it. False: refuse it; *retry_in_ms (when given) is set to
  // the time left until the next probe may go out.
  bool Allow(int64_t now_ms, int64_t* retry_in_ms = nullptr) EXCLUDES(mu_);
  // The attempt got an answer from the server.
  void OnSuccess() EXCLUDES(mu_);
  // The attempt could not connect, or timed out without an answer.
  void OnFailure(int64_t now_ms) EXCLUDES(mu_);
  // An allowed attempt ended without telling anything about the endpoint (cancelled, refused by
  // its own sink): a probe in flight gives its turn back.
  void OnNeutral() EXCLUDES(mu_);

  Stats stats() const EXCLUDES(mu_);
  const Options& options() const { return options_; }

 private:
  void OpenLocked(int64_t now_ms) REQUIRES(mu_);

  const Options options_;
  mutable Mutex mu_;
  int consecutive_ GUARDED_BY(mu_) = 0;
  bool open_ GUARDED_BY(mu_) = false;
  bool probe_out_ GUARDED_BY(mu_) = false;  // half-open: the one probe is in flight
  int64_t open_until_ms_ GUARDED_BY(mu_) = 0;
  uint64_t opens_ GUARDED_BY(mu_) = 0;
  uint64_t rejected_ GUARDED_BY(mu_) = 0;
};

}  // namespace kvfs::s3
