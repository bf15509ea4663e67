// ChunkReader: how the filesystem reads object bytes. The filesystem logic (fs/filesystem) only
// talks to this interface, so the read path can be a plain ranged GET (DirectReader) or the
// cache-backed parallel fetcher (CachedReader) without the filesystem knowing which.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"

namespace kvfs {

// Where bytes of an open object can be read without copying: a file descriptor and an offset
// (a cache file). The kernel can splice from it.
struct FdRange {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// One open object. Thread-safe: the kernel may send reads of one handle from several threads.
// The handle keeps whatever it reads from alive (e.g. pins a cache entry) until destroyed.
class ReadHandle {
 public:
  virtual ~ReadHandle() = default;
  // Copies up to `size` bytes at `offset` into buf. Returns the count: short only at the end of
  // the object. Blocks until the bytes have arrived (not until the whole object has).
  virtual Result<uint64_t> Read(uint64_t offset, uint64_t size, char* buf) = 0;
  // Like Read, but returns where the bytes lie instead of copying them, when the implementation
  // keeps them in a file; kNotSupported otherwise (the caller then uses Read).
  virtual Result<FdRange> ReadFd(uint64_t offset, uint64_t size) {
    return Status::NotSupported("no file-backed reads");
  }
  // True when every read is served from a local file (a cache entry, or a download into one), so
  // the kernel's page cache would only hold a second copy of bytes the local cache has.
  virtual bool Local() const { return false; }
  // Whether a read of [offset, offset+size) would wait on the store. Must not block. The default
  // (streamed reads) always does.
  virtual bool WouldWait(uint64_t offset, uint64_t size) const { return true; }
  // The object is about to be deleted while this handle is open (unlink): bring what later reads
  // need to this node now, where the handle keeps it (POSIX: an unlinked file lives until its
  // last close). The default has nothing to do.
  virtual Status KeepCached() { return Status::OK(); }
  // A file holding every byte of the object for the handle's whole life (a complete cache entry
  // the handle pins), for the kernel to read directly (FUSE passthrough); -1 when there is none.
  // May open the handle.
  virtual int PassthroughFd() { return -1; }
  // The kernel reads this handle's bytes from PassthroughFd() itself (counted: they never reach
  // Read or ReadFd).
  virtual void NotePassthrough() {}
};

// Thread-safe.
class ChunkReader {
 public:
  virtual ~ChunkReader() = default;
  // Opens `key` whose metadata (size, etag) the caller already knows. May start fetching.
  virtual Result<std::unique_ptr<ReadHandle>> Open(const std::string& key,
                                                   const ObjectInfo& info) = 0;
  // Tells the reader that `key` was just written through this mount with the bytes in file
  // `path` (a spool file, `info` as uploaded). A caching reader may take the file over (rename)
  // so later reads are hits; it returns true if it did. `crc`: the file's CRC32C when the writer
  // folded it as it wrote (saves a pass over the file). The default keeps nothing.
  virtual bool AdoptWritten(const std::string& key, const ObjectInfo& info, const std::string& path,
                            std::optional<uint32_t> crc) {
    return false;
  }
  // Bytes of chunks kept locally that can be evicted to make room (statfs). Default: none.
  virtual uint64_t EvictableBytes() const { return 0; }
  // Whether Open(info) would serve reads from a local file (a cache entry or a download into
  // one), decided before opening (an open that never reads fetches nothing: LazyReadHandle).
  virtual bool ServesFromCache(const ObjectInfo& info) const { return false; }
  // A lookup found `info` (an object named `key`) and the engine may read it soon: a caching
  // reader may start downloading it in the background (bounded). The default does nothing.
  virtual void Prefetch(const std::string& key, const ObjectInfo& info) {}
  // Forgets any local copy of `key` (after unlink, or when the object changed).
  virtual void Invalidate(const std::string& key) {}

  // A complete local copy of `key` that Open would serve without the store: its size and etag
  // as they were fetched, and when (wall-clock seconds). nullopt: none. The default keeps none.
  struct CachedCopyInfo {
    uint64_t size = 0;
    std::string etag;
    int64_t fetched_sec = 0;
  };
  virtual std::optional<CachedCopyInfo> CachedCopy(const std::string& key) { return std::nullopt; }
};

}  // namespace kvfs
