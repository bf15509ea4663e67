// The lookups' statistics: one list (base/stat_list.h says how lists work and how to add a
// statistic), from which LookupCounters (the atomics Filesystem counts in), LookupStats (their
// values) and their lines in `kvfs stats` and the Prometheus endpoint are made.
//
// A lookup here is the resolution of a name in the store's namespace (the kernel's LOOKUP, and
// the opens, creates and unlinks that resolve a name): answered locally (the metadata cache, a
// listing, a cached chunk) or sent to the store, one request each.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_LOOKUP_STATS(X)                                                                      \
  X(local, "kvfs_lookups_local", kCounter)               /* answered without a request */         \
  X(local_misses, "kvfs_lookups_local_misses", kCounter) /* of those: a cached miss */            \
  X(sent, "kvfs_lookups_sent", kCounter) /* answered by the store (one request each) */           \
  X(sent_heads, "kvfs_lookup_heads", kCounter)                                                    \
  X(sent_lists, "kvfs_lookup_lists", kCounter)                                                    \
  X(sent_misses, "kvfs_lookups_sent_missing", kCounter) /* the store had no such name */          \
  /* background HEADs of names answered from a cached chunk (Revalidator) */                      \
  X(revalidations, "kvfs_lookup_revalidations", kCounter)                                         \
  /* cached chunks those found deleted or replaced */                                             \
  X(revalidation_drops, "kvfs_lookup_revalidation_drops", kCounter)                               \
  X(listings, "kvfs_lookup_dir_listings", kCounter) /* whole-directory listings for misses */     \
  /* lookups of a directory scan (ls -l, du, find): they start no prefetch (fs/scan_tracker.h) */ \
  X(scan_lookups, "kvfs_lookups_of_scans", kCounter)

// The values, as Filesystem::LookupStatsNow() reports them.
struct LookupStats {
  KVFS_LOOKUP_STATS(KVFS_STAT_VALUE)
};

// The counters Filesystem counts in (the revalidator's and listings' are read from them).
// Thread-safe (atomics).
struct LookupCounters {
  KVFS_LOOKUP_STATS(KVFS_STAT_ATOMIC)

  LookupStats Snapshot() const {
    LookupStats out;
    KVFS_LOOKUP_STATS(KVFS_STAT_LOAD)
    return out;
  }
};

}  // namespace kvfs
