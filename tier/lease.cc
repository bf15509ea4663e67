#include "tier/lease.h"

#include <vector>

#include "base/log.h"
#include "tier/small_object.h"

namespace kvfs {
namespace {

struct LeaseObject {
  uint64_t epoch = 0;
  ObjectInfo info;
};

// Every lease object, ascending by epoch (keys are fixed-width digits).
Result<std::vector<LeaseObject>> ListLeases(ObjectStore* store, const TierKeys& keys) {
  std::vector<LeaseObject> out;
  ListRequest req;
  req.prefix = keys.lease_prefix();
  for (int page = 0; page < 100; ++page) {
    KVFS_ASSIGN_OR_RETURN(ListResult r, store->List(req));
    for (ObjectInfo& o : r.objects) {
      if (auto e = keys.EpochOf(o.key)) out.push_back({*e, std::move(o)});
    }
    if (!r.truncated) break;
    req.continuation_token = r.next_continuation_token;
  }
  return out;
}

std::string HolderOf(const std::string& body) {
  // "node <id>\n..."
  if (!body.starts_with("node ")) return "";
  size_t end = body.find('\n');
  return body.substr(5, end == std::string::npos ? std::string::npos : end - 5);
}

}  // namespace

std::string Lease::Body() const {
  return "node " + node_ + "\nrenewal " + std::to_string(renewals_) + "\n";
}

Status Lease::Renew(Clock::time_point now) {
  ++renewals_;
  const std::string key = keys_.LeaseKey(*held_epoch_);
  KVFS_RETURN_IF_ERROR(WriteSmallObject(store_, key, Body()).status());
  // The PUT's answer carries no Last-Modified: one HEAD gives the server's time of the renewal.
  auto head = store_->Head(key);
  if (head.ok() && head->mtime_sec > 0) {
    renewed_server_sec_ = head->mtime_sec;
    renewed_at_ = now;
  }
  return Status::OK();
}

Result<bool> Lease::TryCreate(uint64_t epoch, Clock::time_point now) {
  ++renewals_;
  auto made = WriteSmallObject(store_, keys_.LeaseKey(epoch), Body(), /*if_none_match=*/true);
  if (!made.ok()) {
    if (made.status().code() == StatusCode::kAlreadyExists) return false;  // another node won
    return made.status();
  }
  held_epoch_ = epoch;
  holder_ = node_;
  LogInfo("kvfs: tier: this node ({}) is the collector (lease epoch {})", node_, epoch);
  // Older epochs are history: the lapsed holder finds ours above its own and stops.
  if (auto all = ListLeases(store_, keys_); all.ok()) {
    for (const LeaseObject& l : *all) {
      if (l.epoch < epoch) (void)store_->Delete(l.info.key);
    }
  }
  KVFS_RETURN_IF_ERROR(Renew(now));
  return true;
}

Result<bool> Lease::Tick(Clock::time_point now) {
  KVFS_ASSIGN_OR_RETURN(std::vector<LeaseObject> leases, ListLeases(store_, keys_));
  if (held_epoch_) {
    if (!leases.empty() && leases.back().epoch > *held_epoch_) {
      LogWarn("kvfs: tier: lease epoch {} taken over (epoch {}); this node stops collecting",
              *held_epoch_, leases.back().epoch);
      held_epoch_.reset();
      seen_any_ = false;
    } else {
      Status st = Renew(now);
      if (!st.ok()) {
        // Not renewed: others will take over after lease_secs; keep trying meanwhile, but do not
        // collect on a lease this node could not confirm.
        return st;
      }
      return true;
    }
  }
  if (leases.empty()) return TryCreate(1, now);
  const LeaseObject& top = leases.back();
  if (!seen_any_ || top.epoch != seen_epoch_ || top.info.etag != seen_etag_) {
    seen_any_ = true;
    seen_epoch_ = top.epoch;
    seen_etag_ = top.info.etag;
    seen_since_ = now;
    auto body = ReadSmallObject(store_, top.info.key, 4096);
    if (!body.ok() || !body->starts_with("released")) {
      if (body.ok()) holder_ = HolderOf(*body);
      return false;
    }
    // Its holder unmounted and gave it up: no need to wait for it to lapse.
    LogInfo("kvfs: tier: collector {} released the lease (epoch {}); taking over",
            holder_.empty() ? "?" : holder_, top.epoch);
    return TryCreate(top.epoch + 1, now);
  }
  if (now - seen_since_ < std::chrono::seconds(lease_secs_)) return false;
  LogInfo("kvfs: tier: collector {} silent for {} s (lease epoch {}); taking over",
          holder_.empty() ? "?" : holder_, lease_secs_, top.epoch);
  return TryCreate(top.epoch + 1, now);
}

void Lease::Release() {
  if (!held_epoch_) return;
  // Overwritten, not deleted: the epoch stays the highest, so no node ever reuses a lower one.
  (void)WriteSmallObject(store_, keys_.LeaseKey(*held_epoch_), "released\n");
  held_epoch_.reset();
}

Status ProbeConditionalCreate(ObjectStore* store, const TierKeys& keys, const std::string& node) {
  const std::string key = keys.root() + "probe-" + node;
  const std::string body = "conditional create probe\n";
  Status first = WriteSmallObject(store, key, body, true).status();
  if (!first.ok()) {
    return first.Annotate("bounded tier: creating " + key + " with If-None-Match: *");
  }
  Result<ObjectInfo> second = WriteSmallObject(store, key, body, true);
  (void)store->Delete(key);
  if (second.ok()) {
    return Status::NotSupported("bounded tier (store_capacity / store_max_age): the store " +
                                store->Describe() +
                                " ignored If-None-Match: * on PUT (a second create of " + key +
                                " succeeded); the collector's lease needs it");
  }
  if (second.status().code() != StatusCode::kAlreadyExists) {
    return second.status().Annotate("bounded tier: probing conditional create of " + key);
  }
  return Status::OK();
}

}  // namespace kvfs
