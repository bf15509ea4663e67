#include "tier/collector.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "base/log.h"
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
        LogWarn("kvfs: tier: reading use record {}: {}", rec.key, text.status().ToString());
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

Status Collector::ListChunks(std::vector<TierChunk>* chunks, uint64_t* foreign) {
  std::unordered_map<std::string, std::string> still_foreign;
  KVFS_RETURN_IF_ERROR(ListAll(store_, options_.key_prefix, [&](ObjectInfo&& o) {
    if (keys_.IsTierKey(o.key)) return;
    if (options_.is_chunk && !options_.is_chunk(o.key)) return;
    if (auto f = foreign_.find(o.key); f != foreign_.end() && f->second == o.etag) {
      still_foreign.emplace(std::move(o.key), std::move(o.etag));
      return;
    }
    TierChunk c;
    c.size = o.size;
    c.last_use = o.mtime_sec;
    c.mtime_sec = o.mtime_sec;
    c.etag = std::move(o.etag);
    c.key = std::move(o.key);
    chunks->push_back(std::move(c));
  }));
  // A foreign object that is gone or changed (perhaps kvfs stored a chunk there) is checked again.
  foreign_ = std::move(still_foreign);
  *foreign = foreign_.size();
  return Status::OK();
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
  uint64_t foreign_known = 0;
  KVFS_RETURN_IF_ERROR(ListChunks(&chunks, &foreign_known));
  out.foreign = foreign_known;

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

  TierStatus& t = totals_;
  std::string batch;
  bool asked_holder = false, stopped = false, settled = false;
  for (int round = 0; round < kMaxRounds && !stopped; ++round) {
    RemovalPlan plan = PlanRemovals(&chunks, bounds);  // sorts: removals are chunks' first ones
    if (plan.removals.empty()) {
      settled = true;
      break;
    }
    // After a candidate turns out foreign or gone, the plan counted bytes the tier does not hold:
    // the rest are only checked (their foreignness found in one round), removed after a new plan.
    bool replan = false;
    std::vector<bool> leaves(chunks.size(), false);  // removed, foreign or gone
    for (size_t i = 0; i < plan.removals.size() && !stopped; ++i) {
      const Removal& r = plan.removals[i];
      TierChunk& c = chunks[i];
      // A chunk kept this pass is counted, and protected from the next plans (a recent use).
      auto keep = [&] { c.last_use = now; };
      Result<ObjectInfo> head = store_->Head(c.key);
      if (!head.ok()) {
        if (head.status().code() == StatusCode::kNotFound) {  // removed by someone else
          leaves[i] = replan = true;
          continue;
        }
        ++out.delete_failures;
        keep();
        LogWarn("kvfs: tier: checking {} before removing it: {}", c.key, head.status().ToString());
        continue;
      }
      if (!head->kvfs_written) {
        // Another application's object: not the tier's, whatever its name.
        if (foreign_.size() < kMaxForeignKeys) foreign_.emplace(c.key, head->etag);
        ++out.foreign;
        leaves[i] = replan = true;
        continue;
      }
      if ((!c.etag.empty() && head->etag != c.etag) || head->size != c.size ||
          head->mtime_sec > c.mtime_sec + 1) {
        // Stored again since the listing (one second of slack: LIST and HEAD round differently).
        ++out.changed;
        c.size = head->size;
        keep();
        continue;
      }
      if (replan) continue;  // checked; removed (or not) after the next plan
      if (!dry_run) {
        if (!asked_holder) {
          asked_holder = true;
          if (still_holder && !still_holder()) {
            return Status::Cancelled("tier: the lease was lost before removing; nothing removed");
          }
        }
        // A long run of deletes stops while the lease is still surely this node's; the next
        // pass (after a renewal) goes on.
        if (still_holder && !still_holder()) {
          stopped = true;
          break;
        }
        DeleteOptions del;
        del.if_match = head->etag;
        Status st = store_->Delete(c.key, del);
        if (st.code() == StatusCode::kPreconditionFailed) {  // stored again after the HEAD
          ++out.changed;
          keep();
          continue;
        }
        if (!st.ok()) {
          ++out.delete_failures;
          keep();
          LogWarn("kvfs: tier: removing {}: {}", c.key, st.ToString());
          continue;
        }
        last_use_.erase(c.key);
        batch += c.key.substr(options_.key_prefix.size()) + "\n";
        (r.reason == RemovalReason::kAge ? t.removed_age : t.removed_capacity) += 1;
        t.removed_bytes += r.size;
      }
      out.removals.push_back(r);
      leaves[i] = true;
    }
    size_t w = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (!leaves[i]) chunks[w++] = std::move(chunks[i]);
    }
    chunks.resize(w);
    if (!replan) {
      settled = true;
      break;
    }
  }

  uint64_t bytes = 0;
  for (const TierChunk& c : chunks) bytes += c.size;
  t.capacity = options_.capacity_bytes;
  t.max_age_secs = options_.max_age_secs;
  t.holder = options_.node_id;
  t.epoch = epoch;
  t.time = now;
  t.chunks = chunks.size();
  t.bytes = bytes;
  // Over the capacity after a complete plan: only chunks within the grace period are left.
  t.over_capacity_protected =
      settled && !stopped && options_.capacity_bytes > 0 && bytes > options_.capacity_bytes
          ? bytes - options_.capacity_bytes
          : 0;
  if (dry_run) {
    out.status = t;
    return out;
  }
  if (!batch.empty()) {
    Status st =
        WriteSmallObject(store_, keys_.RemovedKey(now, options_.node_id, ++batch_seq_), batch)
            .status();
    // Other nodes then learn of the removals only when their metadata expires.
    if (!st.ok()) LogWarn("kvfs: tier: writing the removed batch: {}", st.ToString());
  }
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
