#include "fs/revalidator.h"

#include "base/deadline.h"
#include "base/log.h"

namespace kvfs {

bool Revalidator::SameObject(const ObjectInfo& a, const ObjectInfo& b) {
  // An empty ETag is unknown (RGW's multipart completion sends none): size decides then.
  return a.size == b.size && (a.etag.empty() || b.etag.empty() || a.etag == b.etag);
}

Revalidator::Revalidator(std::shared_ptr<ObjectStore> store, MetaCache* meta, ChunkReader* reader,
                         int64_t timeout_ms)
    : store_(std::move(store)), meta_(meta), reader_(reader), timeout_ms_(timeout_ms) {}

void Revalidator::Enqueue(const ObjectInfo& served, uint64_t gen) {
  {
    MutexLock l(&mu_);
    if (queued_.size() >= kMaxQueued || !queued_.insert(served.key).second) return;
  }
  worker_.Schedule([this, item = Item{served, gen}] {
    Check(item);
    MutexLock l(&mu_);
    queued_.erase(item.served.key);
    checks_++;
  });
}

uint64_t Revalidator::checks() const {
  MutexLock l(&mu_);
  return checks_;
}

uint64_t Revalidator::dropped() const {
  MutexLock l(&mu_);
  return dropped_;
}

void Revalidator::Check(const Item& item) {
  const std::string& key = item.served.key;
  const ScopedDeadline deadline(timeout_ms_, "blocking_timeout (revalidation)");
  Result<ObjectInfo> head = store_->Head(key);
  MetaEntry e;
  e.info.key = key;
  if (head.ok()) {
    head->key = key;
    e.kind = MetaEntry::kFile;
    e.info = *head;
    const bool same = SameObject(*head, item.served);
    if (meta_->PutIfUnchanged(key, item.gen, e) && !same) {
      LogInfo(
          "kvfs: {} changed in the store (size {} etag '{}', cached {} '{}'): dropping "
          "the local copy",
          key, head->size, head->etag, item.served.size, item.served.etag);
      reader_->Invalidate(key);
      MutexLock l(&mu_);
      dropped_++;
    }
    return;
  }
  if (head.status().code() == StatusCode::kNotFound) {
    if (meta_->PutIfUnchanged(key, item.gen, e)) {
      LogInfo("kvfs: {} is gone from the store: dropping the local copy", key);
      reader_->Invalidate(key);
      MutexLock l(&mu_);
      dropped_++;
    }
    return;
  }
  // The store is down or slow: keep serving the local copy until its trust runs out.
  LogDebug("kvfs: revalidating {} failed: {}", key, head.status().ToString());
}

}  // namespace kvfs
