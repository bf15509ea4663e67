// LocalDirs: directories made by mkdir on this mount that hold no object in the store yet.
//
// A directory in the store is implicit: it exists because keys lie under its prefix (a "name/"
// marker object written by other tools counts too). mkdir therefore sends nothing: the new,
// empty directory is local to this mount until a file under it is uploaded, which makes it (and
// every local ancestor) exist in the store; it then leaves this set. So `mkdir -p` of a deep
// hashed tree costs no request, and other nodes see the tree as soon as it holds a chunk. An empty
// directory made here is not seen by other nodes and does not survive an unmount.
//
// Keys are directory keys without the trailing '/' (as MetaCache uses them).
// Thread-safe: one internal mutex (a leaf lock).
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace kvfs {

class LocalDirs {
 public:
  void Add(const std::string& dir_key) EXCLUDES(mu_);
  bool Contains(const std::string& dir_key) const EXCLUDES(mu_);
  void Erase(const std::string& dir_key) EXCLUDES(mu_);
  // A key under these directories now exists in the store: its local ancestors leave the set
  // (they exist in the store now). Returns the directory keys that left.
  std::vector<std::string> Filled(const std::string& key) EXCLUDES(mu_);
  // Keys of local directories directly inside the directory with listing prefix `prefix`
  // ("a/b/"; "" or the key prefix for the root): readdir shows them.
  std::vector<std::string> ChildrenOf(const std::string& prefix) const EXCLUDES(mu_);
  // Whether any local directory lies under `prefix` (rmdir: the directory is not empty).
  bool AnyUnder(const std::string& prefix) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::unordered_set<std::string> dirs_ GUARDED_BY(mu_);
};

}  // namespace kvfs
