// The extended-attribute handlers of the FUSE adapter: the mount root has one attribute,
// kStatsXattr (the daemon's statistics); files and directories have none (ENOTSUP), and nothing
// can be set. Internal to the adapter; thread-safe like every handler.
#pragma once

#include "fs/fuse/fuse_request.h"

namespace kvfs::fuse_internal {

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags);
void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name);

}  // namespace kvfs::fuse_internal
