// ScanTracker: tells a directory scan's lookups (`ls -l`, `du`, `find -size`, rsync, an engine's
// start-up scandir + lstat) from an engine's lookups of chunks it is about to read, so that only
// the latter start downloads (prefetch on lookup, fs/read/prefetch_queue.h).
//
// The rule: a thread that opened or read directory D is scanning D; its lookups of names in D are
// the scan's while each comes within `window` of the thread's previous readdir or lookup there.
// Every scanner lists before it stats; engines look names up that they computed (a content hash),
// not that they listed. A scan's lookups answer as always; they only start no download.
//
// Bounded: at most `max_threads` scanning threads are remembered (the oldest are forgotten).
// Thread-safe: mu_ is a leaf lock.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace kvfs {

class ScanTracker {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  explicit ScanTracker(Clock clock = nullptr,
                       std::chrono::steady_clock::duration window = std::chrono::seconds(2),
                       size_t max_threads = 4096);

  // Thread `tid` opened or read directory `dir_ino`.
  void Listed(pid_t tid, uint64_t dir_ino) EXCLUDES(mu_);
  // Whether thread `tid`'s lookup of a name in `parent` belongs to its scan (and extends it).
  // tid 0 (unknown): not a scan.
  bool Scanning(pid_t tid, uint64_t parent) EXCLUDES(mu_);

 private:
  struct Scan {
    uint64_t dir = 0;
    std::chrono::steady_clock::time_point last;
  };

  const Clock clock_;
  const std::chrono::steady_clock::duration window_;
  const size_t max_threads_;
  Mutex mu_;
  std::unordered_map<pid_t, Scan> scans_ GUARDED_BY(mu_);
};

}  // namespace kvfs
