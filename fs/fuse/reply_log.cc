#include "fs/fuse/reply_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/log.h"

namespace kvfs {
namespace {

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "errno " + std::to_string(err);
}

}  // namespace

LogRateLimiter::LogRateLimiter(int max_lines, int64_t window_ms, NowMs now)
    : max_lines_(max_lines), window_ms_(window_ms), now_(now ? std::move(now) : SteadyNowMs) {}

bool LogRateLimiter::Allow(uint64_t* suppressed) {
  const int64_t now = now_();
  MutexLock l(&mu_);
  *suppressed = 0;
  if (used_ == 0 || now - window_start_ >= window_ms_) {
    window_start_ = now;
    used_ = 0;
  }
  if (used_ >= max_lines_) {
    suppressed_++;
    return false;
  }
  used_++;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

bool ExpectedReplyError(const std::string& op, int err) {
  switch (err) {
    case ENOENT:
    case EEXIST:
      return true;
    case ENODATA:
    case ENOTSUP:
    case ERANGE:
      return op.find("xattr") != std::string::npos;
    case ENOTEMPTY:
      return op == "rmdir";
    default:
      return false;
  }
}

void LogFailedReply(LogRateLimiter* limiter, const std::string& op, const std::string& target,
                    int err, const Status& status) {
  const LogLevel level = ExpectedReplyError(op, err) ? LogLevel::kDebug : LogLevel::kWarn;
  if (!LogEnabled(level)) return;
  uint64_t suppressed = 0;
  if (!limiter->Allow(&suppressed)) return;
  if (suppressed > 0) {
    LogWarn("fuse: {} more failed replies were not logged (rate limit)", suppressed);
  }
  char buf[128];
  const char* text = strerror_r(err, buf, sizeof(buf));
  if (status.ok()) {
    Log(level, "fuse: {} {}: {} ({})", op, target, ErrnoName(err), text);
  } else {
    Log(level, "fuse: {} {}: {} ({}): {}", op, target, ErrnoName(err), text, status.ToString());
  }
}

}  // namespace kvfs
