// The FUSE adapter's handlers of open files and directories: open and create, read (spliced
// from the cache file when the bytes lie in one), write, flush/fsync/release, and opendir,
// readdir, releasedir. Requests whose bytes or metadata must come from the store are served on
// the store-wait threads (WaitOnStore, fs/fuse/fuse_request.h). Internal to the adapter.
//
// Thread-safety: called on FUSE worker and store-wait threads concurrently, like every handler;
// they keep no state of their own.
#pragma once

#include "fs/fuse/fuse_request.h"

namespace kvfs::fuse_internal {

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi);
void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* data, size_t size, off_t off,
             fuse_file_info* fi);
void OpFlush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpFsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpReleasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);

}  // namespace kvfs::fuse_internal
