// ChunkCache: whole objects kept as files in a local directory (tmpfs or NVMe), bounded in bytes,
// evicted least-recently-used by watermarks, surviving restarts. Keys are opaque strings (object
// keys). Depends on base only: the fetcher that fills it lives in fs/read.
//
// Integrity: entries filled or adopted in this run are trusted. Entries recovered from disk at
// start have their trailer and size checked at once, and their content checksum checked lazily
// at the first Lookup: a large NVMe cache would otherwise take minutes to mount, and the first
// read of an entry pulls it into the page cache anyway, so the check mostly costs CPU time. An
// entry that fails is dropped and reported as a miss; it is never served.
//
// Pinning: an EntryRef or FillRef pins its entry; a pinned entry is never evicted. Remove() of a
// pinned entry hides it at once (and unlinks its file), but the holder keeps reading through its
// fd, and the bytes stay counted until the last pin is dropped.
//
// Thread-safe. One mutex (mu_) guards the index; it is a leaf lock (nothing else is locked while
// holding it) and is never held during content I/O: reads, writes, checksums, and also unlink
// (freeing a large tmpfs file takes time) happen outside it. Callers may hold their own locks
// when calling in (lock order: caller's locks, then ChunkCache::mu_).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "cache/cache_index.h"
#include "cache/cache_stats.h"

namespace kvfs {

class CacheDir;
class ChunkCache;

struct ChunkCacheOptions {
  std::string dir;                  // created 0700 if absent
  uint64_t capacity = 16ull << 30;  // cache_size: bytes of entries (content) kept at most
  double high_watermark = 0.85;     // start evicting above this fraction of capacity ...
  double evict_ratio = 0.2;         // ... and free this fraction of capacity
  bool verify_at_open = false;      // check every recovered entry's checksum in Open (slow, eager)
};

// What EntryRef and FillRef share: the cache, the entry they hold and an open fd on its file.
// Moving transfers all three; what releasing means (unpin, or abort the fill) is the subclass's.
// Thread-compatible.
class EntryHandle {
 public:
  bool valid() const { return entry_ != nullptr; }
  int fd() const { return fd_; }
  uint64_t size() const;
  const std::string& key() const;

 protected:
  EntryHandle() = default;
  EntryHandle(ChunkCache* c, std::shared_ptr<CacheEntry> e, int fd)
      : cache_(c), entry_(std::move(e)), fd_(fd) {}
  ~EntryHandle() = default;
  // Takes o's cache, entry and fd, leaving o empty. The caller has released its own first.
  void TakeFrom(EntryHandle& o) noexcept;

  ChunkCache* cache_ = nullptr;
  std::shared_ptr<CacheEntry> entry_;
  int fd_ = -1;
};

// A pinned, complete entry. Move-only; unpins and closes its fd on destruction. The fd is open
// for reading; [0, size) of it is the object's content. Thread-compatible (the fd itself may be
// read from many threads with pread).
class EntryRef : public EntryHandle {
 public:
  EntryRef() = default;
  EntryRef(EntryRef&& o) noexcept { TakeFrom(o); }
  EntryRef& operator=(EntryRef&& o) noexcept {
    if (this != &o) {
      Reset();
      TakeFrom(o);
    }
    return *this;
  }
  ~EntryRef() { Reset(); }
  void Reset();

  const std::string& etag() const;

 private:
  friend class ChunkCache;
  using EntryHandle::EntryHandle;
};

// A reserved entry being filled: write [0, size) into fd() with pwrite (the file is already
// `size` bytes long, sparse), then Commit. Dropping it uncommitted removes the file and frees
// the reservation. Move-only; thread-compatible (the fd may be written from many threads).
class FillRef : public EntryHandle {
 public:
  FillRef() = default;
  FillRef(FillRef&& o) noexcept { TakeFrom(o); }
  FillRef& operator=(FillRef&& o) noexcept {
    if (this != &o) {
      Reset();
      TakeFrom(o);
    }
    return *this;
  }
  ~FillRef() { Reset(); }
  void Reset();  // abort if not committed

  // Records the trailer (key, size, etag, checksum) and renames the file into place, making the
  // entry visible to Lookup. `crc`: the CRC32C of the content if the caller computed it while
  // writing; otherwise it is read back from the file. On success this FillRef becomes empty and
  // the returned EntryRef keeps the pin and the same fd. On error the fill is aborted.
  Result<EntryRef> Commit(std::optional<uint32_t> crc = std::nullopt);

 private:
  friend class ChunkCache;
  using EntryHandle::EntryHandle;
};

class ChunkCache {
 public:
  // Opens (creating if needed) the cache directory, locks it, and rebuilds the index from it.
  static Result<std::unique_ptr<ChunkCache>> Open(const ChunkCacheOptions& opts);
  // All EntryRefs and FillRefs must be gone before the cache is destroyed.
  ~ChunkCache();

