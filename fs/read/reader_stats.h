// The read path's statistics: one list (base/stat_list.h says how lists work and how to add a
// statistic), from which ReaderCounters (the atomics the read path counts in), ReaderStats (their
// values) and their lines in `kvfs stats` and the Prometheus endpoint are made.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_READER_STATS(X)                                                                       \
  X(opens, "kvfs_read_opens", kCounter)                                                            \
  X(hits, "kvfs_read_hits", kCounter) /* opens served from a complete cache entry */               \
  /* hits the kernel reads from the cache file itself (FUSE passthrough): their bytes are not  */  \
  /* in kvfs_read_bytes_from_cache                                                             */  \
  X(passthrough_opens, "kvfs_read_passthrough_opens", kCounter)                                    \
  X(misses, "kvfs_read_misses", kCounter) /* opens that started a download */                      \
  /* opens that joined a download in progress (single flight) */                                   \
  X(shared_downloads, "kvfs_read_shared_downloads", kCounter)                                      \
  /* opens read without caching (too big, cache off or full) */                                    \
  X(streamed, "kvfs_read_streamed_opens", kCounter)                                                \
  X(bytes_from_cache, "kvfs_read_bytes_from_cache", kCounter) /* read by handles from entries */   \
  X(bytes_from_store, "kvfs_read_bytes_from_store", kCounter) /* received by ranged GETs */        \
  X(get_requests, "kvfs_store_get_requests", kCounter)                                             \
  X(fetches_in_flight, "kvfs_downloads_in_flight", kGauge)                                         \
  X(parts_in_flight, "kvfs_get_parts_in_flight", kGauge)                                           \
  X(fetch_failures, "kvfs_download_failures", kCounter) /* downloads that ended in an error */     \
  /* downloads whose bytes did not match the checksum recorded with the object (EIO to readers) */ \
  X(verify_failures, "kvfs_download_verify_failures", kCounter)                                    \
  /* downloads completed without a recorded checksum to check (multipart uploads, other        */  \
  /* writers) or with verification off                                                         */  \
  X(unverified, "kvfs_downloads_unverified", kCounter)                                             \
  /* downloads served slice by slice, each slice once it matched its writer's checksum */          \
  X(verified_by_slice, "kvfs_downloads_verified_by_slice", kCounter)                               \
  X(read_errors, "kvfs_read_errors", kCounter) /* Read/ReadFd calls that returned an error */      \
  /* Prefetch on lookup (fs/read/prefetch_queue.h): downloads a lookup started */                  \
  X(prefetches_started, "kvfs_prefetches_started", kCounter)                                       \
  /* opens of a chunk a lookup prefetched (downloading or done); counted as misses too */          \
  X(prefetches_joined, "kvfs_prefetches_joined", kCounter)                                         \
  /* prefetched chunks not read within prefetch_unread_secs (they stay cached, under LRU) */       \
  X(prefetches_unread, "kvfs_prefetches_unread", kCounter)                                         \
  X(prefetch_bytes_unread, "kvfs_prefetch_bytes_unread", kCounter)                                 \
  /* of the joined: gone from the cache before the read (evicted, or damaged): downloaded again */ \
  X(prefetches_evicted, "kvfs_prefetches_evicted", kCounter)                                       \
  /* queued prefetches dropped: the queue was full, or the object changed or went */               \
  X(prefetches_cancelled, "kvfs_prefetches_cancelled", kCounter)                                   \
  X(prefetches_failed, "kvfs_prefetches_failed", kCounter) /* downloads that did not complete */   \
  X(prefetches_queued, "kvfs_prefetches_queued", kGauge)                                           \
  /* bytes of chunks prefetched and not read yet, downloading included (prefetch_bytes bounds) */  \
  X(prefetch_bytes_held, "kvfs_prefetch_bytes_held", kGauge)

// The values, as CachedReader::Stats() reports them.
struct ReaderStats {
  KVFS_READER_STATS(KVFS_STAT_VALUE)
};

// The counters of the read path. Thread-safe (atomics).
struct ReaderCounters {
  KVFS_READER_STATS(KVFS_STAT_ATOMIC)

  // The values now, read one at a time.
  ReaderStats Snapshot() const {
    ReaderStats out;
    KVFS_READER_STATS(KVFS_STAT_LOAD)
    return out;
  }
};

}  // namespace kvfs
