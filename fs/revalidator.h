// Revalidator: checks in the background that names answered from the local chunk cache
// (stale-while-revalidate, FsOptions::cached_chunk_trust_secs) still name the same object in the
// store. One HEAD per name; the answer refreshes the metadata cache (same object), or drops the
// local copy (another ETag or size: the new metadata is stored; 404: the name is recorded as
// missing). An error (store down) changes nothing: the cached answer keeps being served until its
// trust runs out. Answers never overwrite metadata that changed meanwhile (MetaCache generation).
//
// Thread-safe. One worker thread; a bounded queue of distinct names (extra requests are dropped:
// the next lookup asks again). The destructor stops the worker after its current HEAD.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>

#include "base/mutex.h"
#include "fs/meta_cache.h"
#include "fs/read/chunk_reader.h"
#include "objstore/object_store.h"

namespace kvfs {

class Revalidator {
 public:
  // meta and reader must outlive the revalidator. timeout_ms bounds each HEAD (0: the store's).
  Revalidator(std::shared_ptr<ObjectStore> store, MetaCache* meta, ChunkReader* reader,
              int64_t timeout_ms);
  ~Revalidator();
  Revalidator(const Revalidator&) = delete;
  Revalidator& operator=(const Revalidator&) = delete;

  // Queues a check of `served` (the answer given), made while the key's metadata generation was
  // `gen` (MetaCache::GetStale; 0: no entry).
  void Enqueue(const ObjectInfo& served, uint64_t gen) EXCLUDES(mu_);

  uint64_t checks() const EXCLUDES(mu_);   // HEADs done
  uint64_t dropped() const EXCLUDES(mu_);  // local copies dropped (404 or another version)

 private:
  struct Item {
    ObjectInfo served;
    uint64_t gen = 0;
  };
  static constexpr size_t kMaxQueued = 4096;

  void Run() EXCLUDES(mu_);
  void Check(const Item& item);

  const std::shared_ptr<ObjectStore> store_;
  MetaCache* const meta_;
  ChunkReader* const reader_;
  const int64_t timeout_ms_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Item> queue_ GUARDED_BY(mu_);
  std::unordered_set<std::string> queued_ GUARDED_BY(mu_);  // keys in queue_ or being checked
  bool stop_ GUARDED_BY(mu_) = false;
  uint64_t checks_ GUARDED_BY(mu_) = 0;
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: started after everything above exists
};

}  // namespace kvfs
