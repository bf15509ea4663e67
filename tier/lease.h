// Lease: which node is the tier's collector, decided through the store alone.
//
// The lease is the object lease/<epoch> with the highest epoch. Its holder rewrites it once per
// interval (a renewal counter in the body, so its ETag changes). Every other node lists the
// lease prefix once per interval and watches that object: when its (key, ETag) has not changed
// for lease_secs of the watcher's own monotonic clock, the holder is taken to be gone and the
// watcher creates lease/<epoch+1> with If-None-Match: * - of several watchers exactly one
// succeeds. A holder that finds a higher epoch than its own has lost the lease and stops
// collecting. No clocks are compared across nodes: each only measures how long it saw nothing
// change.
//
// Limits: a holder that stalls for longer than lease_secs between its check and its removals may
// act once more after another node took over (removals are of chunks idle for the grace period
// either way). The store must honour If-None-Match on PUT (checked by ProbeConditionalCreate).
//
// Requests: holder 1 LIST + 1 PUT per interval; others 1 LIST per interval, plus 1 GET when the
// lease changed (to learn the holder's name).
//
// Thread-safety: thread-compatible (the agent's thread only).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"
#include "tier/tier_keys.h"

namespace kvfs {

class Lease {
 public:
  using Clock = std::chrono::steady_clock;

  Lease(ObjectStore* store, TierKeys keys, std::string node_id, int64_t lease_secs)
      : store_(store), keys_(std::move(keys)), node_(std::move(node_id)), lease_secs_(lease_secs) {}

  // One step at `now`: renews the lease when held, takes it when it lapsed or none exists,
  // otherwise watches it. Returns whether this node holds it after the step.
  Result<bool> Tick(Clock::time_point now);
  // Gives the lease up (marks this node's epoch released), so another node takes over at its next
  // step instead of after lease_secs. Best effort.
  void Release();

  bool held() const { return held_epoch_.has_value(); }
  uint64_t epoch() const { return held_epoch_.value_or(seen_epoch_); }
  // The node holding the lease as last seen ("" before the first step or with no lease).
  const std::string& holder() const { return holder_; }
  // Server time of this node's last renewal (Last-Modified of the lease object), and when it was
  // observed on the local clock: the collector's "now" without trusting the local wall clock.
  int64_t renewed_server_sec() const { return renewed_server_sec_; }
  Clock::time_point renewed_at() const { return renewed_at_; }

 private:
  Status Renew(Clock::time_point now);
  Result<bool> TryCreate(uint64_t epoch, Clock::time_point now);
  std::string Body() const;

  ObjectStore* const store_;
  const TierKeys keys_;
  const std::string node_;
  const int64_t lease_secs_;

  std::optional<uint64_t> held_epoch_;
  uint64_t renewals_ = 0;
  // The newest lease seen while not holding it, and since when it has not changed.
  uint64_t seen_epoch_ = 0;
  std::string seen_etag_;
  Clock::time_point seen_since_{};
  bool seen_any_ = false;
  std::string holder_;
  int64_t renewed_server_sec_ = 0;
  Clock::time_point renewed_at_{};
};

// Checks that the store refuses a second create of one key with If-None-Match: * (the lease
// depends on it). kNotSupported, naming the store, when it does not.
Status ProbeConditionalCreate(ObjectStore* store, const TierKeys& keys, const std::string& node);

}  // namespace kvfs
