#include "fs/meta_cache.h"

#include <algorithm>
#include <utility>

namespace kvfs {

MetaCache::MetaCache(std::chrono::milliseconds ttl, size_t max_bytes, SteadyClock clock,
                     std::optional<std::chrono::milliseconds> negative_ttl)
    : ttl_(ttl),
      negative_ttl_(ttl.count() == 0 ? ttl : std::min(ttl, negative_ttl.value_or(ttl))),
      max_bytes_(max_bytes),
      clock_(clock ? std::move(clock)
                   : SteadyClock([] { return std::chrono::steady_clock::now(); })) {}

MetaEntry MetaCache::Out(const Slot& slot) const {
  MetaEntry e = slot.entry;
  e.info.key = slot.key;
  return e;
}

std::optional<MetaEntry> MetaCache::Get(const std::string& key) {
  if (ttl_.count() == 0) return std::nullopt;
  auto now = clock_();
  MutexLock l(&mu_);
  auto it = map_.find(key);
  if (it == map_.end() || it->second->expires <= now) return std::nullopt;
  MetaEntry e = Out(*it->second);
  e.left = it->second->expires - now;
  e.age = now - it->second->stored;
  Touch(it->second);
  return e;
}

MetaCache::Stale MetaCache::GetStale(const std::string& key) {
  Stale out;
  if (ttl_.count() == 0) return out;
  auto now = clock_();
  MutexLock l(&mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return out;
  out.entry = Out(*it->second);
  out.age = now - it->second->stored;
  out.gen = it->second->gen;
  Touch(it->second);
  return out;
}

bool MetaCache::PutIfUnchanged(const std::string& key, uint64_t gen, MetaEntry entry) {
  if (ttl_.count() == 0) return true;
  MutexLock l(&mu_);
  auto it = map_.find(key);
  const uint64_t now_gen = it == map_.end() ? 0 : it->second->gen;
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
  const auto now = clock_();
  const std::chrono::milliseconds ttl = entry.kind == MetaEntry::kMissing ? negative_ttl_ : ttl_;
  if (ttl.count() == 0) {
    // Misses are not cached: the name's older answer (a file it was) must not outlive it either.
    auto it = map_.find(key);
    if (it != map_.end()) Remove(it->second);
    return;
  }
  entry.info.key.clear();
  entry.left = {};
  entry.age = {};
  // The attributes' text too (up to UserXattrs::kMaxEncodedBytes): the bound holds with them.
  const size_t charge = kEntryOverhead + key.size() + entry.info.etag.size() +
                        (entry.info.user_xattrs ? entry.info.user_xattrs->size() : 0);
  auto it = map_.find(key);
  if (it != map_.end()) {
    // A replaced entry keeps its segment and becomes its most recent.
    Slot& s = *it->second;
    bytes_ = bytes_ - s.charge + charge;
    if (s.is_protected) protected_bytes_ = protected_bytes_ - s.charge + charge;
    s.entry = std::move(entry);
    s.stored = now;
    s.expires = now + ttl;
    s.gen = next_gen_++;
    s.charge = charge;
    List& list = s.is_protected ? protected_ : probation_;
    list.splice(list.begin(), list, it->second);
  } else {
    probation_.push_front(Slot{key, std::move(entry), now, now + ttl, next_gen_++, charge, false});
    map_.emplace(probation_.front().key, probation_.begin());
    bytes_ += charge;
  }
  Shrink();
}

void MetaCache::Touch(List::iterator it) {
  List& from = it->is_protected ? protected_ : probation_;
  if (!it->is_protected) {
    it->is_protected = true;
    protected_bytes_ += it->charge;
  }
  protected_.splice(protected_.begin(), from, it);
  Shrink();  // the protected share may be exceeded now
}

void MetaCache::Remove(List::iterator it) {
  bytes_ -= it->charge;
  List& list = it->is_protected ? protected_ : probation_;
  if (it->is_protected) protected_bytes_ -= it->charge;
  map_.erase(std::string_view(it->key));
  list.erase(it);
}

void MetaCache::Shrink() {
  // The protected segment keeps at most 80 %: its least recent go back on probation.
  while (!protected_.empty() && protected_bytes_ > max_bytes_ / 5 * 4) {
    auto last = std::prev(protected_.end());
    last->is_protected = false;
    protected_bytes_ -= last->charge;
    probation_.splice(probation_.begin(), protected_, last);
  }
  while (bytes_ > max_bytes_ && !(probation_.empty() && protected_.empty())) {
    Remove(std::prev(probation_.empty() ? protected_.end() : probation_.end()));
  }
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
  Put(key, std::move(e));
}

void MetaCache::PutMissing(const std::string& key) { Put(key, MetaEntry{}); }

void MetaCache::Erase(const std::string& key) {
  MutexLock l(&mu_);
  auto it = map_.find(key);
  if (it != map_.end()) Remove(it->second);
}

size_t MetaCache::size() const {
  MutexLock l(&mu_);
  return map_.size();
}

size_t MetaCache::bytes() const {
  MutexLock l(&mu_);
  return bytes_;
}

}  // namespace kvfs
