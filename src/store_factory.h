// Builds the object store a mount serves from its configuration: the directory store for a
// file:// source, the S3 store for an s3:// source (or LMCache's remote_url). Does not contact the
// server; call store->CheckAccess() before mounting.
// Thread-safety: reentrant; the returned store is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "objstore/object_store.h"
#include "objstore/s3/s3_options.h"
#include "src/base/status.h"
#include "src/config.h"

namespace kvfs {

struct StoreAndPrefix {
  std::shared_ptr<ObjectStore> store;
  std::string key_prefix;  // "" or "p/": every key the filesystem uses starts with it
};

// kInvalidArgument when the config names no source; otherwise the store factories' errors.
Result<StoreAndPrefix> OpenStore(const KvfsConfig& config);

// The S3 options OpenStore uses: config.s3 plus what can be inferred, e.g. the zonal endpoint of
// an S3 Express directory bucket ("name--use1-az4--x-s3" in region us-east-1 ->
// https://s3express-use1-az4.us-east-1.amazonaws.com, virtual-hosted).
S3Options EffectiveS3Options(const KvfsConfig& config);

}  // namespace kvfs
