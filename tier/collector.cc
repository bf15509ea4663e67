#include "tier/collector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "tier/small_object.h"

namespace kvfs {
namespace {

// A record or the state larger than this is refused (a node writes at most max_pending keys).
constexpr uint64_t kMaxRecordBytes = 64ull << 20;
constexpr uint64_t kMaxStateBytes = 1ull << 30;
// Removed batches stay this many intervals, long enough for every live node to read them.
constexpr int64_t kBatchIntervals = 10;

// Lists every object under `prefix`, page by page, into `each`.
Status ListAll(ObjectStore* store, const std::string& prefix,
               const std::function<void(ObjectInfo&&)>& each) {
  ListRequest req;
  req.prefix = prefix;
  std::string last_token;
  while (true) {
    KVFS_ASSIGN_OR_RETURN(ListResult r, store->List(req));
    for (ObjectInfo& o : r.objects) each(std::move(o));
    if (!r.truncated) return Status::OK();
    if (r.next_continuation_token.empty() || r.next_continuation_token == last_token) {
      return Status::IoError("listing " + prefix + ": the store repeated its continuation token");
    }
    last_token = r.next_continuation_token;
    req.continuation_token = r.next_continuation_token;
  }
}

}  // namespace

Status Collector::LoadState() {
  auto text = ReadSmallObject(store_, keys_.state_key(), kMaxStateBytes);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return Status::OK();  // a new tier
    return text.status().Annotate("tier: reading " + keys_.state_key());
  }
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    int64_t t = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + sp, t);
    if (ec != std::errc() || end != line.data() + sp) continue;
    std::string key = options_.key_prefix + line.substr(sp + 1);
    int64_t& slot = last_use_[key];
    slot = std::max(slot, t);
  }
  return Status::OK();
}

Status Collector::ReadRecords(std::vector<std::string>* consumed, uint64_t* read) {
  std::vector<ObjectInfo> records;
  KVFS_RETURN_IF_ERROR(ListAll(store_, keys_.uses_prefix(),
                               [&](ObjectInfo&& o) { records.push_back(std::move(o)); }));
  for (const ObjectInfo& rec : records) {
    auto text = ReadSmallObject(store_, rec.key, kMaxRecordBytes);
    if (!text.ok()) {
      // Gone meanwhile (another collector consumed it) or unreadable: its uses are lost, which can
      // only make chunks look older. The record stays for the next pass unless it is gone.
      if (text.status().code() != StatusCode::kNotFound) {
        spdlog::warn("kvfs: tier: reading use record {}: {}", rec.key, text.status().ToString());
      }
      continue;
    }
    std::istringstream in(*text);
    std::string rel;
    while (std::getline(in, rel)) {
      if (rel.empty()) continue;
      int64_t& slot = last_use_[options_.key_prefix + rel];
      slot = std::max(slot, rec.mtime_sec);
    }
    consumed->push_back(rec.key);
    ++*read;
  }
  return Status::OK();
}

Status Collector::ListChunks(std::vector<TierChunk>* chunks) {
  return ListAll(store_, options_.key_prefix, [&](ObjectInfo&& o) {
    if (keys_.IsTierKey(o.key)) return;
    if (options_.is_chunk && !options_.is_chunk(o.key)) return;
    TierChunk c;
    c.size = o.size;
    c.last_use = o.mtime_sec;
    c.key = std::move(o.key);
    chunks->push_back(std::move(c));
  });
}

void Collector::TrimOldBatches(int64_t now) {
  std::vector<std::string> old;
  Status st = ListAll(store_, keys_.removed_prefix(), [&](ObjectInfo&& o) {
    if (o.mtime_sec > 0 && o.mtime_sec < now - kBatchIntervals * options_.interval_secs) {
      old.push_back(std::move(o.key));
    }
  });
  if (!st.ok()) return;  // next pass
  for (const std::string& k : old) (void)store_->Delete(k);
}

Result<PassResult> Collector::Pass(int64_t now, uint64_t epoch, bool dry_run,
                                   const std::function<bool()>& still_holder) {
  PassResult out;
  if (!state_loaded_) {
    KVFS_RETURN_IF_ERROR(LoadState());
    state_loaded_ = true;
  }
  std::vector<std::string> consumed;
  KVFS_RETURN_IF_ERROR(ReadRecords(&consumed, &out.records_read));
  std::vector<TierChunk> chunks;
  KVFS_RETURN_IF_ERROR(ListChunks(&chunks));

  // Last uses of chunks that exist and were used after they were written; the rest is forgotten
  // (a chunk removed by anyone, or one whose writing is its newest use).
  std::unordered_map<std::string, int64_t> kept;
  for (TierChunk& c : chunks) {
    auto it = last_use_.find(c.key);
    if (it != last_use_.end() && it->second > c.last_use) {
      c.last_use = it->second;
      kept.emplace(c.key, it->second);
    }
  }
  last_use_ = std::move(kept);

  TierBounds bounds;
  bounds.capacity_bytes = options_.capacity_bytes;
  bounds.max_age_secs = options_.max_age_secs;
  bounds.grace_secs = options_.grace_secs();
  bounds.now = now;
  RemovalPlan plan = PlanRemovals(&chunks, bounds);
  out.removals = plan.removals;

  TierStatus& t = totals_;
  t.capacity = options_.capacity_bytes;
  t.max_age_secs = options_.max_age_secs;
  t.holder = options_.node_id;
  t.epoch = epoch;
  t.time = now;
  t.chunks = chunks.size() - plan.removals.size();
  t.bytes = plan.bytes_after;
  t.over_capacity_protected = plan.over_capacity_protected;
  if (dry_run) {
    out.status = t;
    return out;
  }
  if (!plan.removals.empty() && still_holder && !still_holder()) {
    return Status::Cancelled("tier: the lease was lost before removing; nothing removed");
  }
  std::string batch;
  size_t done = 0;
  for (const Removal& r : plan.removals) {
    // A long run of deletes stops while the lease is still surely this node's; the next pass
    // (after a renewal) goes on.
    if (still_holder && !still_holder()) break;
    ++done;
    Status st = store_->Delete(r.key);
    if (!st.ok()) {
      ++out.delete_failures;
      t.bytes += r.size;
      ++t.chunks;
      spdlog::warn("kvfs: tier: removing {}: {}", r.key, st.ToString());
      continue;
    }
    last_use_.erase(r.key);
    batch += r.key.substr(options_.key_prefix.size()) + "\n";
    (r.reason == RemovalReason::kAge ? t.removed_age : t.removed_capacity) += 1;
    t.removed_bytes += r.size;
  }
  if (!batch.empty()) {
    Status st =
        WriteSmallObject(store_, keys_.RemovedKey(now, options_.node_id, ++batch_seq_), batch)
            .status();
    // Other nodes then learn of the removals only when their metadata expires.
    if (!st.ok()) spdlog::warn("kvfs: tier: writing the removed batch: {}", st.ToString());
  }
  out.removals.resize(done);
  TrimOldBatches(now);
  ++t.passes;
  // State before the records go: a pass cut off between the two only reads them again.
  std::string state;
  for (const auto& [key, when] : last_use_) {
    state += std::to_string(when) + " " + key.substr(options_.key_prefix.size()) + "\n";
  }
  KVFS_RETURN_IF_ERROR(WriteSmallObject(store_, keys_.state_key(), state).status());
  for (const std::string& k : consumed) (void)store_->Delete(k);
  KVFS_RETURN_IF_ERROR(WriteSmallObject(store_, keys_.status_key(), FormatTierStatus(t)).status());
  out.status = t;
  return out;
}

}  // namespace kvfs
