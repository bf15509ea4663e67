// The two renderings of TierStats, both made from the one list of counters and gauges.
#include "tier/tier_stats.h"

namespace kvfs {

std::string TierStatsText(const TierStats& s) {
  std::string out;
#define KVFS_TIER_TEXT(name, help) out += "kvfs_tier_" #name " " + std::to_string(s.name) + "\n";
  KVFS_TIER_COUNTERS(KVFS_TIER_TEXT)
  KVFS_TIER_GAUGES(KVFS_TIER_TEXT)
#undef KVFS_TIER_TEXT
  // Every line of the stats text is "name integer" (scripts parse it so): the collector's name
  // is in the Prometheus text only (kvfs_tier_collector_info).
  return out;
}

std::string TierStatsPrometheus(const TierStats& s) {
  std::string out;
#define KVFS_TIER_COUNTER(name, help)                                         \
  out += "# HELP kvfs_tier_" #name "_total " help "\n# TYPE kvfs_tier_" #name \
         "_total counter\nkvfs_tier_" #name "_total " +                       \
         std::to_string(s.name) + "\n";
#define KVFS_TIER_GAUGE(name, help)                                                                \
  out += "# HELP kvfs_tier_" #name " " help "\n# TYPE kvfs_tier_" #name " gauge\nkvfs_tier_" #name \
         " " +                                                                                     \
         std::to_string(s.name) + "\n";
  KVFS_TIER_COUNTERS(KVFS_TIER_COUNTER)
  KVFS_TIER_GAUGES(KVFS_TIER_GAUGE)
#undef KVFS_TIER_COUNTER
#undef KVFS_TIER_GAUGE
  out +=
      "# HELP kvfs_tier_collector_info the node holding the collector's lease\n"
      "# TYPE kvfs_tier_collector_info gauge\nkvfs_tier_collector_info{node=\"" +
      s.holder + "\"} 1\n";
  return out;
}

}  // namespace kvfs
