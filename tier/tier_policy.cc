#include "tier/tier_policy.h"

#include <algorithm>

namespace kvfs {

const char* ReasonName(RemovalReason r) { return r == RemovalReason::kAge ? "age" : "capacity"; }

RemovalPlan PlanRemovals(std::vector<TierChunk>* chunks, const TierBounds& b) {
  RemovalPlan plan;
  // Ties (same second) in key order: every pass and every collector decides alike.
  std::sort(chunks->begin(), chunks->end(), [](const TierChunk& x, const TierChunk& y) {
    return x.last_use != y.last_use ? x.last_use < y.last_use : x.key < y.key;
  });
  for (const TierChunk& c : *chunks) plan.bytes_before += c.size;
  uint64_t bytes = plan.bytes_before;
  const int64_t protected_after = b.now - b.grace_secs;
  const uint64_t target =
      b.capacity_bytes == 0
          ? 0
          : static_cast<uint64_t>(static_cast<double>(b.capacity_bytes) * kLowWater);
  bool over = b.capacity_bytes > 0 && bytes > b.capacity_bytes;
  for (const TierChunk& c : *chunks) {
    if (c.last_use > protected_after) break;  // sorted: every later chunk is recent too
    const bool too_old = b.max_age_secs > 0 && c.last_use < b.now - b.max_age_secs;
    // Both tests only get harder down the list (later uses, fewer bytes left): stop at the first
    // chunk that passes both.
    if (!too_old && !(over && bytes > target)) break;
    plan.removals.push_back(
        {c.key, c.size, too_old ? RemovalReason::kAge : RemovalReason::kCapacity, c.last_use});
    bytes -= c.size;
  }
  plan.bytes_after = bytes;
  if (b.capacity_bytes > 0 && bytes > b.capacity_bytes) {
    plan.over_capacity_protected = bytes - b.capacity_bytes;
  }
  return plan;
}

}  // namespace kvfs
