#include "fs/unlinked_names.h"

namespace kvfs {

bool UnlinkedNames::SameObject(const ObjectInfo& a, const ObjectInfo& b) {
  if (a.size != b.size) return false;
  // ETags name the bytes; without them (some stores) size and Last-Modified must both match.
  if (!a.etag.empty() && !b.etag.empty()) return a.etag == b.etag;
  return a.mtime_sec == b.mtime_sec;
}

void UnlinkedNames::Hide(const ObjectInfo& info) {
  if (max_entries_ == 0) return;
  MutexLock l(&mu_);
  // An unlink that found the older object while a newer version's upload is on its way: both
  // are hidden until that upload ends (the name must not show the new object meanwhile).
  auto it = hidden_.find(info.key);
  if (it != hidden_.end() && it->second.pending) {
    it->second.info = info;
    it->second.has_info = true;
    return;
  }
  Hidden h;
  h.info = info;
  h.has_info = true;
  InsertLocked(info.key, std::move(h));
}

void UnlinkedNames::HidePending(const std::string& key) {
  if (max_entries_ == 0) return;
  MutexLock l(&mu_);
  auto it = hidden_.find(key);
  if (it != hidden_.end()) {
    it->second.pending = true;  // hidden already: the upload's object will be too
    return;
  }
  Hidden h;
  h.info.key = key;
  h.pending = true;
  InsertLocked(key, std::move(h));
}

void UnlinkedNames::ForgetPending(const std::string& key) {
  MutexLock l(&mu_);
  auto it = hidden_.find(key);
  if (it == hidden_.end() || !it->second.pending) return;
  it->second.pending = false;
  if (!it->second.has_info) hidden_.erase(it);
}

void UnlinkedNames::ForgetGone(const std::string& key) {
  MutexLock l(&mu_);
  auto it = hidden_.find(key);
  if (it != hidden_.end() && !it->second.pending) hidden_.erase(it);
}

void UnlinkedNames::InsertLocked(const std::string& key, Hidden h) {
  const uint64_t seq = next_seq_++;
  h.seq = seq;
  hidden_[key] = std::move(h);
  order_.emplace_back(key, seq);
  while (hidden_.size() > max_entries_ && !order_.empty()) {
    auto [key, s] = order_.front();
    order_.pop_front();
    auto it = hidden_.find(key);
    if (it != hidden_.end() && it->second.seq == s) hidden_.erase(it);
  }
  // Entries for keys hidden again or forgotten linger in order_; compact when it doubles.
  // (A loop, not erase_if with a lambda: the thread-safety analysis does not see mu_ held inside
  // a lambda.)
  if (order_.size() > 2 * hidden_.size() + 64) {
    std::deque<std::pair<std::string, uint64_t>> live;
    for (auto& ks : order_) {
      auto it = hidden_.find(ks.first);
      if (it != hidden_.end() && it->second.seq == ks.second) live.push_back(std::move(ks));
    }
    order_.swap(live);
  }
}

bool UnlinkedNames::Hides(const ObjectInfo& info) {
  MutexLock l(&mu_);
  auto it = hidden_.find(info.key);
  if (it == hidden_.end()) return false;
  if (it->second.pending || (it->second.has_info && SameObject(it->second.info, info))) {
    return true;
  }
  hidden_.erase(it);
  return false;
}

void UnlinkedNames::Forget(const std::string& key) {
  MutexLock l(&mu_);
  hidden_.erase(key);
}

size_t UnlinkedNames::size() const {
  MutexLock l(&mu_);
  return hidden_.size();
}

}  // namespace kvfs
