#include "objstore/s3/s3_admin.h"

#include <unistd.h>

#include <cstdlib>
#include <random>

namespace kvfs {

Status CreateBucketForTest(const S3Options& options) {
  return Status::NotSupported("CreateBucketForTest not implemented yet");
}

Status DeleteBucketForTest(const S3Options& options) {
  return Status::NotSupported("DeleteBucketForTest not implemented yet");
}

std::string UniqueBucketName(const std::string& prefix) {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(rng()));
  return prefix.substr(0, 40) + "-" + std::to_string(getpid()) + "-" + std::string(hex, 10);
}

Result<S3Options> S3TestOptionsFromEnv() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  S3Options o;
  o.endpoint = env("KVFS_TEST_S3_ENDPOINT");
  if (o.endpoint.empty()) return Status::NotFound("KVFS_TEST_S3_ENDPOINT is not set");
  o.credentials.access_key_id = env("KVFS_TEST_S3_ACCESS_KEY");
  o.credentials.secret_access_key = env("KVFS_TEST_S3_SECRET_KEY");
  if (!o.credentials.access_key_id.empty()) o.credentials.source = "KVFS_TEST_S3_* environment";
  o.region = env("KVFS_TEST_S3_REGION");
  if (o.region.empty()) o.region = "us-east-1";
  o.path_style = true;
  o.connect_timeout_ms = 2000;
  o.stall_timeout_ms = 5000;
  o.operation_timeout_ms = 30000;
  return o;
}

}  // namespace kvfs
