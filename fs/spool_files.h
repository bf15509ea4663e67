// SpoolFiles: which SpoolFile a key currently shows (the newest writer of a name owns it; an
// older writer of the same key keeps its handles and still commits on its own close).
//
// Thread-safety: thread-safe (own mutex, a leaf: no other lock is taken while it is held). Lock
// order: SpoolFile::mu_ -> SpoolFiles::mu_ -> (nothing).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"

namespace kvfs {

class SpoolFile;

class SpoolFiles {
 public:
  std::shared_ptr<SpoolFile> Find(const std::string& key) const EXCLUDES(mu_);
  // `f` becomes what key shows; returns the file it replaced (or null).
  std::shared_ptr<SpoolFile> Put(const std::string& key, std::shared_ptr<SpoolFile> f)
      EXCLUDES(mu_);
  // `f` becomes what key shows unless a file shows it already; returns whether it does now.
  bool PutIfAbsent(const std::string& key, std::shared_ptr<SpoolFile> f) EXCLUDES(mu_);
  // Removes and returns what key shows.
  std::shared_ptr<SpoolFile> Take(const std::string& key) EXCLUDES(mu_);
  // Removes key only if it still shows `self` (a newer writer may own the name by now).
  void EraseIf(const std::string& key, const SpoolFile* self) EXCLUDES(mu_);
  // Keys that start with `prefix` (readdir, rmdir).
  std::vector<std::string> KeysWithPrefix(const std::string& prefix) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<SpoolFile>> files_ GUARDED_BY(mu_);
};

}  // namespace kvfs
