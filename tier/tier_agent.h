// TierAgent: the per-node side of the bounded tier, on one background thread. Once per
// store_gc_interval it
//   1. writes this node's use record (the chunks NodeTier saw used since the last one),
//   2. reads the status object (the tier's bytes for statvfs and metrics),
//   3. reads the removed batches it has not seen and tells the filesystem to forget those names
//      (so a node's cached copy stops answering for a chunk the tier removed),
//   4. takes a step of the lease (tier/lease.h) and, holding it, runs a collector pass.
// Nothing runs on a FUSE request's path.
//
// Requests per node per interval: 1 PUT (record, when something was used), 1 GET (status),
// 1 LIST (removed batches) + 1 GET per new batch, 1 LIST (lease) + the lease's own; the
// collector's pass on top (tier/collector.h). At the default 30 s: about 500 requests per node
// per hour, whatever the number of chunks used.
//
// Thread-safety: thread-safe; Start once, Stop (or the destructor) once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "objstore/object_store.h"
#include "tier/collector.h"
#include "tier/lease.h"
#include "tier/node_tier.h"
#include "tier/tier_options.h"
#include "tier/tier_stats.h"
#include "tier/tier_status.h"

namespace kvfs {

class TierAgent {
 public:
  // `on_removed` is called on the agent's thread with each chunk key a collector removed.
  TierAgent(std::shared_ptr<ObjectStore> store, TierOptions options, std::shared_ptr<NodeTier> node,
            std::function<void(const std::string&)> on_removed);
  ~TierAgent();
  TierAgent(const TierAgent&) = delete;
  TierAgent& operator=(const TierAgent&) = delete;

  void Start() EXCLUDES(mu_);
  // Writes the last record, gives the lease up, joins the thread.
  void Stop() EXCLUDES(mu_);
  // Runs the next step now (a full pending set).
  void Wake() EXCLUDES(mu_);
  // Runs a step now and waits for it to end (kvfs gc MOUNTPOINT), at most `timeout`.
  Status RunStep(std::chrono::milliseconds timeout) EXCLUDES(mu_);

  // Printed with the mount's other statistics (src/stats_text.cc).
  TierStats Stats() const EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);
  void Step();
  void FlushUses();
  void ReadStatus();
  void ApplyRemovals();
  void LeaseAndCollect();

  const std::shared_ptr<ObjectStore> store_;
  const TierOptions options_;
  const TierKeys keys_;
  const std::shared_ptr<NodeTier> node_;
  const std::function<void(const std::string&)> on_removed_;
  // The agent thread's own state (only Step and what it calls touch these).
  Lease lease_;
  Collector collector_;
  uint64_t record_seq_ = 0;
  std::string last_batch_;  // newest removed batch applied
  std::string status_etag_;
  std::chrono::steady_clock::time_point status_changed_at_{};

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool wake_ GUARDED_BY(mu_) = false;
  uint64_t steps_done_ GUARDED_BY(mu_) = 0;
  bool in_step_ GUARDED_BY(mu_) = false;
  TierStats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

// A node id: host name, process id and random bits (unique across restarts on one host).
std::string MakeNodeId();

}  // namespace kvfs
