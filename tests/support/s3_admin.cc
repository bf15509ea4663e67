#include "tests/support/s3_admin.h"

#include <unistd.h>

#include <cstdlib>
#include <random>

#include "objstore/s3/s3_client.h"
#include "objstore/s3/s3_store.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs {

Status CreateBucketForTest(const S3Options& options) {
  KVFS_ASSIGN_OR_RETURN(auto client, s3::S3Client::Create(options));
  auto call = std::make_shared<s3::S3Call>();
  call->operation = "CreateBucket";
  call->method = "PUT";
  if (!options.region.empty() && options.region != "us-east-1") {
    call->SetBody(
        "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<LocationConstraint>" +
        options.region + "</LocationConstraint></CreateBucketConfiguration>");
  }
  Status st = client->ExecuteSync(std::move(call)).status;
  if (st.s3_code() == "BucketAlreadyOwnedByYou") return Status::OK();
  return st;
}

Status DeleteBucketForTest(const S3Options& options) {
  KVFS_ASSIGN_OR_RETURN(auto store, NewS3Store(options));
  // Objects, page by page.
  ListRequest req;
  for (;;) {
    Result<ListResult> page = store->List(req);
    if (!page.ok()) {
      return page.status().s3_code() == "NoSuchBucket" ? Status::OK() : page.status();
    }
    for (const ObjectInfo& o : page->objects) KVFS_RETURN_IF_ERROR(store->Delete(o.key));
    if (!page->truncated) break;
    req.continuation_token = page->next_continuation_token;
  }
  // Pending multipart uploads.
  KVFS_ASSIGN_OR_RETURN(auto client, s3::S3Client::Create(options));
  for (int round = 0; round < 100; ++round) {
    auto call = std::make_shared<s3::S3Call>();
    call->operation = "ListMultipartUploads";
    call->method = "GET";
    call->query = {{"uploads", ""}};
    s3::S3Client::Reply reply = client->ExecuteSync(std::move(call));
    if (!reply.status.ok()) return reply.status;
    KVFS_ASSIGN_OR_RETURN(s3::UploadList list, s3::ParseListMultipartUploads(reply.ex->body));
    for (const s3::PendingUpload& u : list.uploads) {
      KVFS_RETURN_IF_ERROR(store->AbortMultipartUpload(u.key, u.upload_id));
    }
    if (list.uploads.empty() || !list.truncated) break;
  }
  auto call = std::make_shared<s3::S3Call>();
  call->operation = "DeleteBucket";
  call->method = "DELETE";
  Status st = client->ExecuteSync(std::move(call)).status;
  if (st.s3_code() == "NoSuchBucket") return Status::OK();
  return st;
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
