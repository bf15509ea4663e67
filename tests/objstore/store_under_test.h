// StoreUnderTest: one ObjectStore for a test, created fresh and removed afterwards.
//   "dir": a directory store in a new temporary directory (removed after the test);
//   "mem": the in-memory fake (5 MiB minimum part size, like S3);
//   "s3":  the S3 store on the test server from KVFS_TEST_S3_* in a new bucket (deleted after).
// When the S3 server is not configured, Open() returns kNotFound; the caller skips, or fails when
// KVFS_REQUIRE_S3=1 (CI). Not thread-safe: one per test.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"
#include "objstore/s3/s3_options.h"

namespace kvfs::testing {

// True when KVFS_REQUIRE_S3=1: a missing S3 server is a failure, not a skip.
bool RequireS3();

class StoreUnderTest {
 public:
  explicit StoreUnderTest(std::string kind) : kind_(std::move(kind)) {}
  ~StoreUnderTest();

  Status Open();
  ObjectStore* store() const { return store_.get(); }
  std::shared_ptr<ObjectStore> shared() const { return store_; }
  const std::string& kind() const { return kind_; }
  // For kind "s3": the options of the bucket (to build stores with other settings).
  const S3Options& s3_options() const { return s3_options_; }

 private:
  std::string kind_;
  std::shared_ptr<ObjectStore> store_;
  std::string dir_;       // "dir": the temporary root
  S3Options s3_options_;  // "s3": bucket set once created
  bool bucket_created_ = false;
};

}  // namespace kvfs::testing

// In a test body: opens `sut` or skips / fails as the environment asks.
#define KVFS_OPEN_STORE_OR_SKIP(sut)                                                     \
  do {                                                                                   \
    ::kvfs::Status kvfs_open_st_ = (sut).Open();                                         \
    if (kvfs_open_st_.code() == ::kvfs::StatusCode::kNotFound && (sut).kind() == "s3" && \
        !::kvfs::testing::RequireS3()) {                                                 \
      GTEST_SKIP() << "S3 test server not configured: " << kvfs_open_st_.ToString();     \
    }                                                                                    \
    ASSERT_TRUE(kvfs_open_st_.ok()) << (sut).kind() << ": " << kvfs_open_st_.ToString(); \
  } while (0)
