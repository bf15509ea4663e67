// Small POSIX helpers of the directory store: whole writes, copies, fsync, ETags.
// Thread-safe: stateless functions.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"

namespace kvfs::dirstore {

// Closes a file descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser();
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Writes the whole body (memory, or a region of body.fd read with pread) to fd at its position.
Status WriteBody(int fd, const Body& body, const std::string& what);

// Appends `length` bytes of src (from its offset 0) to dst; copy_file_range, with a read/write
// fallback for file systems that refuse it.
Status CopyFile(int src, int dst, uint64_t length, const std::string& what);

// fsync of a directory, so a rename or link in it survives a crash.
Status FsyncDir(const std::string& dir);

// ETag of a stored file: inode, modification time (ns) and size in hex. Every write replaces
// the file by a new inode, so the ETag changes with every version and stays stable otherwise.
std::string StatEtag(const struct stat& st);

// ObjectInfo of a stored file.
ObjectInfo InfoFromStat(const std::string& key, const struct stat& st);

// The writer's CRC32C of an object file (ObjectInfo::crc32c), kept as the extended attribute
// user.kvfs.crc32c. Setting it is best effort: a file system without user xattrs (tmpfs before
// Linux 6.6) stores objects that simply carry no checksum.
void SetChecksumXattr(int fd, std::optional<uint32_t> crc);
std::optional<uint32_t> ChecksumXattr(int fd);
std::optional<uint32_t> ChecksumXattr(const std::string& path);
// The writer's slice CRCs (ObjectInfo::slice_crcs), the xattr user.kvfs.crc32c-slices, best
// effort as the checksum's; read back only where they fit an object of `size` bytes.
void SetSliceChecksumXattr(int fd, const std::optional<SliceCrcs>& slices);
std::optional<SliceCrcs> SliceChecksumXattr(int fd, uint64_t size);
std::optional<SliceCrcs> SliceChecksumXattr(const std::string& path, uint64_t size);

// kvfs's writer mark (ObjectInfo::kvfs_written), the xattr user.kvfs.writer, set on every object
// this store writes. A file without it was put there by something else (or by a kvfs before the
// mark, then without a checksum either). On a file system without user xattrs nothing can carry
// it: there every object counts as kvfs's (the objects/ tree is this store's own layout, which
// other applications do not write).
void SetWriterXattr(int fd);
bool HasWriterMark(const std::string& path);

// The chunk's user.* extended attributes (ObjectInfo::user_xattrs), the xattr user.kvfs.xattrs.
// Not best effort: a file system that refuses it fails the write (the attributes are the
// engine's, which it reads back). Read back "" when the file has none.
Status SetUserXattrs(int fd, const std::string& encoded, const std::string& what);
std::optional<std::string> UserXattrsOf(int fd);
std::optional<std::string> UserXattrsOf(const std::string& path);

// `bytes` random bytes from the kernel, as lower-case hex.
std::string RandomHex(size_t bytes);

}  // namespace kvfs::dirstore
