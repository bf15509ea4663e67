#include "objstore/upload_gc.h"

#include "base/log.h"

namespace kvfs {

Result<UploadGcResult> AbortStaleUploads(ObjectStore& store, const std::string& prefix,
                                         int64_t min_age_secs, int64_t now_sec) {
  KVFS_ASSIGN_OR_RETURN(std::vector<UnfinishedUpload> uploads, store.ListUnfinishedUploads(prefix));
  UploadGcResult r;
  r.found = static_cast<int>(uploads.size());
  Status first_error;
  for (const UnfinishedUpload& u : uploads) {
    if (u.initiated_sec <= 0 || now_sec - u.initiated_sec < min_age_secs) {
      ++r.young;
      continue;
    }
    Status st = store.AbortMultipartUpload(u.key, u.upload_id);
    if (st.ok()) {
      ++r.aborted;
      LogInfo("kvfs: aborted an unfinished upload of {} begun {} s ago", u.key,
              now_sec - u.initiated_sec);
    } else if (first_error.ok()) {
      first_error = st.Annotate("aborting the unfinished upload of " + u.key);
    }
  }
  if (!first_error.ok() && r.aborted == 0) return first_error;
  return r;
}

}  // namespace kvfs
