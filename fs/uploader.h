// Uploader: turns a finished spool file into an object - one PUT below the multipart threshold,
// a parallel multipart upload above it - with conditional create and the exists policy.
//
// The call returns only when the object is durable (or the upload failed and nothing was left
// behind: a failed multipart upload is aborted). Failures other than "name exists" come back as
// kIoError (EIO) naming the file and key.
//
// Thread-safe: no mutable state; many uploads may run at once.
#pragma once

#include <memory>
#include <string>

#include "fs/early_upload.h"
#include "fs/fs_options.h"
#include "objstore/object_store.h"

namespace kvfs {

class Uploader {
 public:
  Uploader(std::shared_ptr<ObjectStore> store, const FsOptions& options);

  // Uploads bytes [0, size) of fd as `key`. If the key exists: success without overwriting when
  // the exists policy allows it (same size, and !no_replace), else kAlreadyExists. `early`, if
  // not null, holds parts of these bytes already sent (usable for this key and size): it is
  // completed instead of starting over, and if that fails the normal upload runs once more.
  Result<ObjectInfo> Upload(const std::string& key, int fd, uint64_t size,
                            const std::string& display_name, bool no_replace,
                            EarlyUpload* early = nullptr);

 private:
  Result<ObjectInfo> PutOnce(const std::string& key, int fd, uint64_t size, bool conditional);
  Result<ObjectInfo> Multipart(const std::string& key, int fd, uint64_t size, bool conditional);
  // The key existed (or the server said so): decide success or EEXIST.
  Result<ObjectInfo> OnExists(const std::string& key, int fd, uint64_t size,
                              const std::string& display_name, bool no_replace);

  const std::shared_ptr<ObjectStore> store_;
  const FsOptions options_;
};

}  // namespace kvfs
