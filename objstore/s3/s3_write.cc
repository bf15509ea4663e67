// Writes: PUT with conditional create, CompleteMultipartUpload (never retried blindly), Copy.
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <future>

#include "objstore/s3/s3_store_impl.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs::s3 {
namespace {

// Above this size a conditional PUT asks for "100 Continue" first, so a 412 arrives before the
// body is sent (Ceph RGW may refuse conditional creates that then fall back to a plain PUT).
constexpr uint64_t kExpectContinueBytes = 1 << 20;

Status AlreadyExists(const std::string& what, const Status& from) {
  Status st = Status::AlreadyExists(what + ": the key already exists (conditional create)");
  st.SetHttp(from.http_status(), from.s3_code(), from.request_id());
  return st;
}

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string ExpectedMultipartEtag(const std::vector<CompletedPart>& parts) {
  std::string concat;
  for (const CompletedPart& p : parts) {
    const std::string hex = StripQuotes(p.etag);
    if (hex.size() != 32) return "";
    for (size_t i = 0; i < 32; i += 2) {
      const int hi = HexVal(hex[i]), lo = HexVal(hex[i + 1]);
      if (hi < 0 || lo < 0) return "";
      concat.push_back(static_cast<char>(hi * 16 + lo));
    }
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(concat.data(), concat.size(), md, &len, EVP_md5(), nullptr);
  return HexEncode(md, len) + "-" + std::to_string(parts.size());
}

void S3Store::PutOnce(const std::string& key, const Body& body, bool if_none_match,
                      std::optional<uint32_t> crc32c, PutCallback done) {
  auto call = std::make_shared<S3Call>();
  call->operation = "PUT";
  call->method = "PUT";
  call->key = key;
  call->body = body;
  call->has_body = true;
  if (crc32c) call->headers.emplace_back(kChecksumMetaHeader, FormatCrc32c(*crc32c));
  if (if_none_match) {
    call->headers.emplace_back("If-None-Match", "*");
    if (body.length >= kExpectContinueBytes) call->headers.emplace_back("Expect", "100-continue");
  }
  const std::string what = "PUT " + S3Uri(client_->options().bucket, key);
  const uint64_t size = body.length;
  call->done = [=, done = std::move(done)](Status st, std::unique_ptr<HttpExchange> ex) {
    if (!st.ok()) {
      if (if_none_match && st.code() == StatusCode::kPreconditionFailed) {
        done(AlreadyExists(what, st));
      } else {
        done(std::move(st));
      }
      return;
    }
    ObjectInfo info = InfoFromHeaders(key, *ex);
    info.size = size;
    info.crc32c = crc32c;
    done(std::move(info));
  };
  client_->Execute(std::move(call));
}

void S3Store::PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                       PutCallback done) {
  if (!opts.if_none_match) {
    PutOnce(key, body, false, opts.crc32c, std::move(done));
    return;
  }
  const std::string what = "PUT " + S3Uri(client_->options().bucket, key);
  // kHeadCheck, and kAuto's fallback: HEAD, then an unconditional PUT if the key is absent.
  const std::optional<uint32_t> crc = opts.crc32c;
  auto head_then_put = [this, key, body, what, crc](PutCallback cb, Status if_exists) {
    HeadAsync(key,
              [this, key, body, what, crc, cb = std::move(cb), if_exists](Result<ObjectInfo> r) {
                if (r.ok()) {
                  cb(AlreadyExists(what, if_exists));
                } else if (r.status().code() == StatusCode::kNotFound) {
                  PutOnce(key, body, false, crc, cb);
                } else {
                  cb(r.status());
                }
              });
  };
  switch (client_->options().conditional_create) {
    case ConditionalCreateMode::kHeadCheck:
      head_then_put(std::move(done), Status::OK());
      return;
    case ConditionalCreateMode::kHeader:
      PutOnce(key, body, true, crc, std::move(done));
      return;
    case ConditionalCreateMode::kAuto:
      PutOnce(key, body, true, crc,
              [head_then_put, done = std::move(done), what](Result<ObjectInfo> r) mutable {
                // A 412 may be a lie (Ceph RGW 16 on new keys) and a 501 means no support:
                // check with HEAD before believing it.
                if (!r.ok() && (r.status().code() == StatusCode::kAlreadyExists ||
                                r.status().code() == StatusCode::kNotSupported)) {
                  spdlog::debug("s3: {}: conditional create answered {}, checking with HEAD", what,
                                r.status().ToString());
                  head_then_put(std::move(done), r.status());
                  return;
                }
                done(std::move(r));
              });
      return;
  }
}

Result<ObjectInfo> S3Store::Copy(const std::string& src_key, const std::string& dst_key,
                                 const PutOptions& opts) {
  const std::string& bucket = client_->options().bucket;
  const std::string what = "COPY " + S3Uri(bucket, src_key) + " to " + S3Uri(bucket, dst_key);
  if (opts.if_none_match) {
    // Conditional copy support varies even more than conditional PUT: HEAD first (small race).
    Result<ObjectInfo> existing = Head(dst_key);
    if (existing.ok()) return AlreadyExists(what, Status::OK());
    if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  }
  auto call = std::make_shared<S3Call>();
  call->operation = "COPY to";
  call->method = "PUT";
  call->key = dst_key;
  call->headers.emplace_back("x-amz-copy-source", "/" + bucket + "/" + UriEncode(src_key, false));
  S3Client* client = client_.get();
  call->check = [client, call_ptr = call.get()](const HttpExchange& ex) -> Status {
    Status st = client->DefaultCheck(*call_ptr, ex);
    if (!st.ok()) return st;
    // S3 may fail a copy after sending 200: the error is then in the body.
    Result<WriteResultDoc> doc = ParseCopyObjectResult(ex.body);
    if (!doc.ok()) return doc.status();
    if (doc->is_error) {
      return MapHttpError(static_cast<int>(ex.http_status), doc->error,
                          client->Context(call_ptr->operation, call_ptr->key));
    }
    return Status::OK();
  };
  S3Client::Reply reply = client_->ExecuteSync(std::move(call));
  if (!reply.status.ok()) {
    // The source missing is the interesting NotFound; say so.
    if (reply.status.s3_code() == "NoSuchKey") {
      return Status(StatusCode::kNotFound, what + ": source not found")
          .SetHttp(404, "NoSuchKey", reply.status.request_id());
    }
    return reply.status;
  }
  Result<ObjectInfo> info = Head(dst_key);
  if (!info.ok()) return info.status().Annotate(what + " succeeded, but HEAD of the copy failed");
  return info;
}

}  // namespace kvfs::s3
