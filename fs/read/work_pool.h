// WorkPool: a few threads running queued tasks. The read path uses it to write downloaded parts
// to cache files and checksum them, off the object store's I/O thread (which must not block).
//
// Thread-safe. The destructor runs the tasks still queued, then joins the threads.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace kvfs {

class WorkPool {
 public:
  explicit WorkPool(int threads);
  ~WorkPool() EXCLUDES(mu_);
  void Post(std::function<void()> task) EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace kvfs
