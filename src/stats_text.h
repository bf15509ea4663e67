// The text `kvfs stats MOUNTPOINT` prints: one "name value" pair a line (Prometheus-like, easy to
// grep and to scrape), and the Prometheus text of the same. Pure functions; thread-safe.
//
// The statistics, their names and kinds come from the groups' lists (base/stat_list.h):
// fs/read/reader_stats.h, cache/cache_stats.h, objstore/store_stats.h, fs/lookup_stats.h,
// fs/feed_stats.h, fs/write_back_stats.h, tier/tier_stats.h. Nothing here names one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/chunk_cache.h"
#include "fs/feed_stats.h"
#include "fs/lookup_stats.h"
#include "fs/read/cached_reader.h"
#include "fs/write_back_stats.h"
#include "fs/write_stats.h"
#include "objstore/object_store.h"
#include "tier/tier_stats.h"

namespace kvfs {

// A mount's statistics, one value per group; a group the mount does not have is left empty.
struct StatGroups {
  ReaderStats reader;
  CacheStats cache;
  StoreStats store;
  LookupStats lookups;
  FeedStats feed;
  WriteBackStats write_back;
  WriteStats writes;
  std::optional<TierStats> tier;  // with a bounded tier only
};

struct StatRow {
  std::string name;
  uint64_t value;
  bool gauge;  // goes up and down (StatKind::kGauge); else a counter
};
// Every statistic of a mount, in the order `kvfs stats` prints them.
std::vector<StatRow> StatRows(const StatGroups& groups);

std::string FormatStats(const StatGroups& groups);

// The same statistics in the Prometheus text format (metrics_listen): counters get the _total
// suffix, gauges (kGauge in their lists) keep their names; the tier's collector is a label
// (kvfs_tier_collector_info{node="..."} 1).
std::string FormatPrometheus(const StatGroups& groups);

}  // namespace kvfs
