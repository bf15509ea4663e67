// The thin libfuse (fuse3 low-level API) adapter: translates kernel requests into Filesystem
// calls and Status into errno (fs/errno_map.h). No filesystem logic lives here.
#pragma once

#include <functional>
#include <string>

#include "fs/filesystem.h"
#include "fs/fuse/fuse_options.h"

namespace kvfs {

// The libfuse the daemon runs with, and whether it can hand hits to the kernel (passthrough):
// "libfuse 3.17.2, passthrough" (`kvfs --version`).
std::string FuseLibraryText();

// Mounts `fs` at `mountpoint` and serves requests until the filesystem is unmounted
// (fusermount3 -u / umount) or the process receives SIGTERM, SIGINT or SIGHUP; requests already
// running (uploads in progress) finish first, then the mountpoint is unmounted. `on_mounted` runs
// once the mount is in place, before serving (the daemon reports readiness / detaches there).
// Returns 0 after a clean exit, non-zero if the mount failed (reason logged).
int RunFuseSession(Filesystem& fs, const std::string& mountpoint, const FuseOptions& options,
                   std::function<void()> on_mounted);

}  // namespace kvfs
