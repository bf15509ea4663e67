// Tells the kernel to drop directory entries that vanished behind its back (a failed upload).
#pragma once

#include <cstdint>
#include <string>

#include "base/executor.h"

struct fuse_session;

namespace kvfs {

// Sends the kernel's entry invalidations from a thread of its own: a notification may wait for
// the kernel's directory lock, which a request being served could hold, so sending it from a FUSE
// worker could deadlock. Thread-safe.
class EntryInvalidator {
 public:
  explicit EntryInvalidator(fuse_session* se) : se_(se) {}
  // Drops what is still queued: the session is going away (Executor::kDropQueued).
  ~EntryInvalidator() = default;

  // Queues "drop `name` in directory `parent`"; never blocks on the kernel.
  void Push(uint64_t parent, const std::string& name);

 private:
  fuse_session* const se_;
  Executor sender_{1, Executor::kDropQueued};  // last: its thread ends before se_ goes
};

}  // namespace kvfs