  // A pinned, complete entry for key, if present with this size and (when both are known) this
  // etag. An entry with another size or etag is stale: it is dropped. Counts a hit or a miss. A
  // key being filled is a miss (the fetcher shares fills itself). An entry whose file is gone,
  // is a symlink or fails its checksum is dropped; one that cannot be opened for another reason
  // (out of descriptors or memory, EACCES) is a miss but stays (open_failures).
  std::optional<EntryRef> Lookup(const std::string& key, uint64_t size, const std::string& etag)
      EXCLUDES(mu_);

  // What a complete entry for key holds (size, etag, when it was filled), without pinning it or
  // counting a hit; nullopt when absent or still being filled. The entry may go at any time: a
  // caller that wants its bytes must Lookup.
  struct Peeked {
    uint64_t size = 0;
    std::string etag;
    int64_t fill_time_sec = 0;  // wall clock (time(2)) of the fill or adoption
  };
  std::optional<Peeked> Peek(const std::string& key) const EXCLUDES(mu_);

  // Reserves `size` bytes for key (evicting as needed) and creates the fill file.
  // kAlreadyExists if key is being filled or already cached with this size/etag (Lookup it);
  // a cached entry with another size/etag is replaced. kResourceExhausted if it cannot fit, even
  // after eviction (object bigger than the cache, or everything else pinned or filling).
  Result<FillRef> StartFill(const std::string& key, uint64_t size, const std::string& etag)
      EXCLUDES(mu_);

  // Takes over a complete file of `size` bytes at `path` (the filesystem's write spool) by
  // appending a trailer and renaming it into the cache. The file must be on the same filesystem
  // (use spool_dir()). Returns false, leaving the file as it was, if it cannot (other filesystem,
  // no room, a fill of key in progress, wrong size). `crc`: the file's CRC32C if the caller
  // knows it (a writer that folded it as it wrote); otherwise the file is read to compute it.
  bool AdoptFile(const std::string& key, uint64_t size, const std::string& etag,
                 const std::string& path, std::optional<uint32_t> crc = std::nullopt) EXCLUDES(mu_);

  // Forgets key (its file is unlinked; open EntryRefs keep reading). No-op if absent.
  void Remove(const std::string& key) EXCLUDES(mu_);
  // Makes the ready entry of key with this ETag (any, if empty) the next to be evicted: a chunk
  // prefetched for a lookup and not read within prefetch_unread_secs. No-op otherwise.
  void Demote(const std::string& key, const std::string& etag) EXCLUDES(mu_);

  CacheStats Stats() const EXCLUDES(mu_);
  uint64_t capacity() const { return opts_.capacity; }
  const std::string& dir() const { return opts_.dir; }
  // A private directory on the cache's filesystem for spool files to be adopted later. Emptied
  // when the cache opens.
  std::string spool_dir() const;

 private:
  friend class EntryRef;
  friend class FillRef;
  using EntryPtr = std::shared_ptr<CacheEntry>;

  ChunkCache(const ChunkCacheOptions& opts, std::unique_ptr<CacheDir> dir);
  void Recover(bool verify_now);
  // Reserves an entry for key under mu_ (state kFilling, pinned once). Returns the victims to
  // unlink in `victims`.
  Result<EntryPtr> ReserveLocked(const std::string& key, uint64_t size, const std::string& etag,
                                 std::vector<std::string>* unlink) REQUIRES(mu_);
  void RemoveLocked(CacheEntry* e, std::vector<std::string>* unlink) REQUIRES(mu_);
  void UnlinkAll(const std::vector<std::string>& names);
  void Unpin(CacheEntry* e) EXCLUDES(mu_);
  Result<EntryRef> CommitFill(EntryPtr e, int fd, std::optional<uint32_t> crc) EXCLUDES(mu_);
  void AbortFill(EntryPtr e, int fd) EXCLUDES(mu_);
  // Publishes a filled entry whose trailer is written and whose file is renamed to final_name.
  void PublishLocked(CacheEntry* e, const std::string& final_name, std::vector<std::string>* unlink)
      REQUIRES(mu_);

  const ChunkCacheOptions opts_;
  const std::unique_ptr<CacheDir> dir_;

  mutable Mutex mu_;
  CondVar verified_cv_;  // a kVerifying entry changed state
  CacheIndex index_ GUARDED_BY(mu_);
  uint64_t next_gen_ GUARDED_BY(mu_) = 1;
  CacheStats stats_ GUARDED_BY(mu_);  // counters only; sizes come from index_
};

}  // namespace kvfs
