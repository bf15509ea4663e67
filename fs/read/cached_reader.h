// CachedReader: the ChunkReader of kvfs. Serves opens from the chunk cache when the object is
// there (hit: reads come from the cache file, fd-backed for splicing), and otherwise downloads the
// whole object once into the cache with parallel ranged GETs while handles read the bytes as they
// arrive (miss). Concurrent opens of one object share its download (single flight). Objects that
// cannot be cached (bigger than the cache, no cache, cache full of pinned entries) are streamed:
// each read is parallel ranged GETs into the caller's buffer.
//
// Prefetch: a lookup of an object not cached here queues its download, started on a worker
// thread rather than the lookup's (PrefetchQueue bounds how many run and how many bytes they
// hold); an Open of it joins the download or hits its entry, and counts as the miss it was.
//
// Memory: downloads hold no part in memory (each GET streams into the cache file), so their cost
// is the store's transfer buffers; streaming reads use only the caller's buffer.
//
// Thread-safe. Lock order: CachedReader::mu_ is a leaf (held only to look up or change the table
// of downloads); ObjectFetch::mu_ and ChunkCache::mu_ are leaves.
// All handles must be closed before the reader is destroyed; the destructor waits for downloads
// still running.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/executor.h"
#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "cache/chunk_cache.h"
#include "fs/read/chunk_reader.h"
#include "fs/read/fetch_context.h"
#include "fs/read/prefetch_queue.h"
#include "fs/read/reader_stats.h"
#include "objstore/object_store.h"

namespace kvfs {

class StreamHandle;

struct CachedReaderOptions {
  // Bytes per ranged GET. Object-store guidance: at least 15 MB per request for throughput.
  uint64_t part_size = 16ull << 20;
  // Ranged GETs in flight per object (download or streamed read).
  int max_parallel_parts = 8;
  // Threads that finish downloaded parts and commit complete downloads to the cache.
  int write_threads = 2;
  // `verify`: see FetchContext::verify.
  bool verify = true;
  // Downloads started by lookups (prefetch, prefetch_downloads, prefetch_bytes,
  // prefetch_unread_secs).
  PrefetchOptions prefetch;
};

class CachedReader : public ChunkReader, private FetchOwner {
 public:
  // `cache` may be null (caching off: everything streams); it must outlive the reader.
  CachedReader(std::shared_ptr<ObjectStore> store, ChunkCache* cache, CachedReaderOptions opts);
  ~CachedReader() override;

  Result<std::unique_ptr<ReadHandle>> Open(const std::string& key, const ObjectInfo& info) override
      EXCLUDES(mu_);
  bool AdoptWritten(const std::string& key, const ObjectInfo& info, const std::string& path,
                    std::optional<uint32_t> crc) override EXCLUDES(mu_);
  void Invalidate(const std::string& key) override EXCLUDES(mu_);
  void Prefetch(const std::string& key, const ObjectInfo& info) override EXCLUDES(mu_);
  std::optional<CachedCopyInfo> CachedCopy(const std::string& key) override;
  uint64_t EvictableBytes() const override { return cache_ ? cache_->Stats().bytes : 0; }
  bool ServesFromCache(const ObjectInfo& info) const override {
    return cache_ != nullptr && info.size <= cache_->capacity();
  }

  ReaderStats Stats() const;
  const CachedReaderOptions& options() const { return opts_; }

 private:
  void FetchFinished(const std::string& key, const ObjectFetch* f) override EXCLUDES(mu_);
  void FetchDrained() override EXCLUDES(mu_);
  std::unique_ptr<ReadHandle> Stream(const ObjectInfo& info);
  FetchContext Context();
  // Starts the prefetches the queue's bounds allow now.
  void PumpPrefetches() EXCLUDES(mu_);
  void StartPrefetch(const ObjectInfo& info) EXCLUDES(mu_);
  // A stream handle not counted as a streamed open: a FetchHandle's fallback for a full disk.
  std::unique_ptr<StreamHandle> StreamFallback(const ObjectInfo& info);
  // Finds the download of key, or registers `fresh` as it. Sets *mismatch if a download of
  // another version of key is running.
  std::shared_ptr<ObjectFetch> FindOrAdd(const std::string& key, const ObjectInfo& info,
                                         std::shared_ptr<ObjectFetch> fresh, bool* mismatch)
      EXCLUDES(mu_);

  const std::shared_ptr<ObjectStore> store_;
  ChunkCache* const cache_;
  const CachedReaderOptions opts_;
  ReaderCounters counters_;
  PrefetchQueue prefetch_;  // after counters_, which it counts in

  mutable Mutex mu_;
  CondVar drained_cv_;
  std::unordered_map<std::string, std::shared_ptr<ObjectFetch>> fetches_ GUARDED_BY(mu_);
  // The downloads of fetches_ that a prefetch started (told to prefetch_ when they finish).
  std::unordered_set<const ObjectFetch*> prefetching_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;  // destructor: start no more prefetches
  int starting_ GUARDED_BY(mu_) = 0;       // StartPrefetch calls between registering and Start

  Executor workers_;  // last: destroyed (joined) first
};

}  // namespace kvfs
