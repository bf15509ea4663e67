// Builds the object store a mount serves from its configuration: the directory store for a
// file:// source, the S3 store for an s3:// source (or LMCache's remote_url). Does not contact the
// server; call store->CheckAccess() before mounting.
// Thread-safety: reentrant; the returned store is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"
#include "src/config.h"

namespace kvfs {

struct StoreAndPrefix {
  std::shared_ptr<ObjectStore> store;
  std::string key_prefix;  // "" or "p/": every key the filesystem uses starts with it
};

// kInvalidArgument when the config names no source; otherwise the store factories' errors.
Result<StoreAndPrefix> OpenStore(const KvfsConfig& config);

}  // namespace kvfs
