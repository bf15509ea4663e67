// The thin libfuse (fuse3 low-level API) adapter: translates kernel requests into Filesystem
// calls and Status into errno (fs/errno_map.h). No filesystem logic lives here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fs/filesystem.h"

namespace kvfs {

struct FuseOptions {
  // Worker threads of the multithreaded session loop (uploads block one worker each).
  int max_threads = 32;
  // Let users other than the mounting one use the mount (needs user_allow_other for non-root).
  bool allow_other = false;
  // Shown in /proc/mounts as the source ("kvfs" or e.g. "s3://bucket/prefix").
  std::string fsname = "kvfs";
  // Largest write / read request, and the kernel read-ahead window.
  uint32_t max_write = 1u << 20;
  uint32_t max_readahead = 1u << 20;
  // Extra "-o" options passed to libfuse as they are (e.g. "default_permissions").
  std::vector<std::string> extra_mount_options;
  bool debug = false;  // libfuse request tracing
};

// Mounts `fs` at `mountpoint` and serves requests until the filesystem is unmounted
// (fusermount3 -u / umount) or the process receives SIGTERM, SIGINT or SIGHUP; requests already
// running (uploads in progress) finish first, then the mountpoint is unmounted. `on_mounted` runs
// once the mount is in place, before serving (the daemon reports readiness / detaches there).
// Returns 0 after a clean exit, non-zero if the mount failed (reason logged).
int RunFuseSession(Filesystem& fs, const std::string& mountpoint, const FuseOptions& options,
                   std::function<void()> on_mounted);

}  // namespace kvfs
