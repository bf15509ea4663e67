// What the mount daemon does to its own process before it serves: paths made absolute before it
// daemonizes (it then runs in "/"), its descriptor limit raised as far as it may go.
//
// Thread-safety: call from the main thread at start, before other threads exist.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "src/cli.h"
#include "src/config.h"

namespace kvfs {

// MOUNTPOINT, cache_dir and ca_bundle taken relative to the current directory, as the user
// meant them: the daemon chdir("/")s when it detaches, after which "mnt" would be "/mnt".
// Lexical (std::filesystem::absolute): nothing is resolved, so a dead mount at MOUNTPOINT
// (ENOTCONN) is still named as given. Fails only when the current directory is unknown.
Status MakePathsAbsolute(CommandLine* cmd, KvfsConfig* config);

// Raises the soft RLIMIT_NOFILE to the hard limit: every open chunk holds a cache descriptor and
// every store request a socket, and Debian's soft default (1024) is far below what a busy engine
// opens. The limit reached is logged at debug level, a failure as a warning. Returns the soft
// limit in force afterwards.
uint64_t RaiseFileLimit();

// Makes the process non-dumpable (PR_SET_DUMPABLE 0): a core dump, and ptrace or /proc/PID/mem
// by the same user, would show the credentials and session tokens the daemon holds in memory.
// `core_dumps` (the setting of that name, for debugging a crash) leaves the process as it is.
void ProtectMemory(bool core_dumps);

}  // namespace kvfs
