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
// Only objects kvfs wrote are the tier's. A bucket (above all its root) may hold other
// applications' objects under names that look like chunks; a LIST cannot tell them apart, so
// every removal candidate is checked with a HEAD first: an object without kvfs's writer mark
// (ObjectInfo::kvfs_written) is foreign - never removed, not counted - and remembered with its
// ETag, so later passes neither HEAD nor count it again while it is unchanged. When candidates
// turn out foreign (or gone), the pass plans again without them, so the tier still reaches its
// bound with kvfs chunks (at most kMaxRounds plans per pass; a next pass goes on).
//
// A removal is conditional: the HEAD right before the DELETE must find the listed ETag, size and
// Last-Modified, and the DELETE carries If-Match: <that ETag>, so a chunk stored again since the
// listing is kept. What remains on a store that ignores If-Match on DELETE (Ceph RGW 16,
// measured; AWS S3 honours it): a chunk stored again between that HEAD and the DELETE - a few
// milliseconds - is deleted. On any store, a chunk stored again with the same bytes keeps S3's
// MD5 ETag, so If-Match alone does not see it; the HEAD's Last-Modified does, up to the DELETE.
//
// Requests per pass: ceil(chunks / 1000) LISTs of the chunks, 1 LIST + 1 GET + 1 DELETE per
// record (at most one per node per interval), 1 HEAD + 1 DELETE per removed chunk, 1 HEAD per
// foreign candidate found (once, while it is unchanged and remembered), 2-3 PUTs (state, status,
// removed batch), 1 LIST of old removed batches. Memory: the chunk list of one pass (about 200
// bytes per chunk: 200 MB at 1M chunks), the last uses newer than their chunk's writing, and at
// most kMaxForeignKeys foreign keys with their ETags (about 200 bytes each: 13 MB); past that
// bound a foreign candidate costs a HEAD in every pass that plans it, and is still never removed.
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
  uint64_t delete_failures = 0;  // removals that failed (the chunks are kept and counted)
  // Objects under the prefix that are not kvfs's (no writer mark): known from earlier passes or
  // found by this one's HEADs. Neither counted nor removed.
  uint64_t foreign = 0;
  // Candidates kept because they changed since the listing (HEAD, or If-Match on the DELETE).
  uint64_t changed = 0;
};

class Collector {
 public:
  static constexpr size_t kMaxForeignKeys = 65536;
  static constexpr int kMaxRounds = 16;

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
  Status ListChunks(std::vector<TierChunk>* chunks, uint64_t* foreign);
  void TrimOldBatches(int64_t now);

  ObjectStore* const store_;
  const TierOptions options_;
  const TierKeys keys_;
  bool state_loaded_ = false;
  // Newest use per chunk key seen in records, where later than the chunk's writing.
  std::unordered_map<std::string, int64_t> last_use_;
  // Objects found not to be kvfs's, with the ETag they had: skipped while unchanged. Forgotten
  // when a listing no longer shows them so; at most kMaxForeignKeys.
  std::unordered_map<std::string, std::string> foreign_;
  TierStatus totals_;
  uint64_t batch_seq_ = 0;
};

}  // namespace kvfs
