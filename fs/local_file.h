// LocalFile: a file being written through this mount (or a local-only temporary file). Its bytes
// live in a spool file in the spool directory - bounded by disk, not RAM - until they are
// uploaded on close; after that the spool is handed to the ChunkReader or deleted.
//
// Thread-safety: `mu` guards the mutable fields and is held across the upload of this file, so
// writes and a concurrent close of the same file are serialized. `size` is also mirrored in an
// atomic so that stat() never waits for an upload. Lock order: LocalFile::mu before
// Filesystem::mu_ (never the reverse).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "fs/early_upload.h"
#include "objstore/object_store.h"
#include "src/base/status.h"
#include "src/base/thread_annotations.h"

namespace kvfs {

class LocalFile {
 public:
  // Creates an empty spool file in spool_dir.
  static Result<std::shared_ptr<LocalFile>> Create(const std::string& spool_dir, std::string key,
                                                   std::string display_name, bool temp);
  ~LocalFile();  // closes the spool; deletes it unless a reader adopted it
  LocalFile(const LocalFile&) = delete;
  LocalFile& operator=(const LocalFile&) = delete;

  int fd() const { return fd_; }
  const std::string& spool_path() const { return spool_path_; }
  uint64_t size_now() const { return size_atomic_.load(); }
  int64_t mtime_sec() const { return mtime_sec_; }
  // `temp`, readable without mu (lookups must not wait for an upload).
  bool temp_now() const { return temp_atomic_.load(); }
  void SetTempLocked(bool t) {
    temp = t;
    temp_atomic_.store(t);
  }

  // Writes at any offset; the caller checks the size limit. REQUIRES(mu).
  Status WriteLocked(uint64_t offset, const char* data, uint64_t n);
  Status TruncateLocked(uint64_t size);
  Result<uint64_t> Read(uint64_t offset, uint64_t n, char* buf) const;

  std::mutex mu;
  std::string key GUARDED_BY(mu);           // object key it will be uploaded as
  std::string display_name GUARDED_BY(mu);  // path relative to the mount, for messages
  uint64_t parent_ino GUARDED_BY(mu) = 0;   // where the name lives (to drop it on failure)
  std::string name GUARDED_BY(mu);
  bool temp GUARDED_BY(mu) = false;      // matches a temp pattern: never uploaded as is
  bool dirty GUARDED_BY(mu) = false;     // has bytes not yet uploaded
  bool unlinked GUARDED_BY(mu) = false;  // removed by unlink/rename-over: never upload
  bool adopted GUARDED_BY(mu) = false;   // the reader took the spool file over
  Status failed GUARDED_BY(mu);          // a failed commit: every later write fails too
  std::optional<ObjectInfo> uploaded GUARDED_BY(mu);
  uint64_t size GUARDED_BY(mu) = 0;
  int handles GUARDED_BY(mu) = 0;  // open file handles referencing it
  // Parts sent while the file is still being written (see EarlyUpload); null when off or done.
  std::unique_ptr<EarlyUpload> early GUARDED_BY(mu);

 private:
  LocalFile(int fd, std::string spool_path);
  void SetSizeLocked(uint64_t s) {
    size = s;
    size_atomic_.store(s);
  }

  const int fd_;
  const std::string spool_path_;
  const int64_t mtime_sec_;
  std::atomic<uint64_t> size_atomic_{0};
  std::atomic<bool> temp_atomic_{false};
};

}  // namespace kvfs
