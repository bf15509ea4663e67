// Uploader: turns a finished spool file into an object - one PUT below the multipart threshold,
// a parallel multipart upload above it - with conditional create and the exists policy.
//
// The call returns only when the object is durable (or the upload failed and nothing was left
// behind: a failed multipart upload is aborted). Failures other than "name exists" come back as
// kIoError (EIO) naming the file and key.
//
// Past the caller's deadline (a close()'s blocking_timeout) nothing more is tried: a multipart
// upload whose completion timed out is not sent again the normal way, and its abort runs in the
// background (aborts()).
//
// Thread-safe: no mutable state but the abort queue (thread-safe); many uploads may run at once.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "fs/abort_queue.h"
#include "fs/early_upload.h"
#include "fs/fs_options.h"
#include "objstore/object_store.h"

namespace kvfs {

// What a writer knows of the bytes it uploads, folded as they were written (SpoolFile) or computed
// for its seal: the CRC32C of the whole chunk and, when known, of each slice (recorded with the
// object so that readers serve a download slice by slice, fs/read/object_fetch.h).
struct WrittenCrc {
  uint32_t whole = 0;
  std::optional<SliceCrcs> slices;
};

// What an upload left under the key.
struct UploadOutcome {
  ObjectInfo info;  // the object now under the key
  // false: the key already held an object (another writer's, of the same size, which the exists
  // policy accepts); `info` describes that object, whose bytes may differ from ours.
  bool created = true;
};

class Uploader {
 public:
  Uploader(std::shared_ptr<ObjectStore> store, const FsOptions& options);

  // Uploads bytes [0, size) of fd as `key` with a conditional create (the store deals with
  // servers whose answers to it need checking). If the key exists: success without overwriting
  // (created = false) when the exists policy allows it (same size, and !no_replace), else
  // kAlreadyExists - except over an EMPTY object (a name created before its bytes came: fio's
  // layout, `touch x; echo hello > x`), which these bytes replace with one PUT under If-Match on
  // its ETag (not with no_replace). `early`, if not null, holds parts of these bytes already sent
  // (usable for this key and size): it is completed instead of starting over, and if that fails the
  // normal upload runs once more (not once the caller's deadline has passed). `crc`: the CRC32C of
  // those bytes when the writer folded it as they were written (SpoolFile); otherwise the spool is
  // read once more to compute it. `user_xattrs`: the chunk's attributes (PutOptions::user_xattrs);
  // `early` was created with them (its owner drops it when they change).
  Result<UploadOutcome> Upload(const std::string& key, int fd, uint64_t size,
                               const std::string& display_name, bool no_replace, EarlyUpload* early,
                               std::optional<WrittenCrc> crc, const std::string& user_xattrs);
  // Whether the exists policy (OnExists) would refuse a chunk of `size` bytes over an object of
  // `existing` bytes of another writer: another non-empty size, or any non-empty object under
  // ExistsPolicy::kEexist. An empty object is replaced, not a refusal.
  bool WouldRefuse(uint64_t existing, uint64_t size) const {
    return existing > 0 &&
           (existing != size || options_.exists_policy != ExistsPolicy::kSameSizeOk);
  }
  // Uploads bytes [0, size) of fd as `key`, replacing the object there: a file opened for reading
  // and writing that started from the object's bytes and was changed (not a chunk written once:
  // those never replace anything).
  Result<UploadOutcome> Replace(const std::string& key, int fd, uint64_t size,
                                const std::string& display_name, std::optional<WrittenCrc> crc,
                                const std::string& user_xattrs);

  // Where the uploads of this filesystem hand their aborts (EarlyUpload).
  AbortQueue* aborts() { return &aborts_; }

 private:
  // The largest chunk that replaces an empty object (one PUT with If-Match: S3's single-PUT
  // limit; multipart completion is never sent with If-Match).
  static constexpr uint64_t kMaxReplacePut = 5ull << 30;

  Result<ObjectInfo> PutOnce(const std::string& key, int fd, uint64_t size,
                             const std::optional<WrittenCrc>& crc, const std::string& user_xattrs,
                             bool conditional = true, const std::string& if_match = "");
  Result<ObjectInfo> Multipart(const std::string& key, int fd, uint64_t size,
                               const std::string& user_xattrs, bool conditional = true);
  // The key existed: ours (same size and checksum: created), success (created = false), an empty
  // object replaced by these bytes (If-Match on its ETag; unless no_replace) or EEXIST.
  // `retried_empty`: called again after losing the race to replace an empty object.
  Result<UploadOutcome> OnExists(const std::string& key, int fd, uint64_t size,
                                 const std::string& display_name, bool no_replace,
                                 std::optional<WrittenCrc> crc, const std::string& user_xattrs,
                                 bool retried_empty = false);

  const std::shared_ptr<ObjectStore> store_;
  const FsOptions options_;
  AbortQueue aborts_;  // after store_: its aborts use the store, so it goes first
};

}  // namespace kvfs
