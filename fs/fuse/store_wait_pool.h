// StoreWaitPool: threads that run the FUSE requests which must wait on the store (a lookup or stat
// of a name that is neither cached nor answered from a local copy), so that FUSE worker threads
// never wait on a dead or slow store themselves: stat of cached names, reads of cached chunks,
// statfs and `kvfs stats` keep a free worker. The request is replied to from a pool thread
// (libfuse allows replies from any thread).
//
// Each task carries the deadline of the request that queued it (base/deadline.h): it runs
// under that deadline, and a task still queued when it passes is not run but `late` is called
// (which replies ETIMEDOUT), so a queue behind a dead store drains within blocking_timeout.
//
// Thread-safe. The destructor runs (or expires) what is queued, then joins the threads.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace kvfs {

class StoreWaitPool {
 public:
  explicit StoreWaitPool(int threads);
  ~StoreWaitPool();
  StoreWaitPool(const StoreWaitPool&) = delete;
  StoreWaitPool& operator=(const StoreWaitPool&) = delete;

  // Queues `run` under the calling thread's deadline; `late` instead when it has passed first.
  void Submit(std::function<void()> run, std::function<void()> late) EXCLUDES(mu_);

 private:
  struct Task {
    int64_t deadline_ms = 0;  // MonotonicMs; 0: none
    std::string source;
    std::function<void()> run;
    std::function<void()> late;
  };
  void Worker() EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  std::deque<Task> queue_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace kvfs
