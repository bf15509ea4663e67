// TierStats: what the bounded tier's agent counts (one list of counters and gauges, from which
// the struct, the stats text and the Prometheus text are all made), and those two renderings.
//
// Thread-safety: TierStats is a plain value (callers synchronize); the functions are reentrant.
#pragma once

#include <cstdint>
#include <string>

namespace kvfs {

// The agent's counters, one list: X(name, help). Gauges are listed in KVFS_TIER_GAUGES.
#define KVFS_TIER_COUNTERS(X)                                               \
  X(records_written, "use records this node wrote")                         \
  X(record_failures, "use records that could not be written (uses kept)")   \
  X(uses_dropped, "uses not recorded: the pending set was full")            \
  X(removed_names_applied, "removed chunk names this node forgot")          \
  X(passes, "collector passes this node made")                              \
  X(pass_failures, "collector passes that failed")                          \
  X(removed_capacity, "chunks this node's collector removed over capacity") \
  X(removed_age, "chunks this node's collector removed for their age")      \
  X(removed_bytes, "bytes this node's collector removed")
#define KVFS_TIER_GAUGES(X)                                                  \
  X(bytes, "chunk bytes in the tier (last status, plus this node's writes)") \
  X(chunks, "chunks in the tier at the last pass")                           \
  X(capacity_bytes, "store_capacity (0: none)")                              \
  X(collector_lag_seconds, "seconds since the status object last changed")   \
  X(is_collector, "1 if this node holds the collector's lease")              \
  X(lease_epoch, "the lease epoch last seen")

struct TierStats {
#define KVFS_TIER_STAT_MEMBER(name, help) uint64_t name = 0;
  KVFS_TIER_COUNTERS(KVFS_TIER_STAT_MEMBER)
  KVFS_TIER_GAUGES(KVFS_TIER_STAT_MEMBER)
#undef KVFS_TIER_STAT_MEMBER
  std::string holder;  // the collector's node id, as last seen
};

// "kvfs_tier_..." lines for user.kvfs.stats: every line "name integer" (scripts parse it so).
std::string TierStatsText(const TierStats& s);
// The Prometheus text of the same, plus kvfs_tier_collector_info{node="holder"}.
std::string TierStatsPrometheus(const TierStats& s);

}  // namespace kvfs
