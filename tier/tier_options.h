// TierOptions: the settings of a bounded shared tier (store_capacity, store_max_age,
// store_gc_interval), and what the daemon tells the tier about its chunks.
//
// The tier is every chunk under the mount's key prefix, shared by all nodes that mount it. With a
// capacity or an age set, the nodes keep it bounded together, through the store alone
// (docs/bounded-tier.md): each node records which chunks it used, one elected node (the
// collector) removes the least recently used chunks over the capacity and those unused for longer
// than the age.
//
// Thread-safety: a plain value (thread-compatible).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kvfs {

struct TierOptions {
  uint64_t capacity_bytes = 0;  // store_capacity; 0: no capacity bound
  int64_t max_age_secs = 0;     // store_max_age; 0: no age bound
  // store_gc_interval: how often a node writes its use record, reads the tier's status and the
  // removals, and the collector renews its lease and makes a pass.
  int64_t interval_secs = 30;
  std::string key_prefix;  // "" or "a/b/": the tier is every chunk under it
  std::string node_id;     // this daemon, unique among the nodes (host, pid, random)
  // Whether a key (under key_prefix) names a chunk file of the mount: only these are counted and
  // removed; markers, kvfs's own records and other applications' objects never are.
  std::function<bool(std::string_view key)> is_chunk;
  // false (a read_only mount): the node records its uses but never becomes the collector, so
  // it removes nothing.
  bool may_collect = true;
  // tier_at_bucket_root: a tier may cover a whole bucket (no key prefix). Off by default: a
  // bucket's root is where other applications' objects live, and a capacity of the bucket is
  // rarely what is meant. The collector removes only objects kvfs wrote in any case.
  bool at_bucket_root = false;

  bool enabled() const { return capacity_bytes > 0 || max_age_secs > 0; }
  // A collector whose lease object did not change for this long is taken to be gone. Watchers
  // look once per interval, so another node takes over within 3 intervals of the collector's
  // death: the lease time users are told.
  int64_t lease_secs() const { return 2 * interval_secs; }
  // A chunk used this recently is never removed: its use may not have reached the collector yet
  // (a node writes its record once per interval; the collector reads them once per interval).
  int64_t grace_secs() const { return 2 * interval_secs; }
};

// Refuses a bounded tier at the root of a bucket (key_prefix "") unless tier_at_bucket_root is
// set. `own_store`: a file:// store, kvfs's own directory, whose root holds only kvfs's objects.
// Called by the mount and by `kvfs gc` before they touch the store.
inline Status CheckTierPlacement(const TierOptions& o, bool own_store) {
  if (!o.enabled() || !o.key_prefix.empty() || own_store || o.at_bucket_root) return Status::OK();
  return Status::InvalidArgument(
      "bounded tier (store_capacity / store_max_age) at the root of a bucket (no key prefix): the "
      "bucket may hold other applications' objects; mount a prefix (s3://BUCKET/PREFIX) or set "
      "tier_at_bucket_root: true (-o tier_at_bucket_root=true) to bound the whole bucket's kvfs "
      "chunks");
}

}  // namespace kvfs
