// What a restart after a crash of the daemon needs before and right after mounting:
//  - the FUSE mount a killed daemon left attached (every access fails with ENOTCONN,
//    "Transport endpoint is not connected") is detached, so the new daemon mounts without manual
//    steps;
//  - multipart uploads the dead daemon (or a dead writer) left unfinished are aborted in the
//    background once older than stale_upload_age_secs.
// Half-written cache entries and spool files of the dead daemon are the cache's and the
// filesystem's own start-up business (cache/, fs/filesystem.cc).
//
// Thread-safety: functions; UploadCleanup runs its pass on an Executor of its own, joined by its
// destructor; its methods are called from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/executor.h"
#include "objstore/object_store.h"

namespace kvfs {

// If `mountpoint` is a dead FUSE mount (stat fails with ENOTCONN), detaches it (lazy unmount, as
// `fusermount3 -uz` does). Returns whether one was detached; an error if it could not be.
Result<bool> DetachDeadMount(const std::string& mountpoint);

// Whether a mount over `prefix` aborts stale multipart uploads. The rule: only under kvfs's own
// key prefix, which it takes to hold nothing but its chunks. At a bucket's root (empty prefix)
// every application's uploads are listed, and S3 shows no metadata of an unfinished upload that
// would tell kvfs's from theirs (a backup's multipart upload may well run for hours), so there
// only when asked (`at_root`: stale_upload_gc_at_root). Never when min_age_secs is 0.
bool CollectsStaleUploads(const std::string& prefix, int64_t min_age_secs, bool at_root);

// Runs AbortStaleUploads over `prefix` once, on its own thread (off the mount's critical path).
class UploadCleanup {
 public:
  UploadCleanup() = default;
  UploadCleanup(const UploadCleanup&) = delete;
  UploadCleanup& operator=(const UploadCleanup&) = delete;
  ~UploadCleanup() { Join(); }
  void Join();  // waits for the pass to finish
  // Starts the pass; `store` must outlive this object. Does nothing when
  // CollectsStaleUploads(prefix, min_age_secs, at_root) is false.
  void Start(ObjectStore* store, std::string prefix, int64_t min_age_secs, bool at_root);

 private:
  std::unique_ptr<Executor> pass_;  // from Start on
};

}  // namespace kvfs
