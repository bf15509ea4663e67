// Revalidator: checks in the background that names answered from the local chunk cache
// (stale-while-revalidate, FsOptions::cached_chunk_trust_secs) still name the same object in the
// store. One HEAD per name; the answer refreshes the metadata cache (same object), or drops the
// local copy (another ETag or size: the new metadata is stored; 404: the name is recorded as
// missing). An error (store down) changes nothing: the cached answer keeps being served until its
// trust runs out. Answers never overwrite metadata that changed meanwhile (MetaCache generation).
//
// Thread-safe. One worker thread (an Executor); at most kMaxQueued distinct names wait (extra
// requests are dropped: the next lookup asks again). The destructor drops what is queued and
// waits for the current HEAD.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "base/executor.h"
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
  ~Revalidator() = default;
  Revalidator(const Revalidator&) = delete;
  Revalidator& operator=(const Revalidator&) = delete;

  // Queues a check of `served` (the answer given), made while the key's metadata generation was
  // `gen` (MetaCache::GetStale; 0: no entry).
  void Enqueue(const ObjectInfo& served, uint64_t gen) EXCLUDES(mu_);

  // Whether two answers name the same object (size, and ETag where both have one).
  static bool SameObject(const ObjectInfo& a, const ObjectInfo& b);

  uint64_t checks() const EXCLUDES(mu_);   // HEADs done
  uint64_t dropped() const EXCLUDES(mu_);  // local copies dropped (404 or another version)

 private:
  struct Item {
    ObjectInfo served;
    uint64_t gen = 0;
  };
  static constexpr size_t kMaxQueued = 4096;

  void Check(const Item& item) EXCLUDES(mu_);

  const std::shared_ptr<ObjectStore> store_;
  MetaCache* const meta_;
  ChunkReader* const reader_;
  const int64_t timeout_ms_;

  mutable Mutex mu_;
  std::unordered_set<std::string> queued_ GUARDED_BY(mu_);  // keys queued or being checked
  uint64_t checks_ GUARDED_BY(mu_) = 0;
  uint64_t dropped_ GUARDED_BY(mu_) = 0;
  Executor worker_{1, Executor::kDropQueued};  // last: its thread ends before the members go
};

}  // namespace kvfs
