// Detaches the mount the moment the daemon is asked to stop (SIGTERM, SIGINT, SIGHUP), before the
// requests still running finish. A container runtime gives a stopping container a grace period
// and then SIGKILLs it; an upload still running at SIGTERM could outlast it, and a daemon killed
// while mounted leaves a dead FUSE mount on the node ("Transport endpoint is not connected" for
// every engine there). Detached at once (umount2 MNT_DETACH as root, `fusermount3 -u -z`
// otherwise: what libfuse's own unmount does, without closing the session's descriptor), the
// mount leaves every namespace that sees it - the node's included, through the mount's
// propagation - while files already open keep working: running uploads still complete and
// their closes still get their answers.
//
// Thread-safety: construct and destroy on the thread that runs the session, between
// fuse_set_signal_handlers and fuse_remove_signal_handlers; one instance per process.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace kvfs {

class SignalUnmount {
 public:
  // Chains to the handlers installed before (libfuse's, which end the session loop).
  explicit SignalUnmount(std::string mountpoint);
  // Restores the handlers it chained to and stops its thread.
  ~SignalUnmount();
  SignalUnmount(const SignalUnmount&) = delete;
  SignalUnmount& operator=(const SignalUnmount&) = delete;

  // Restores the handlers and joins the thread; idempotent (the destructor calls it).
  void Stop();

  // After Stop(): whether the session may still unmount the path itself (its unmount also frees
  // what it holds): yes unless this detached the mount and something is mounted on the path
  // again (a restarted daemon's mount, which must not be detached by this one).
  bool SessionMayUnmount() const;

 private:
  void Run();

  const std::string mountpoint_;
  std::string canonical_;  // as /proc/self/mountinfo shows it
  std::atomic<bool> detached_{false};
  int pipe_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace kvfs
