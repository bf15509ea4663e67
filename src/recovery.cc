#include "src/recovery.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <ctime>

#include "base/log.h"
#include "objstore/upload_gc.h"

namespace kvfs {

Result<bool> DetachDeadMount(const std::string& mountpoint) {
  struct stat st;
  if (stat(mountpoint.c_str(), &st) == 0 || errno != ENOTCONN) return false;
  if (umount2(mountpoint.c_str(), MNT_DETACH) != 0) {
    return Status::FromErrno(errno, "mount point " + mountpoint +
                                        " holds a dead FUSE mount (its daemon died) that could "
                                        "not be detached; run 'fusermount3 -uz " +
                                        mountpoint + "'");
  }
  LogWarn("kvfs: {} held a dead FUSE mount (its daemon died); detached it", mountpoint);
  return true;
}

void UploadCleanup::Join() {
  if (pass_) pass_->Shutdown();
}

bool CollectsStaleUploads(const std::string& prefix, int64_t min_age_secs, bool at_root) {
  return min_age_secs > 0 && (!prefix.empty() || at_root);
}

void UploadCleanup::Start(ObjectStore* store, std::string prefix, int64_t min_age_secs,
                          bool at_root) {
  if (min_age_secs > 0 && prefix.empty() && !at_root) {
    LogInfo(
        "kvfs: mounted at the bucket's root: unfinished multipart uploads are not aborted (they "
        "may be other applications'; stale_upload_gc_at_root: true to abort them)");
  }
  if (!CollectsStaleUploads(prefix, min_age_secs, at_root) || pass_) return;
  pass_ = std::make_unique<Executor>(1);
  pass_->Schedule([store, prefix = std::move(prefix), min_age_secs] {
    auto r = AbortStaleUploads(*store, prefix, min_age_secs, time(nullptr));
    if (!r.ok()) {
      if (r.status().code() != StatusCode::kNotSupported) {
        LogWarn("kvfs: cleaning up unfinished uploads under '{}' (stale_upload_age_secs): {}",
                prefix, r.status().ToString());
      }
      return;
    }
    if (r->found > 0) {
      LogInfo(
          "kvfs: unfinished uploads under '{}': {} aborted (older than {} s), {} left (younger)",
          prefix, r->aborted, min_age_secs, r->young);
    }
  });
}

}  // namespace kvfs
