#include "fs/scan_tracker.h"

#include <algorithm>
#include <utility>

namespace kvfs {

ScanTracker::ScanTracker(Clock clock, std::chrono::steady_clock::duration window,
                         size_t max_threads)
    : clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      window_(window),
      max_threads_(max_threads) {}

void ScanTracker::Listed(pid_t tid, uint64_t dir_ino) {
  if (tid == 0) return;
  const auto now = clock_();
  MutexLock l(&mu_);
  if (scans_.size() >= max_threads_ && scans_.count(tid) == 0) {
    // Forget the scans that ended; if none has, the oldest.
    std::erase_if(scans_, [&](const auto& kv) { return now - kv.second.last > window_; });
    if (scans_.size() >= max_threads_) {
      scans_.erase(std::min_element(scans_.begin(), scans_.end(), [](const auto& a, const auto& b) {
        return a.second.last < b.second.last;
      }));
    }
  }
  scans_[tid] = Scan{dir_ino, now};
}

bool ScanTracker::Scanning(pid_t tid, uint64_t parent) {
  if (tid == 0) return false;
  const auto now = clock_();
  MutexLock l(&mu_);
  auto it = scans_.find(tid);
  if (it == scans_.end() || it->second.dir != parent) return false;
  if (now - it->second.last > window_) {
    scans_.erase(it);
    return false;
  }
  it->second.last = now;
  return true;
}

}  // namespace kvfs
