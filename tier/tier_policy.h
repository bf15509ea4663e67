// Which chunks a collector pass removes: a pure function of the chunks, their last uses and the
// bounds, so it is tested without a store.
//
// - Age: a chunk whose last use is more than max_age_secs before `now` goes.
// - Capacity: when the remaining chunks hold more than capacity bytes, the least recently used
//   go until they hold at most kLowWater of it (a pass frees a batch, so the next writes do not
//   each start one).
// - A chunk used within grace_secs of `now` is never removed, for either reason: its use may not
//   have reached the collector yet. So the tier can stay above its capacity when more than that
//   was used within the grace period; the pass says so (over_capacity_protected).
//
// Thread-safety: functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvfs {

inline constexpr double kLowWater = 0.95;

struct TierChunk {
  std::string key;
  uint64_t size = 0;
  int64_t last_use = 0;  // server Unix seconds: its writing (Last-Modified) or its newest use
  // As listed: what the collector's HEAD before a removal must still find (tier/collector.cc).
  std::string etag = {};
  int64_t mtime_sec = 0;
};

enum class RemovalReason { kCapacity, kAge };

struct Removal {
  std::string key;
  uint64_t size = 0;
  RemovalReason reason = RemovalReason::kCapacity;
  int64_t last_use = 0;
};

struct TierBounds {
  uint64_t capacity_bytes = 0;  // 0: none
  int64_t max_age_secs = 0;     // 0: none
  int64_t grace_secs = 0;
  int64_t now = 0;
};

struct RemovalPlan {
  std::vector<Removal> removals;  // oldest use first
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  // Bytes above the capacity that only recently used chunks hold (nothing removable is left).
  uint64_t over_capacity_protected = 0;
};

// Sorts `chunks` by last use (oldest first) and plans the removals.
RemovalPlan PlanRemovals(std::vector<TierChunk>* chunks, const TierBounds& bounds);

const char* ReasonName(RemovalReason r);

}  // namespace kvfs
