// Clean-up of multipart uploads that writers or daemons which died mid-upload left behind. Their
// parts are never visible as objects, but cost storage until aborted. An upload younger than
// `min_age_secs` may be another node's live upload (a chunk's upload takes seconds) and is left
// alone; so is one whose start time the store does not report.
//
// Thread-safety: a function; thread-safe if the store is.
#pragma once

#include <cstdint>
#include <string>

#include "objstore/object_store.h"

namespace kvfs {

struct UploadGcResult {
  int found = 0;    // unfinished uploads under the prefix
  int aborted = 0;  // old enough, and aborted
  int young = 0;    // too young (or of unknown age): left alone
};

// kNotSupported from stores that keep no unfinished uploads (the directory store).
Result<UploadGcResult> AbortStaleUploads(ObjectStore& store, const std::string& prefix,
                                         int64_t min_age_secs, int64_t now_sec);

}  // namespace kvfs
