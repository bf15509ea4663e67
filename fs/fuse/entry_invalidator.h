// Tells the kernel to drop directory entries that vanished behind its back (a failed upload).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "base/mutex.h"

struct fuse_session;

namespace kvfs {

// Sends the kernel's entry invalidations from a thread of its own: a notification may wait for
// the kernel's directory lock, which a request being served could hold, so sending it from a FUSE
// worker could deadlock. Thread-safe.
class EntryInvalidator {
 public:
  explicit EntryInvalidator(fuse_session* se);
  // Drops what is still queued: the session is going away.
  ~EntryInvalidator() EXCLUDES(mu_);

  // Queues "drop `name` in directory `parent`"; never blocks on the kernel.
  void Push(uint64_t parent, const std::string& name) EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);

  fuse_session* const se_;
  Mutex mu_;
  CondVar cv_;
  std::deque<std::pair<uint64_t, std::string>> queue_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace kvfs
