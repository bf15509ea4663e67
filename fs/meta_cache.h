// MetaCache: lookup results (object exists with size/etag, is a directory, or does not exist),
// kept for a TTL so that repeated exists()/stat() on the same name cost no request. Entries
// written or removed through this mount are updated at once by the filesystem; changes made by
// other nodes become visible when an entry expires. Expired entries are kept (until the bound
// prunes them) so that a name whose chunk is in the local cache can still be answered from them
// while they are revalidated (GetStale).
//
// Keys are object keys of files (for a directory: its key without the trailing '/').
// Thread-safe: one internal mutex (a leaf lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "objstore/object_store.h"

namespace kvfs {

using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

struct MetaEntry {
  enum Kind { kMissing, kFile, kDir };
  Kind kind = kMissing;
  ObjectInfo info;  // for kFile
  // Set by Get: how long the entry stays fresh. The kernel is given this, not a whole TTL, so
  // that its cache and this one together never hold a name longer than one TTL.
  std::chrono::steady_clock::duration left{};
};

class MetaCache {
 public:
  // ttl 0 disables caching. clock: injectable for tests (default steady_clock::now).
  MetaCache(std::chrono::seconds ttl, size_t max_entries, SteadyClock clock = {});

  // A fresh entry, or nullopt when absent or expired.
  std::optional<MetaEntry> Get(const std::string& key) EXCLUDES(mu_);

  // An entry whether fresh or expired (expired ones are kept until the bound prunes them), with
  // its age and a generation that changes whenever the key's entry is replaced or erased.
  struct Stale {
    std::optional<MetaEntry> entry;
    std::chrono::steady_clock::duration age{};
    uint64_t gen = 0;  // 0: no entry
  };
  Stale GetStale(const std::string& key) EXCLUDES(mu_);
  // Stores `entry` only if the key's generation is still `gen` (0: still absent), so a background
  // answer never overwrites a newer one (an upload or unlink through this mount meanwhile).
  // Returns whether it stored it.
  bool PutIfUnchanged(const std::string& key, uint64_t gen, MetaEntry entry) EXCLUDES(mu_);
  void PutFile(const ObjectInfo& info) EXCLUDES(mu_);
  void PutDir(const std::string& key) EXCLUDES(mu_);
  void PutMissing(const std::string& key) EXCLUDES(mu_);
  void Erase(const std::string& key) EXCLUDES(mu_);
  size_t size() const;

 private:
  struct Slot {
    MetaEntry entry;
    std::chrono::steady_clock::time_point stored;
    std::chrono::steady_clock::time_point expires;
    uint64_t gen = 0;
  };
  void Put(const std::string& key, MetaEntry entry) EXCLUDES(mu_);
  void PutLocked(const std::string& key, MetaEntry entry) REQUIRES(mu_);

  const std::chrono::seconds ttl_;
  const size_t max_entries_;
  const SteadyClock clock_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Slot> map_ GUARDED_BY(mu_);
  uint64_t next_gen_ GUARDED_BY(mu_) = 1;
};

}  // namespace kvfs
