// PrefetchQueue: which chunks a lookup asked to bring to this node before the engine reads them,
// and the bounds on that (fs/read/cached_reader.h starts and finishes the downloads).
//
// An engine looks a batch of chunks up (stat, access, exists(), an open) before it reads them one
// after another; each lookup of a chunk not cached here is offered to this queue, and downloads
// run while the engine is still looking up or reading the earlier ones. The bounds keep a lookup
// that is never followed by a read cheap:
//  - at most `max_downloads` prefetches download at once (each with its own ranged GETs);
//  - at most `max_bytes` of chunks prefetched and not read yet, counting those downloading: a
//    batch of lookups cannot flush the cache of the chunks the node is serving;
//  - a prefetched chunk not read within `unread_secs` no longer counts against `max_bytes` and is
//    the first the cache evicts (TakeExpired; not before: a chunk an engine just looked up is the
//    one it is most likely to read next), counted as unread;
//  - at most `max_queued` names wait; past it the oldest is dropped (cancelled).
// A read of a queued chunk takes it out of the queue (its open downloads it at once); a read of a
// downloading or prefetched one joins it.
//
// Thread-safe: mu_ is a leaf lock. Only bookkeeping: no I/O and no callbacks under it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fs/read/reader_stats.h"
#include "objstore/object_store.h"

namespace kvfs {

struct PrefetchOptions {
  bool enabled = true;
  int max_downloads = 16;
  uint64_t max_bytes = 0;  // 0: a quarter of the cache (CachedReader fills it in)
  int unread_secs = 30;
  size_t max_queued = 4096;
};

class PrefetchQueue {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // `counters` (the read path's) outlives the queue.
  PrefetchQueue(PrefetchOptions opts, ReaderCounters* counters, Clock clock = nullptr);

  // A lookup found `info` and nothing of it is cached or downloading here: queue it (once).
  // Returns whether it was queued now (not already known, not larger than max_bytes).
  bool Offer(const ObjectInfo& info) EXCLUDES(mu_);
  // The next chunk to start downloading, if the bounds allow one more; it counts as downloading
  // until Ended.
  std::optional<ObjectInfo> Next() EXCLUDES(mu_);
  // The download of `key` that Next handed out ended: `stored` (in the cache) or not.
  void Ended(const std::string& key, bool stored) EXCLUDES(mu_);
  // Next handed `key` out, but nothing was started: it is cached or downloading already.
  void Skipped(const std::string& key) EXCLUDES(mu_);

  // What an engine's open of `key` finds.
  enum class Claim { kNone, kQueued, kPrefetched };
  // kQueued: it was waiting (now removed: the open downloads it itself); kPrefetched: it is
  // downloading or was prefetched and not read (now read: it no longer counts against max_bytes).
  Claim ClaimForRead(const std::string& key) EXCLUDES(mu_);
  // The object changed or went: forget a queued or unread prefetch of it.
  void Forget(const std::string& key) EXCLUDES(mu_);

  // The chunks that stopped counting as unread since the last call (prefetched, never read
  // within unread_secs): the cache evicts them first.
  std::vector<ObjectInfo> TakeExpired() EXCLUDES(mu_);

  const PrefetchOptions& options() const { return opts_; }

 private:
  enum class State { kQueued, kDownloading, kUnread };
  struct Item {
    ObjectInfo info;
    State state = State::kQueued;
    std::chrono::steady_clock::time_point since;  // kUnread: when it was stored
  };
  // Drops unread items older than unread_secs from the byte budget.
  void ExpireLocked(std::chrono::steady_clock::time_point now) REQUIRES(mu_);
  void EraseLocked(std::unordered_map<std::string, Item>::iterator it) REQUIRES(mu_);
  void UpdateGaugesLocked() REQUIRES(mu_);

  const PrefetchOptions opts_;
  ReaderCounters* const counters_;
  const Clock clock_;

  Mutex mu_;
  std::unordered_map<std::string, Item> items_ GUARDED_BY(mu_);
  // Keys in the order offered; may hold keys no longer queued (skipped when popped).
  std::deque<std::string> order_ GUARDED_BY(mu_);
  // Keys in the order they were stored unread; may hold keys no longer unread.
  std::deque<std::string> unread_order_ GUARDED_BY(mu_);
  size_t queued_ GUARDED_BY(mu_) = 0;
  int downloading_ GUARDED_BY(mu_) = 0;
  uint64_t held_bytes_ GUARDED_BY(mu_) = 0;  // downloading + unread
  // Expired unread chunks not yet taken (at most the unread ones: bounded like items_).
  std::vector<ObjectInfo> expired_ GUARDED_BY(mu_);
};

}  // namespace kvfs
