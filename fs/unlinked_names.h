// UnlinkedNames: the names this node unlinked under unlink_policy local. Their objects stay in the
// store for the other nodes, but on this node the name must read as missing, or an engine that
// deletes a chunk (an LRU evictor, vLLM after a short read) would find it again at its next lookup
// and never store a fresh copy. A name stays hidden here until its object changes (another ETag:
// the name was deleted and written again, by any node), until this node publishes that name
// again, or until the store no longer has it; the lookups of a hidden name keep the metadata
// cache's TTL, so after each TTL one HEAD checks whether the object changed.
//
// Bounded: beyond max_entries the oldest hidden names are forgotten (they show again; an engine
// then merely finds a chunk it had given up). Keys are object keys.
// Thread-safe: one internal mutex (a leaf lock).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "objstore/object_store.h"

namespace kvfs {

class UnlinkedNames {
 public:
  // The daemon's bound: 131,072 names (~20 MiB with 100-byte keys and their ETags).
  static constexpr size_t kDefaultMaxEntries = size_t{1} << 17;
  explicit UnlinkedNames(size_t max_entries) : max_entries_(max_entries) {}

  // The name of `info` (info.key) was unlinked here while its object was `info`. A name whose
  // upload is still pending stays pending: that upload may yet replace `info`.
  void Hide(const ObjectInfo& info) EXCLUDES(mu_);
  // The name `key` was unlinked here while this node's upload of it was on its way (write-back):
  // whatever object the name holds is hidden until that upload ends - then Hide() of the object
  // it made and ForgetPending(), or ForgetPending() alone if it made none.
  void HidePending(const std::string& key) EXCLUDES(mu_);
  // The upload ended: only the object last given to Hide() stays hidden (none: the name shows).
  void ForgetPending(const std::string& key) EXCLUDES(mu_);
  // Whether `info` (what the store or a cache says is under info.key) is the object this node
  // unlinked. A different object ends the hiding (returns false).
  bool Hides(const ObjectInfo& info) EXCLUDES(mu_);
  // The name was published again here: nothing to hide any more.
  void Forget(const std::string& key) EXCLUDES(mu_);
  // The store has no object of the name: nothing to hide any more - unless this node's upload of
  // it is still on its way (HidePending), which may make one.
  void ForgetGone(const std::string& key) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  struct Hidden {
    ObjectInfo info;
    bool has_info = false;  // Hide(): `info` is the object unlinked
    uint64_t seq = 0;
    bool pending = false;  // HidePending: any object of the name
  };
  void InsertLocked(const std::string& key, Hidden h) REQUIRES(mu_);
  static bool SameObject(const ObjectInfo& a, const ObjectInfo& b);

  const size_t max_entries_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Hidden> hidden_ GUARDED_BY(mu_);
  std::deque<std::pair<std::string, uint64_t>> order_ GUARDED_BY(mu_);  // oldest first
  uint64_t next_seq_ GUARDED_BY(mu_) = 1;
};

}  // namespace kvfs
