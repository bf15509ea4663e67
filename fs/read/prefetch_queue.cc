#include "fs/read/prefetch_queue.h"

#include <utility>

namespace kvfs {

PrefetchQueue::PrefetchQueue(PrefetchOptions opts, ReaderCounters* counters, Clock clock)
    : opts_(opts),
      counters_(counters),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

bool PrefetchQueue::Offer(const ObjectInfo& info) {
  if (info.size > opts_.max_bytes) return false;
  MutexLock l(&mu_);
  if (items_.count(info.key) != 0) return false;  // queued, downloading or unread already
  if (queued_ >= opts_.max_queued) {
    // The oldest lookups are the least likely still to be read soon.
    while (!order_.empty()) {
      auto it = items_.find(order_.front());
      order_.pop_front();
      if (it != items_.end() && it->second.state == State::kQueued) {
        EraseLocked(it);
        counters_->prefetches_cancelled++;
        break;
      }
    }
  }
  Item item;
  item.info = info;
  items_.emplace(info.key, std::move(item));
  order_.push_back(info.key);
  queued_++;
  UpdateGaugesLocked();
  return true;
}

std::optional<ObjectInfo> PrefetchQueue::Next() {
  MutexLock l(&mu_);
  ExpireLocked(clock_());
  while (downloading_ < opts_.max_downloads && !order_.empty()) {
    auto it = items_.find(order_.front());
    if (it == items_.end() || it->second.state != State::kQueued) {
      order_.pop_front();  // claimed or forgotten meanwhile
      continue;
    }
    // In order: a big chunk waits for room rather than let later small ones pass it forever.
    if (held_bytes_ + it->second.info.size > opts_.max_bytes) break;
    order_.pop_front();
    it->second.state = State::kDownloading;
    queued_--;
    downloading_++;
    held_bytes_ += it->second.info.size;
    UpdateGaugesLocked();
    return it->second.info;
  }
  return std::nullopt;
}

void PrefetchQueue::Ended(const std::string& key, bool stored) {
  MutexLock l(&mu_);
  downloading_--;
  auto it = items_.find(key);
  if (it == items_.end() || it->second.state != State::kDownloading) {
    // Claimed by a read (or forgotten) while it downloaded: its bytes were released then.
    UpdateGaugesLocked();
    return;
  }
  if (!stored) {
    counters_->prefetches_failed++;
    EraseLocked(it);
  } else {
    it->second.state = State::kUnread;
    it->second.since = clock_();
    unread_order_.push_back(key);
  }
  UpdateGaugesLocked();
}

void PrefetchQueue::Skipped(const std::string& key) {
  MutexLock l(&mu_);
  downloading_--;
  auto it = items_.find(key);
  if (it != items_.end() && it->second.state == State::kDownloading) EraseLocked(it);
  UpdateGaugesLocked();
}

PrefetchQueue::Claim PrefetchQueue::ClaimForRead(const std::string& key) {
  MutexLock l(&mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return Claim::kNone;
  const Claim c = it->second.state == State::kQueued ? Claim::kQueued : Claim::kPrefetched;
  if (c == Claim::kPrefetched) counters_->prefetches_joined++;
  EraseLocked(it);
  UpdateGaugesLocked();
  return c;
}

void PrefetchQueue::Forget(const std::string& key) {
  MutexLock l(&mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return;
  if (it->second.state != State::kUnread) counters_->prefetches_cancelled++;
  EraseLocked(it);
  UpdateGaugesLocked();
}

std::vector<ObjectInfo> PrefetchQueue::TakeExpired() {
  MutexLock l(&mu_);
  ExpireLocked(clock_());
  return std::exchange(expired_, {});
}

void PrefetchQueue::ExpireLocked(std::chrono::steady_clock::time_point now) {
  const auto ttl = std::chrono::seconds(opts_.unread_secs);
  while (!unread_order_.empty()) {
    auto it = items_.find(unread_order_.front());
    if (it == items_.end() || it->second.state != State::kUnread) {
      unread_order_.pop_front();
      continue;
    }
    if (now - it->second.since < ttl) break;
    unread_order_.pop_front();
    counters_->prefetches_unread++;
    counters_->prefetch_bytes_unread += it->second.info.size;
    if (expired_.size() < opts_.max_queued) expired_.push_back(it->second.info);
    EraseLocked(it);
  }
}

void PrefetchQueue::EraseLocked(std::unordered_map<std::string, Item>::iterator it) {
  // A downloading item keeps its slot until Ended; its bytes are released now (a read joined
  // it, or it was forgotten).
  switch (it->second.state) {
    case State::kQueued:
      queued_--;
      break;
    case State::kDownloading:
    case State::kUnread:
      held_bytes_ -= it->second.info.size;
      break;
  }
  items_.erase(it);
}

void PrefetchQueue::UpdateGaugesLocked() {
  counters_->prefetches_queued = queued_;
  counters_->prefetch_bytes_held = held_bytes_;
}

}  // namespace kvfs
