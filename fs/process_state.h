// Whether a process is exiting, from /proc: tells the explicit close() of a live writer from the
// implicit close the kernel performs for a process that is dying (killed, crashed, OOM-killed,
// or exiting with the file still open). Such a FLUSH comes from a task that has PF_EXITING set
// (the kernel closes a task's files in do_exit, after setting it), or - when the kernel sends
// that FLUSH in the background - from a task that is already a zombie or gone. A live close()
// waits for the daemon's answer, so its task is still there to be looked at.
//
// Thread-safety: thread-safe (no state).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

namespace kvfs {

// True if `pid` (as FUSE reports it: the calling thread, in the daemon's pid namespace) is exiting,
// a zombie, or gone. False for pid <= 0 (the kernel could not map it into our namespace:
// unknown, so treated as live).
bool ProcessIsExiting(pid_t pid);

// The parse behind it, for tests: the contents of /proc/PID/stat -> exiting? nullopt when the
// text cannot be parsed.
std::optional<bool> StatSaysExiting(std::string_view stat);

// Whether /proc shows this process as itself (the daemon and /proc share a pid namespace). If not,
// pids cannot be checked and every close counts as live.
bool ProcMatchesOwnPid();

}  // namespace kvfs
