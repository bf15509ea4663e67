// The text `kvfs stats MOUNTPOINT` prints: one "name value" pair a line (Prometheus-like, easy to
// grep and to scrape). Pure function; thread-safe.
//
// The statistics, their names and kinds come from the groups' lists (base/stat_list.h):
// fs/read/reader_stats.h, cache/cache_stats.h, objstore/store_stats.h, fs/lookup_stats.h,
// fs/feed_stats.h.
// Nothing here names one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/chunk_cache.h"
#include "fs/feed_stats.h"
#include "fs/write_back_stats.h"
#include "fs/lookup_stats.h"
#include "fs/read/cached_reader.h"
#include "objstore/object_store.h"

namespace kvfs {

struct StatRow {
  std::string name;
  uint64_t value;
  bool gauge;  // goes up and down (StatKind::kGauge); else a counter
};
// Every statistic of a mount, in the order `kvfs stats` prints them.
std::vector<StatRow> StatRows(const ReaderStats& reader, const CacheStats& cache,
                              const StoreStats& store, const LookupStats& lookups,
                              const FeedStats& feed, const WriteBackStats& write_back);

std::string FormatStats(const ReaderStats& reader, const CacheStats& cache, const StoreStats& store,
                        const LookupStats& lookups, const FeedStats& feed, const WriteBackStats& write_back);

// The same statistics in the Prometheus text format (metrics_listen): counters get the _total
// suffix, gauges (kGauge in their lists) keep their names.
std::string FormatPrometheus(const ReaderStats& reader, const CacheStats& cache,
                             const StoreStats& store, const LookupStats& lookups,
                             const FeedStats& feed, const WriteBackStats& write_back);

}  // namespace kvfs
