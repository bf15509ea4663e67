// Bucket administration for tests. Not part of ObjectStore: kvfs itself never creates or deletes
// buckets. Test-only: built as kvfs_test_s3_admin (tests/CMakeLists.txt) and linked into test
// binaries only; tests/src/no_test_code.sh checks with nm that the kvfs binary holds none of it.
#pragma once

#include <string>

#include "base/status.h"
#include "objstore/s3/s3_options.h"

namespace kvfs {

// Creates `options.bucket`. Succeeds if the bucket already exists and belongs to the caller
// (BucketAlreadyOwnedByYou).
Status CreateBucketForTest(const S3Options& options);

// Deletes every object and every pending multipart upload in `options.bucket`, then the bucket.
// Succeeds if the bucket does not exist.
Status DeleteBucketForTest(const S3Options& options);

// A bucket name that no other test run uses: "<prefix>-<pid>-<random hex>", lower case, valid as a
// DNS label (prefix: lower-case letters, digits and '-', at most 40 characters).
std::string UniqueBucketName(const std::string& prefix);

// Options for the test S3 server from the environment: KVFS_TEST_S3_ENDPOINT (required),
// KVFS_TEST_S3_ACCESS_KEY, KVFS_TEST_S3_SECRET_KEY, KVFS_TEST_S3_REGION (default us-east-1);
// path-style, short timeouts. kNotFound when KVFS_TEST_S3_ENDPOINT is unset (the test should then
// skip, or fail when KVFS_REQUIRE_S3=1). `bucket` is left empty.
Result<S3Options> S3TestOptionsFromEnv();

}  // namespace kvfs
