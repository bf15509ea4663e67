#include "fs/meta_cache.h"

namespace kvfs {

MetaCache::MetaCache(std::chrono::seconds ttl, size_t max_entries, SteadyClock clock)
    : ttl_(ttl), max_entries_(max_entries), clock_(clock ? std::move(clock) : SteadyClock([] {
        return std::chrono::steady_clock::now();
      })) {}

std::optional<MetaEntry> MetaCache::Get(const std::string& key) {
  if (ttl_.count() == 0) return std::nullopt;
  auto now = clock_();
  MutexLock l(&mu_);
  auto it = map_.find(key);
  if (it == map_.end() || it->second.expires <= now) return std::nullopt;
  MetaEntry e = it->second.entry;
  e.left = it->second.expires - now;
  return e;
}

MetaCache::Stale MetaCache::GetStale(const std::string& key) {
  Stale out;
  if (ttl_.count() == 0) return out;
  auto now = clock_();
  MutexLock l(&mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return out;
  out.entry = it->second.entry;
  out.age = now - it->second.stored;
  out.gen = it->second.gen;
  return out;
}

bool MetaCache::PutIfUnchanged(const std::string& key, uint64_t gen, MetaEntry entry) {
  if (ttl_.count() == 0) return true;
  MutexLock l(&mu_);
  auto it = map_.find(key);
  const uint64_t now_gen = it == map_.end() ? 0 : it->second.gen;
  if (now_gen != gen) return false;
  PutLocked(key, std::move(entry));
  return true;
}

void MetaCache::Put(const std::string& key, MetaEntry entry) {
  if (ttl_.count() == 0) return;
  MutexLock l(&mu_);
  PutLocked(key, std::move(entry));
}

void MetaCache::PutLocked(const std::string& key, MetaEntry entry) {
  auto now = clock_();
  if (map_.size() >= max_entries_ && !map_.count(key)) {
    // Over the bound: drop what has expired; if that frees nothing, start over. Rare, and a
    // cleared cache only costs requests, never correctness.
    std::erase_if(map_, [&](const auto& kv) { return kv.second.expires <= now; });
    if (map_.size() >= max_entries_) map_.clear();
  }
  map_[key] = Slot{std::move(entry), now, now + ttl_, next_gen_++};
}

void MetaCache::PutFile(const ObjectInfo& info) {
  MetaEntry e;
  e.kind = MetaEntry::kFile;
  e.info = info;
  Put(info.key, std::move(e));
}

void MetaCache::PutDir(const std::string& key) {
  MetaEntry e;
  e.kind = MetaEntry::kDir;
  e.info.key = key;
  Put(key, std::move(e));
}

void MetaCache::PutMissing(const std::string& key) {
  MetaEntry e;
  e.info.key = key;
  Put(key, std::move(e));
}

void MetaCache::Erase(const std::string& key) {
  MutexLock l(&mu_);
  map_.erase(key);
}

size_t MetaCache::size() const {
  MutexLock l(&mu_);
  return map_.size();
}

}  // namespace kvfs
