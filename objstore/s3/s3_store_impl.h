// S3Store: the ObjectStore on S3 (internal; use NewS3Store from s3_store.h), defined in
// s3_store.cc - but for CompleteMultipartUpload, whose protocol (the one non-idempotent request:
// a HEAD decides whether a failed attempt is sent again) is a concept of its own, CompleteOp in
// s3_complete.cc.
//
// Thread-safe: immutable after construction; all I/O goes through the thread-safe S3Client.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "objstore/object_store.h"
#include "objstore/s3/s3_client.h"

namespace kvfs::s3 {

class S3Store : public ObjectStore {
 public:
  explicit S3Store(std::unique_ptr<S3Client> client) : client_(std::move(client)) {}
  // Cancels what is in flight (callbacks may still use this object) before members go away.
  ~S3Store() override { client_->Shutdown(); }

  std::string Describe() const override;
  StoreStats Stats() const override { return client_->Stats(); }
  Status CheckAccess() override;
  Result<ObjectInfo> Head(const std::string& key) override;
  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override;
  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override;
  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override;
  Result<std::string> CreateMultipartUpload(const std::string& key,
                                            const MultipartOptions& opts) override;
  void UploadPartAsync(const std::string& key, const std::string& upload_id, int part_number,
                       const Body& body, PartCallback done) override;
  Result<ObjectInfo> CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                             const std::vector<CompletedPart>& parts,
                                             const PutOptions& opts) override;
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id) override;
  Result<ListResult> List(const ListRequest& req) override;
  Result<std::vector<UnfinishedUpload>> ListUnfinishedUploads(const std::string& prefix) override;
  Status Delete(const std::string& key, const DeleteOptions& opts = {}) override;
  Result<ObjectInfo> Copy(const std::string& src_key, const std::string& dst_key,
                          const PutOptions& opts) override;

  // HEAD with a callback on the loop thread (building block of the conditional writes).
  void HeadAsync(const std::string& key, std::function<void(Result<ObjectInfo>)> done);

 private:
  // One PUT (with its retries); `if_none_match` sends "If-None-Match: *" and turns 412 into
  // kAlreadyExists; `if_match`, when not empty, is sent as the If-Match header's value, as it is
  // (a 412 stays kPreconditionFailed). Of `sums` only the checksums are used (crc32c,
  // slice_crcs): the conditions are the other arguments.
  void PutOnce(const std::string& key, const Body& body, bool if_none_match, const PutOptions& sums,
               PutCallback done, const std::string& if_match = "");

  std::unique_ptr<S3Client> client_;
};

// ObjectInfo from the headers of a HEAD/PUT/GET response; the size is left 0 for the caller (only
// a HEAD's Content-Length is the object's size, see HeadAsync).
ObjectInfo InfoFromHeaders(const std::string& key, const HttpExchange& ex);

// The ETag S3 gives a multipart object: hex MD5 of the concatenated binary part MD5s, "-", part
// count. Empty if a part ETag is not a plain MD5 (e.g. SSE-KMS), so it cannot be predicted.
std::string ExpectedMultipartEtag(const std::vector<CompletedPart>& parts);

}  // namespace kvfs::s3
