// CacheDir: the cache directory on disk. Creates it private (0700), locks it so that a second
// daemon cannot use it at the same time, and scans it at start (restart recovery).
//
// Layout:  <dir>/lock    flock'ed by the owning process (holds its pid, for the error message)
//          <dir>/data/   entry files (see entry_format.h)
//          <dir>/spool/  scratch space for the filesystem's write spool, on the same filesystem
//                        as data/ so a finished spool file can be renamed into the cache; emptied
//                        at start
//
// Thread-compatible: Open and Scan run before the cache is shared.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cache/entry_format.h"
#include "src/base/status.h"

namespace kvfs {

struct ScannedEntry {
  EntryMeta meta;
  std::string file_name;
  uint64_t key_hash = 0;
  uint64_t gen = 0;
};

struct ScanResult {
  std::vector<ScannedEntry> entries;  // valid trailers, one per key (the newest generation)
  uint64_t dropped = 0;               // partial fills, orphans, truncated or duplicate entries
  uint64_t max_gen = 0;
};

class CacheDir {
 public:
  // Creates / fixes the directory and takes the lock. kAlreadyExists names the directory if
  // another process holds it.
  static Result<std::unique_ptr<CacheDir>> Open(const std::string& dir);
  ~CacheDir();  // releases the lock

  const std::string& dir() const { return dir_; }
  std::string data_dir() const { return dir_ + "/data"; }
  std::string spool_dir() const { return dir_ + "/spool"; }
  std::string DataPath(const std::string& name) const { return dir_ + "/data/" + name; }

  // Reads every file in data/: keeps entries whose trailer is intact and whose size matches it;
  // unlinks everything else (partial fills, foreign files, truncated entries, older generations
  // of a key). Does not read the content: checksums are checked later (see ChunkCache).
  ScanResult Scan();

 private:
  CacheDir(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string dir_;
  int lock_fd_;
};

// Removes every entry of a directory (not recursive into subdirectories' subdirectories: the spool
// holds plain files). Best effort.
void EmptyDirectory(const std::string& dir);

}  // namespace kvfs
