// MetaCache: lookup results (object exists with size/etag, is a directory, or does not exist),
// kept for a TTL so that repeated exists()/stat() on the same name cost no request. Entries
// written or removed through this mount are updated at once by the filesystem; changes made by
// other nodes become visible when an entry expires.
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

#include "objstore/object_store.h"
#include "src/base/mutex.h"
#include "src/base/thread_annotations.h"

namespace kvfs {

using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

struct MetaEntry {
  enum Kind { kMissing, kFile, kDir };
  Kind kind = kMissing;
  ObjectInfo info;  // for kFile
};

class MetaCache {
 public:
  // ttl 0 disables caching. clock: injectable for tests (default steady_clock::now).
  MetaCache(std::chrono::seconds ttl, size_t max_entries, SteadyClock clock = {});

  // A fresh entry, or nullopt when absent or expired.
  std::optional<MetaEntry> Get(const std::string& key) EXCLUDES(mu_);
  void PutFile(const ObjectInfo& info) EXCLUDES(mu_);
  void PutDir(const std::string& key) EXCLUDES(mu_);
  void PutMissing(const std::string& key) EXCLUDES(mu_);
  void Erase(const std::string& key) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  struct Slot {
    MetaEntry entry;
    std::chrono::steady_clock::time_point expires;
  };
  void Put(const std::string& key, MetaEntry entry) EXCLUDES(mu_);

  const std::chrono::seconds ttl_;
  const size_t max_entries_;
  const SteadyClock clock_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Slot> map_ GUARDED_BY(mu_);
};

}  // namespace kvfs
