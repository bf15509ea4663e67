// Full-length POSIX reads and writes: the one place in kvfs that loops over read(2)/pread(2)/
// write(2)/pwrite(2). Every other file calls these instead of writing its own EINTR loop.
//
// Contract shared by all functions:
//  - EINTR is retried; a short count is continued from where it stopped.
//  - A failed system call returns Status::FromErrno(errno, what): the code follows the errno
//    and Status::sys_errno() keeps it.
//  - `what` names the file (path or role, e.g. "cache entry /var/cache/kvfs/data/x"); it opens
//    every error message, so callers pass something a user can act on.
//
// Short-read policy (the one place it is decided):
//  - PreadFull / ReadFull stop only at end of file: they return the bytes read, which is less
//    than asked only when the file (or pipe) ended. The caller decides what a short file means.
//  - PreadExact treats end of file before `n` bytes as an error: kDataLoss, naming `what`, the
//    offset and how many bytes were missing ("file shorter than expected").
//  - Writes never return short: they write everything or fail. A write(2) that returns 0 for a
//    non-zero count (not seen on Linux for regular files) is reported as kIoError, not retried.
//
// Thread-safety: the functions hold no state; concurrent calls on one fd are as safe as the
// system calls (pread/pwrite at explicit offsets are; ReadFull/WriteFull share the file
// position, so give them one caller at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace kvfs {

// Reads up to n bytes at offset. Returns the bytes read: n, or fewer only at end of file.
Result<size_t> PreadFull(int fd, void* buf, size_t n, uint64_t offset, const std::string& what);

// Reads exactly n bytes at offset; end of file before n bytes is kDataLoss.
Status PreadExact(int fd, void* buf, size_t n, uint64_t offset, const std::string& what);

// Reads up to n bytes at the file position (pipes, sockets). Fewer than n only at end of file.
Result<size_t> ReadFull(int fd, void* buf, size_t n, const std::string& what);

// Writes all n bytes at offset.
Status PwriteFull(int fd, const void* buf, size_t n, uint64_t offset, const std::string& what);

// Writes all n bytes at the file position (pipes, O_APPEND files, files written in order).
Status WriteFull(int fd, const void* buf, size_t n, const std::string& what);

}  // namespace kvfs
