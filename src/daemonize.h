// Detaching from the terminal only after the mount is ready. The fork happens first, before any
// thread exists (the S3 client's I/O thread would not survive a fork); the parent waits on a pipe
// until the child reports "mounted" or a failure message, so `kvfs SOURCE MNT` returns 0 only when
// the mount is usable and prints the reason otherwise.
//
// Thread-safety: Start() must run while the process is single-threaded; the other methods are
// called from one thread (the one that mounts).
#pragma once

#include <string>

namespace kvfs {

class Daemonizer {
 public:
  // Forks. Returns in the child (the future daemon) only; the parent waits for the child's report
  // and exits with 0 (mounted) or 1 (after printing the child's message to stderr).
  void Start();
  // Child: the mount is ready. Detaches stdio (to /dev/null) and releases the parent.
  void ReportReady();
  // Child: start-up failed; the parent prints `message` and exits 1.
  void ReportFailure(const std::string& message);
  bool active() const { return fd_ >= 0; }

 private:
  int fd_ = -1;  // write end of the pipe to the waiting parent; -1 once reported / foreground
};

}  // namespace kvfs
