// Whether a process is exiting, from /proc: tells the explicit close() of a live writer from the
// implicit close the kernel performs for a process that is dying (killed, crashed, OOM-killed,
// or exiting with the file still open). Such a FLUSH comes from a task past exit_mm() in
// do_exit (which drops its memory before exit_files closes its files), or - when the kernel
// sends that FLUSH in the background - from a task that is already a zombie or gone. A live
// close() waits for the daemon's answer, so its task is still there to be looked at. Everything
// is read from /proc/PID/status: /proc/PID/stat blocks while its task is in an exec, which is
// where a task closes its O_CLOEXEC descriptors (a FLUSH the daemon must answer).
//
// It also tells which process a FUSE request's thread belongs to, and whether a process still holds
// another descriptor of a file: the publication rule (docs/write-path.md) lets only the writing
// process's own last close publish a chunk, never a child's or a shell's copy of the descriptor.
//
// Thread-safety: thread-safe (no state).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvfs {

// True if `pid` (as FUSE reports it: the calling thread, in the daemon's pid namespace) is exiting,
// a zombie, or gone. False for pid <= 0 (the kernel could not map it into our namespace:
// unknown, so treated as live).
bool ProcessIsExiting(pid_t pid);

// The parse behind it, for tests: the contents of /proc/PID/status -> exiting? (a zombie, or no
// memory left: past exit_mm() in do_exit()). nullopt when the text cannot be parsed.
std::optional<bool> StatusSaysExiting(std::string_view status);

// For a task that is exiting (ProcessIsExiting): whether it was killed by a signal (SIGKILL, the
// OOM killer, a crash) rather than exiting with a status (exit(), _exit(), the end of main), from
// the exit code do_exit() stores before it closes the task's files. True when it cannot be told
// (the task is gone). Read only for exiting tasks: /proc/PID/stat blocks on a task in an exec.
bool KilledBySignal(pid_t pid);
// The parse behind it, for tests: the contents of /proc/PID/stat -> killed? nullopt if unparsable.
std::optional<bool> StatSaysKilled(std::string_view stat);

// The process (thread group) that thread `pid` belongs to, from /proc/PID/status; 0 when it cannot
// be told (pid <= 0, or the thread is gone).
pid_t ThreadGroupOf(pid_t pid);
std::optional<pid_t> StatusSaysTgid(std::string_view status);  // the parse behind it, for tests

// Whether process `tgid` has a descriptor open for writing on the file with inode number `ino`
// whose current name is `name` (its last path component). When FLUSH arrives, the descriptor
// being closed has already left the process's table, so any match is another descriptor: the
// shell's dup2 + close of the original, or an explicit dup. Other filesystems' files with the
// same inode number are told apart by the name.
bool HoldsWritableFd(pid_t tgid, uint64_t ino, std::string_view name);

// A descendant of process `tgid` (children, their children; at most 64 looked at) that holds a
// descriptor open for writing on (ino, name), or 0: the descriptor was handed to it (fork), so
// the opener's close is not the last one and the rest of the chunk may still come from there,
// unseen while the kernel writes the spool (passthrough_writes).
pid_t DescendantHoldingWritableFd(pid_t tgid, uint64_t ino, std::string_view name);

// Whether /proc shows this process as itself (the daemon and /proc share a pid namespace). If not,
// pids cannot be checked and every close counts as live.
bool ProcMatchesOwnPid();

}  // namespace kvfs
