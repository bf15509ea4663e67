// The S3 implementation of ObjectStore (AWS S3, Ceph RGW, MinIO, CoreWeave...).
#pragma once

#include <memory>

#include "objstore/object_store.h"
#include "objstore/s3/s3_options.h"

namespace kvfs {

// Creates a store for `options.bucket`. Resolves the endpoint (options, AWS_ENDPOINT_URL, AWS's
// regional endpoint), the CA bundle (options, AWS_CA_BUNDLE) and the credentials (options,
// environment, shared profile files) and starts the store's I/O thread. Does not contact the
// server: call CheckAccess() for that. Errors: kInvalidArgument for unusable options (message names
// the setting), kPermissionDenied when no credentials can be found (message lists what was tried).
//
// The returned store is thread-safe. Destroying it fails requests still queued or in flight with
// kCancelled (their callbacks run during destruction) and joins the I/O thread.
Result<std::shared_ptr<ObjectStore>> NewS3Store(const S3Options& options);

}  // namespace kvfs
