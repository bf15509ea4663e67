// MetaCache: lookup results (object exists with size/etag, is a directory, or does not exist),
// kept for a TTL so that repeated exists()/stat() on the same name cost no request. Entries
// written or removed through this mount are updated at once by the filesystem; changes made by
// other nodes become visible when an entry expires. A miss has its own, short TTL (negative_ttl):
// a chunk another node stores must be found here within it (FsOptions::negative_ttl_ms), while a
// found file or directory may be trusted longer (chunks are immutable). Expired entries are kept
// (until the bound prunes them) so that a name whose chunk is in the local cache can still be
// answered from them while they are revalidated (GetStale).
//
// Memory: bounded by max_bytes, charged per entry as its key and ETag plus kEntryOverhead (the
// list and hash nodes, the slot, allocator headers; checked against the daemon's RSS in
// bench/RESULTS-memory.md). Over the bound, entries go in least-recently-used order, in two
// segments (SLRU): a new entry starts on probation and moves to the protected segment (at most
// 80 % of the bytes) when it is read again. A listing of a huge directory (readdir puts every
// object it sees) therefore only churns the probation segment: the names lookups keep asking for
// stay, and nothing is ever cleared wholesale. An evicted entry is as if erased (Get: nullopt,
// GetStale: gen 0); it only costs a request.
//
// Keys are object keys of files (for a directory: its key without the trailing '/').
// Thread-safe: one internal mutex (a leaf lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
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
  std::chrono::steady_clock::duration age{};  // set by Get: since the entry was stored
};

class MetaCache {
 public:
  // Charged per entry besides its key and ETag (measured: see the class comment).
  static constexpr size_t kEntryOverhead = 384;

  // ttl 0 disables caching; negative_ttl applies to misses (0: misses are not cached; by default
  // the same as ttl). max_bytes: the bound on what entries are charged (see above).
  // clock: injectable for tests (default steady_clock::now).
  MetaCache(std::chrono::milliseconds ttl, size_t max_bytes, SteadyClock clock = {},
            std::optional<std::chrono::milliseconds> negative_ttl = std::nullopt);

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
  size_t size() const EXCLUDES(mu_);
  // What the entries are charged (at most max_bytes).
  size_t bytes() const EXCLUDES(mu_);

 private:
  struct Slot {
    std::string key;
    MetaEntry entry;  // entry.info.key is left empty (the key is kept once, above)
    std::chrono::steady_clock::time_point stored;
    std::chrono::steady_clock::time_point expires;
    uint64_t gen = 0;
    size_t charge = 0;
    bool is_protected = false;
  };
  using List = std::list<Slot>;  // most recently used first
  void Put(const std::string& key, MetaEntry entry) EXCLUDES(mu_);
  void PutLocked(const std::string& key, MetaEntry entry) REQUIRES(mu_);
  // A read of the slot: moves it to the front of the protected segment.
  void Touch(List::iterator it) REQUIRES(mu_);
  void Remove(List::iterator it) REQUIRES(mu_);
  // Demotes protected entries over their share, then evicts until within max_bytes_.
  void Shrink() REQUIRES(mu_);
  MetaEntry Out(const Slot& slot) const;

  const std::chrono::milliseconds ttl_;
  const std::chrono::milliseconds negative_ttl_;
  const size_t max_bytes_;
  const SteadyClock clock_;
  mutable Mutex mu_;
  List probation_ GUARDED_BY(mu_);
  List protected_ GUARDED_BY(mu_);
  // Keys view the slots' own key strings (list nodes never move).
  std::unordered_map<std::string_view, List::iterator> map_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  size_t protected_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t next_gen_ GUARDED_BY(mu_) = 1;
};

}  // namespace kvfs
