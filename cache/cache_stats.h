// The chunk cache's statistics: one list (base/stat_list.h says how lists work and how to add a
// statistic), from which CacheStats and its lines in `kvfs stats` and the Prometheus endpoint are
// made. ChunkCache::Stats() fills it.
#pragma once

#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_CACHE_STATS(X)                                                                      \
  X(entries, "kvfs_cache_entries", kGauge)                                                       \
  /* bytes in use, including fills in progress and pinned removed entries */                     \
  X(bytes, "kvfs_cache_bytes", kGauge)                                                           \
  X(capacity, "kvfs_cache_capacity_bytes", kGauge)                                               \
  X(hits, "kvfs_cache_hits", kInternal)                                                          \
  X(misses, "kvfs_cache_misses", kInternal)                                                      \
  X(evictions, "kvfs_cache_evictions", kCounter)                                                 \
  X(bytes_evicted, "kvfs_cache_bytes_evicted", kCounter)                                         \
  X(fills, "kvfs_cache_fills", kCounter)             /* committed fills (incl. adopted files) */ \
  X(fill_aborts, "kvfs_cache_fill_aborts", kCounter) /* fills dropped without commit */          \
  X(adopted, "kvfs_cache_adopted_writes", kCounter)  /* files taken over by AdoptFile */         \
  X(fill_rejected, "kvfs_cache_fill_rejected", kCounter) /* StartFill/AdoptFile found no room */ \
  X(recovered, "kvfs_cache_recovered_entries", kCounter) /* entries found at start */            \
  X(recovery_dropped, "kvfs_cache_recovery_dropped", kCounter)                                   \
  /* recovered entries whose checksum failed (dropped) */                                        \
  X(verify_failures, "kvfs_cache_verify_failures", kCounter)                                     \
  /* Lookups that could not open a good entry (EMFILE...): kept */                               \
  X(open_failures, "kvfs_cache_open_failures", kCounter)

struct CacheStats {
  KVFS_CACHE_STATS(KVFS_STAT_VALUE)
};

}  // namespace kvfs
