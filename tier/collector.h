// Collector: one pass of the tier's collector, run by the node that holds the lease (TierAgent)
// or by `kvfs gc`.
//
// A pass: reads the nodes' use records (uses/), lists every chunk under the prefix, takes each
// chunk's last use as the later of its Last-Modified and its newest record, plans the removals
// (tier_policy.h), deletes them, writes the batch of removed names (removed/, so other nodes drop
// them from their caches), the last uses records do not show (state), the status, and deletes
// the records it consumed. Records carry no clock of the node that wrote them: a use counts at
// the record's Last-Modified, the store's own clock.
//
// Requests per pass: ceil(chunks / 1000) LISTs of the chunks, 1 LIST + 1 GET + 1 DELETE per
// record (at most one per node per interval), 1 DELETE per removed chunk, 2-3 PUTs (state,
// status, removed batch), 1 LIST of old removed batches. Memory: the chunk list of one pass
// (about 150 bytes per chunk: 150 MB at 1M chunks) and the last uses newer than their chunk's
// writing.
//
// Thread-safety: thread-compatible (one pass at a time, on one thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "objstore/object_store.h"
#include "tier/tier_keys.h"
#include "tier/tier_options.h"
#include "tier/tier_policy.h"
#include "tier/tier_status.h"

namespace kvfs {

struct PassResult {
  TierStatus status;              // as written to the status object (cumulative counters)
  std::vector<Removal> removals;  // this pass's (planned, for a dry run)
  uint64_t records_read = 0;
  uint64_t delete_failures = 0;
};

class Collector {
 public:
  Collector(ObjectStore* store, TierOptions options)
      : store_(store), options_(std::move(options)), keys_(options_.key_prefix) {}

  // One pass at server time `now`. `epoch`: the lease epoch it runs under (0: none, kvfs gc
  // --dry-run). `still_holder` is asked right before the first delete; false cancels the pass
  // (kCancelled) with nothing removed. A dry run plans and reports, and writes or deletes
  // nothing.
  Result<PassResult> Pass(int64_t now, uint64_t epoch, bool dry_run,
                          const std::function<bool()>& still_holder);

 private:
  Status LoadState();
  Status ReadRecords(std::vector<std::string>* consumed, uint64_t* read);
  Status ListChunks(std::vector<TierChunk>* chunks);
  void TrimOldBatches(int64_t now);

  ObjectStore* const store_;
  const TierOptions options_;
  const TierKeys keys_;
  bool state_loaded_ = false;
  // Newest use per chunk key seen in records, where later than the chunk's writing.
  std::unordered_map<std::string, int64_t> last_use_;
  TierStatus totals_;
  uint64_t batch_seq_ = 0;
};

}  // namespace kvfs
