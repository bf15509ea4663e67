// The values Filesystem's operations (fs/filesystem.h) take and return, and the FUSE adapter
// translates to and from the kernel's: attributes, looked-up entries, attribute changes, the
// result of an open, and statfs figures.
//
// Thread-safety: plain values (thread-compatible).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kvfs {

struct FileAttr {
  uint64_t ino = 0;
  bool is_dir = false;
  uint64_t size = 0;
  int64_t mtime_sec = 0;
  uint32_t mode = 0;  // type and permission bits (S_IFREG | 0644 ...)
  uint32_t nlink = 1;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct FsEntry {
  FileAttr attr;  // ino 0: no such name for this caller (a chunk another process is writing)
  // How long the kernel may keep the answer: < 0 the whole metadata TTL (a fresh answer); the
  // rest of the TTL of the metadata-cache entry it came from, so that a name is never cached
  // longer than one TTL in all (other nodes' changes show within it); 0 not at all (a chunk
  // being written: other processes must ask each time, so that they see it once published).
  double ttl_secs = -1;
  bool uncached() const { return ttl_secs == 0; }
};

struct SetAttrRequest {
  std::optional<uint64_t> size;
  std::optional<uint32_t> mode;
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  // Times are accepted and ignored (objects keep the store's Last-Modified).
};

struct OpenResult {
  uint64_t fh = 0;
  bool keep_cache = false;  // the bytes cannot change: the kernel may keep its page cache
  // Bypass the kernel's page cache for this open (FOPEN_DIRECT_IO): reads of local cache entries
  // (FsOptions::page_cache), write-only opens (Filesystem::WritesBypassPageCache).
  bool direct_io = false;
  // A file whose bytes are this open's for its whole life (a complete, pinned cache entry), or
  // -1: the adapter may let the kernel read it directly (FsOptions::passthrough). Owned by the
  // handle; valid until Release(fh).
  int passthrough_fd = -1;
  // The object version a read-only open of an uploaded object reads (ETag and size; empty for
  // local files): opens of one version share its passthrough backing file, even those that could
  // not open the cache entry themselves.
  std::string version{};
};
// OpenResult::version of opens whose backing file is a spool the kernel writes
// (passthrough_writes): "spool:" and the spool's path.
inline constexpr char kSpoolVersionPrefix[] = "spool:";

struct FsStat {
  uint64_t bsize = 4096, frsize = 4096, blocks = 0, bfree = 0, bavail = 0;
  uint64_t files = 0, ffree = 0, namemax = 255;
};

}  // namespace kvfs
