// TierStats: what the bounded tier's agent counts - one list in the form every group of
// statistics uses (base/stat_list.h), printed by `kvfs stats` and the Prometheus endpoint with the
// others (src/stats_text.cc).
//
// Thread-safety: TierStats is a plain value (callers synchronize).
#pragma once

#include <cstdint>
#include <string>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_TIER_STATS(X)                                                                        \
  X(records_written, "kvfs_tier_records_written", kCounter) /* use records this node wrote */     \
  /* use records that could not be written (the uses are kept for the next) */                    \
  X(record_failures, "kvfs_tier_record_failures", kCounter)                                       \
  /* uses not recorded: the pending set was full */                                               \
  X(uses_dropped, "kvfs_tier_uses_dropped", kCounter)                                             \
  /* removed chunk names this node forgot */                                                      \
  X(removed_names_applied, "kvfs_tier_removed_names_applied", kCounter)                           \
  X(passes, "kvfs_tier_passes", kCounter)               /* collector passes this node made */     \
  X(pass_failures, "kvfs_tier_pass_failures", kCounter) /* collector passes that failed */        \
  /* chunks this node's collector removed over capacity, for their age; bytes it removed */       \
  X(removed_capacity, "kvfs_tier_removed_capacity", kCounter)                                     \
  X(removed_age, "kvfs_tier_removed_age", kCounter)                                               \
  X(removed_bytes, "kvfs_tier_removed_bytes", kCounter)                                           \
  /* chunk bytes in the tier (the last status, plus this node's writes since) */                  \
  X(bytes, "kvfs_tier_bytes", kGauge)                                                             \
  X(chunks, "kvfs_tier_chunks", kGauge)                 /* chunks in the tier at the last pass */ \
  X(capacity_bytes, "kvfs_tier_capacity_bytes", kGauge) /* store_capacity (0: none) */            \
  /* seconds since the status object last changed */                                              \
  X(collector_lag_seconds, "kvfs_tier_collector_lag_seconds", kGauge)                             \
  X(is_collector, "kvfs_tier_is_collector", kGauge) /* 1 if this node holds the lease */          \
  X(lease_epoch, "kvfs_tier_lease_epoch", kGauge)   /* the lease epoch last seen */

struct TierStats {
  KVFS_TIER_STATS(KVFS_STAT_VALUE)
  // The collector's node id, as last seen: a label, not a number, so the Prometheus text alone
  // shows it (kvfs_tier_collector_info{node="..."} 1; every `kvfs stats` line is "name integer").
  std::string holder;
};

}  // namespace kvfs
