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
// kCancelled (their callbacks run during destruction) and joins the I/O thread, so the last
// reference must not be dropped inside one of the store's own callbacks.
//
// Conditional create (PutOptions::if_none_match) follows S3Options::conditional_create; in kAuto a
// 412 or 501 is confirmed with HEAD before kAlreadyExists is returned (Ceph RGW 16 may answer 412
// on new keys). CompleteMultipartUpload with if_none_match HEADs first (kAuto/kHeadCheck); on
// kAlreadyExists the caller should abort the upload.
Result<std::shared_ptr<ObjectStore>> NewS3Store(const S3Options& options);

}  // namespace kvfs
