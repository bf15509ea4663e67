#include "src/stats_text.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kvfs {
namespace {

// One printed statistic of a group: its name, kind and where its value sits in the group's struct.
template <typename Stats>
struct StatField {
  const char* name;
  StatKind kind;
  uint64_t Stats::*value;
};

// The groups' lists (base/stat_list.h), as tables of fields, in the order `kvfs stats` prints them.
#define KVFS_READER_FIELD(field, name, kind) {name, StatKind::kind, &ReaderStats::field},
#define KVFS_CACHE_FIELD(field, name, kind) {name, StatKind::kind, &CacheStats::field},
#define KVFS_STORE_FIELD(field, name, kind) {name, StatKind::kind, &StoreStats::field},
#define KVFS_LOOKUP_FIELD(field, name, kind) {name, StatKind::kind, &LookupStats::field},
#define KVFS_FEED_FIELD(field, name, kind) {name, StatKind::kind, &FeedStats::field},
#define KVFS_WRITE_BACK_FIELD(field, name, kind) {name, StatKind::kind, &WriteBackStats::field},
#define KVFS_TIER_FIELD(field, name, kind) {name, StatKind::kind, &TierStats::field},
#define KVFS_WRITE_FIELD(field, name, kind) {name, StatKind::kind, &WriteStats::field},
constexpr StatField<ReaderStats> kReaderFields[] = {KVFS_READER_STATS(KVFS_READER_FIELD)};
constexpr StatField<CacheStats> kCacheFields[] = {KVFS_CACHE_STATS(KVFS_CACHE_FIELD)};
constexpr StatField<StoreStats> kStoreFields[] = {KVFS_STORE_STATS(KVFS_STORE_FIELD)};
constexpr StatField<LookupStats> kLookupFields[] = {KVFS_LOOKUP_STATS(KVFS_LOOKUP_FIELD)};
constexpr StatField<FeedStats> kFeedFields[] = {KVFS_FEED_STATS(KVFS_FEED_FIELD)};
constexpr StatField<WriteBackStats> kWriteBackFields[] = {
    KVFS_WRITE_BACK_STATS(KVFS_WRITE_BACK_FIELD)};
constexpr StatField<TierStats> kTierFields[] = {KVFS_TIER_STATS(KVFS_TIER_FIELD)};
constexpr StatField<WriteStats> kWriteFields[] = {KVFS_WRITE_STATS(KVFS_WRITE_FIELD)};
#undef KVFS_READER_FIELD
#undef KVFS_CACHE_FIELD
#undef KVFS_STORE_FIELD
#undef KVFS_LOOKUP_FIELD
#undef KVFS_FEED_FIELD
#undef KVFS_WRITE_BACK_FIELD
#undef KVFS_TIER_FIELD
#undef KVFS_WRITE_FIELD

template <typename Stats, size_t N>
void AppendRows(const Stats& stats, const StatField<Stats> (&fields)[N],
                std::vector<StatRow>* out) {
  for (const StatField<Stats>& f : fields) {
    if (f.kind == StatKind::kInternal) continue;
    out->push_back({f.name, stats.*f.value, f.kind == StatKind::kGauge});
  }
}

}  // namespace

std::vector<StatRow> StatRows(const StatGroups& g) {
  std::vector<StatRow> rows;
  AppendRows(g.reader, kReaderFields, &rows);
  AppendRows(g.cache, kCacheFields, &rows);
  AppendRows(g.store, kStoreFields, &rows);
  AppendRows(g.lookups, kLookupFields, &rows);
  AppendRows(g.feed, kFeedFields, &rows);
  AppendRows(g.writes, kWriteFields, &rows);
  AppendRows(g.write_back, kWriteBackFields, &rows);
  if (g.tier) AppendRows(*g.tier, kTierFields, &rows);
  return rows;
}

std::string FormatStats(const StatGroups& g) {
  std::string out;
  for (const StatRow& row : StatRows(g)) {
    out += row.name + " " + std::to_string(row.value) + "\n";
  }
  return out;
}

std::string FormatPrometheus(const StatGroups& g) {
  std::string out;
  for (const StatRow& row : StatRows(g)) {
    // Prometheus names counters ..._total.
    const std::string name = row.gauge ? row.name : row.name + "_total";
    out += "# TYPE " + name + (row.gauge ? " gauge\n" : " counter\n");
    out += name + " " + std::to_string(row.value) + "\n";
  }
  if (g.tier) {
    out += "# TYPE kvfs_tier_collector_info gauge\nkvfs_tier_collector_info{node=\"" +
           g.tier->holder + "\"} 1\n";
  }
  return out;
}

}  // namespace kvfs
