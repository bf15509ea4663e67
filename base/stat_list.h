// Statistics lists: every group of statistics (the read path's, the cache's, the store's, the
// lookups', the fleet feed's, write-back's, the bounded tier's) is one X-macro list, and
// everything else - the struct of values, the atomic counters that feed it, the lines of
// `kvfs stats` and of the Prometheus endpoint, counter or gauge - is expanded from it. (The
// store's latency histograms, labelled by operation, are made from the operation list instead:
// objstore/metered_store.h.)
//
// A list entry is X(field, "name", kind):
//   field  the member of the group's struct (uint64_t values; atomics where the group counts live)
//   name   the name in `kvfs stats` (src/stats_text.cc); Prometheus adds _total to counters
//   kind   kCounter  only grows
//          kGauge    goes up and down (in flight, bytes held): printed under its own name
//          kInternal kept in the struct for the code and tests, not printed
//
// Adding a statistic to a group: one line in its list (fs/read/reader_stats.h,
// cache/cache_stats.h, objstore/store_stats.h), then count it where it happens; nothing else
// names it. Adding a group (e.g. a tier's): a list and its struct in the group's own layer,
// written like those three (KVFS_STAT_VALUE below for the struct; KVFS_STAT_ATOMIC and a Snapshot()
// with KVFS_STAT_LOAD where the group counts in atomics, as fs/read/reader_stats.h does), then a
// member of StatGroups (src/stats_text.h), and in src/stats_text.cc a field table from the list and
// an AppendRows call, in the order to print.
#pragma once

namespace kvfs {

enum class StatKind { kCounter, kGauge, kInternal };

}  // namespace kvfs

// Expanders for the lists: a uint64_t field, an atomic counter, and a copy from atomics to values.
#define KVFS_STAT_VALUE(field, name, kind) uint64_t field = 0;
#define KVFS_STAT_ATOMIC(field, name, kind) std::atomic<uint64_t> field{0};
#define KVFS_STAT_LOAD(field, name, kind) out.field = field.load();
