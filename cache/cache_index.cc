#include "cache/cache_index.h"

#include <algorithm>

namespace kvfs {

CacheIndex::CacheIndex(uint64_t capacity, double high_watermark, double evict_ratio)
    : capacity_(capacity),
      high_bytes_(static_cast<uint64_t>(static_cast<double>(capacity) * high_watermark)),
      low_bytes_(static_cast<uint64_t>(static_cast<double>(capacity) *
                                       std::max(0.0, high_watermark - evict_ratio))) {}

std::shared_ptr<CacheEntry> CacheIndex::Find(const std::string& key) const {
  auto it = table_.find(key);
  return it == table_.end() ? nullptr : it->second;
}

void CacheIndex::Insert(std::shared_ptr<CacheEntry> e) {
  e->indexed = true;
  used_ += e->size;
  CacheEntry* raw = e.get();
  table_[e->key] = std::move(e);
  if (raw->state != CacheEntry::State::kFilling) Touch(raw);
}

void CacheIndex::Touch(CacheEntry* e) {
  if (!e->indexed) return;
  if (e->in_lru) {
    lru_.splice(lru_.begin(), lru_, e->lru_it);
  } else {
    lru_.push_front(e);
    e->lru_it = lru_.begin();
    e->in_lru = true;
  }
}

void CacheIndex::Demote(CacheEntry* e) {
  if (!e->indexed || !e->in_lru) return;
  lru_.splice(lru_.end(), lru_, e->lru_it);
}

void CacheIndex::Unpin(CacheEntry* e) {
  e->pins--;
  if (e->pins == 0 && !e->indexed) used_ -= e->size;
}

void CacheIndex::Remove(CacheEntry* e) {
  if (!e->indexed) return;
  if (e->in_lru) {
    lru_.erase(e->lru_it);
    e->in_lru = false;
  }
  e->indexed = false;
  if (e->pins == 0) used_ -= e->size;
  table_.erase(e->key);  // may destroy *e if nobody else holds it: touch nothing after this
}

Status CacheIndex::MakeRoom(uint64_t incoming, std::vector<std::shared_ptr<CacheEntry>>* victims) {
  if (used_ + incoming > high_bytes_) {
    // Walk from the least recently used end; pinned entries (open readers, verification) stay.
    auto it = lru_.end();
    while (it != lru_.begin() && used_ + incoming > low_bytes_) {
      --it;
      CacheEntry* e = *it;
      if (e->pins > 0) continue;
      auto next = std::next(it);
      std::shared_ptr<CacheEntry> keep = table_[e->key];
      evictions_++;
      bytes_evicted_ += e->size;
      Remove(e);
      victims->push_back(std::move(keep));
      it = next;
    }
  }
  if (used_ + incoming > capacity_) {
    return Status::ResourceExhausted("cache full: " + std::to_string(incoming) +
                                     " more bytes do not fit in " + std::to_string(capacity_) +
                                     " (" + std::to_string(used_) + " in use, pinned or filling)");
  }
  return Status::OK();
}

}  // namespace kvfs
