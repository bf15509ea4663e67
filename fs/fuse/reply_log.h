// Logging of failed replies to the kernel: every error a FUSE request answers with is logged
// once, with the operation, the name or inode and the cause, from one place (the reply helper in
// fs/fuse/fuse_adapter.cc). Expected negative answers (a missing name, an absent attribute, a lost
// O_EXCL create) are logged at debug level only; everything else at warn. A rate limit keeps a
// burst of failures (a store outage failing every read) from flooding the log: at most
// `max_lines` lines per window, then one "suppressed K" line when logging resumes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/mutex.h"
#include "base/status.h"

namespace kvfs {

// Allows at most max_lines per window. Thread-safe.
class LogRateLimiter {
 public:
  using NowMs = std::function<int64_t()>;  // monotonic milliseconds; injectable for tests
  LogRateLimiter(int max_lines, int64_t window_ms, NowMs now = nullptr);

  // True if a line may be logged now. Then *suppressed is the number of lines refused since the
  // last allowed one (log it first, so the count is not lost), else 0.
  bool Allow(uint64_t* suppressed) EXCLUDES(mu_);

 private:
  const int max_lines_;
  const int64_t window_ms_;
  const NowMs now_;
  Mutex mu_;
  int64_t window_start_ GUARDED_BY(mu_) = 0;
  int used_ GUARDED_BY(mu_) = 0;
  uint64_t suppressed_ GUARDED_BY(mu_) = 0;
};

// True for an answer that is part of normal operation, not a failure worth a warning: ENOENT
// (a lookup or unlink of an absent name), EEXIST (a lost O_EXCL / conditional create), ENODATA,
// ENOTSUP and ERANGE from the extended-attribute calls, ENOTEMPTY from rmdir.
bool ExpectedReplyError(const std::string& op, int err);

// Logs "fuse: <op> <target>: <ERRNO> (<text>): <status>" at warn (debug if expected), through
// the limiter. `status` may be OK when the adapter answers an errno of its own (links, xattrs).
void LogFailedReply(LogRateLimiter* limiter, const std::string& op, const std::string& target,
                    int err, const Status& status);

}  // namespace kvfs
