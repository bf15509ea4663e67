#include "objstore/s3/s3_store.h"

#include <future>

#include "objstore/s3/s3_get.h"
#include "objstore/s3/s3_store_impl.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs {

Result<std::shared_ptr<ObjectStore>> NewS3Store(const S3Options& options) {
  KVFS_ASSIGN_OR_RETURN(auto client, s3::S3Client::Create(options));
  return std::shared_ptr<ObjectStore>(std::make_shared<s3::S3Store>(std::move(client)));
}

namespace s3 {

ObjectInfo InfoFromHeaders(const std::string& key, const HttpExchange& ex) {
  ObjectInfo info;
  info.key = key;
  info.etag = StripQuotes(ex.Header("etag"));
  info.crc32c = ParseCrc32c(ex.Header(kChecksumMetaHeader));
  std::string when = ex.Header("last-modified");
  if (when.empty()) when = ex.Header("date");
  if (!when.empty()) {
    const time_t t = curl_getdate(when.c_str(), nullptr);
    if (t > 0) info.mtime_sec = t;
  }
  return info;
}

std::string S3Store::Describe() const {
  return S3Uri(client_->options().bucket, "") + " (" + client_->endpoint().ToString() + ")";
}

Status S3Store::CheckAccess() {
  ListRequest req;
  req.max_keys = 1;
  Result<ListResult> r = List(req);
  if (r.ok()) return Status::OK();
  return r.status().Annotate("S3 store " + Describe() + " is not usable");
}

void S3Store::HeadAsync(const std::string& key, std::function<void(Result<ObjectInfo>)> done) {
  auto call = std::make_shared<S3Call>();
  call->operation = "HEAD";
  call->method = "HEAD";
  call->key = key;
  call->done = [key, bucket = client_->options().bucket, done = std::move(done)](
                   Status st, std::unique_ptr<HttpExchange> ex) {
    if (!st.ok()) return done(std::move(st));
    ObjectInfo info = InfoFromHeaders(key, *ex);
    // The size becomes a file's size: a missing, negative or overflowing one is refused, not
    // turned into 0 or 2^64-1.
    const std::string len = ex->Header("content-length");
    if (!ParseObjectSize(len, &info.size)) {
      return done(Status::Internal("HEAD " + S3Uri(bucket, key) + ": invalid Content-Length '" +
                                   len.substr(0, 32) + "' in the reply"));
    }
    done(std::move(info));
  };
  client_->Execute(std::move(call));
}

Result<ObjectInfo> S3Store::Head(const std::string& key) {
  std::promise<Result<ObjectInfo>> p;
  auto f = p.get_future();
  HeadAsync(key, [&p](Result<ObjectInfo> r) { p.set_value(std::move(r)); });
  return f.get();
}

void S3Store::GetAsync(const GetRequest& req, char* dst, GetCallback done) {
  if (req.length == 0) {
    done(uint64_t{0});
    return;
  }
  StartGet(client_.get(), req, MemorySink(dst), std::move(done));
}

void S3Store::GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) {
  if (req.length == 0) {
    done(uint64_t{0});
    return;
  }
  StartGet(client_.get(), req, std::move(sink), std::move(done));
}

Result<ListResult> S3Store::List(const ListRequest& req) {
  auto call = std::make_shared<S3Call>();
  call->operation = "LIST";
  call->method = "GET";
  call->query = {{"list-type", "2"}, {"encoding-type", "url"}};
  if (!req.prefix.empty()) call->query.emplace_back("prefix", req.prefix);
  if (!req.delimiter.empty()) call->query.emplace_back("delimiter", req.delimiter);
  if (!req.continuation_token.empty()) {
    call->query.emplace_back("continuation-token", req.continuation_token);
  }
  if (req.max_keys > 0) call->query.emplace_back("max-keys", std::to_string(req.max_keys));
  S3Client::Reply reply = client_->ExecuteSync(std::move(call));
  if (!reply.status.ok()) return reply.status;
  Result<ListResult> r = ParseListObjectsV2(reply.ex->body);
  if (!r.ok()) return r.status().Annotate("LIST " + S3Uri(client_->options().bucket, req.prefix));
  // A listing that cannot advance would make every caller's page loop spin until its deadline.
  if (r->truncated && (r->next_continuation_token.empty() ||
                       r->next_continuation_token == req.continuation_token)) {
    return Status::IoError(
        "LIST " + S3Uri(client_->options().bucket, req.prefix) + " at " +
        client_->endpoint().ToString() + ": the server says the listing continues but " +
        (r->next_continuation_token.empty() ? "sent no continuation token"
                                            : "sent back the continuation token it was given") +
        " (a pagination loop)");
  }
  return r;
}

Status S3Store::Delete(const std::string& key) {
  auto call = std::make_shared<S3Call>();
  call->operation = "DELETE";
  call->method = "DELETE";
  call->key = key;
  Status st = client_->ExecuteSync(std::move(call)).status;
  // Deleting an absent key succeeds, as on S3 (some servers answer 404).
  if (st.code() == StatusCode::kNotFound && st.s3_code() != "NoSuchBucket") return Status::OK();
  return st;
}

Result<std::string> S3Store::CreateMultipartUpload(const std::string& key) {
  auto call = std::make_shared<S3Call>();
  call->operation = "CreateMultipartUpload";
  call->method = "POST";
  call->key = key;
  call->query = {{"uploads", ""}};
  S3Client::Reply reply = client_->ExecuteSync(std::move(call));
  if (!reply.status.ok()) return reply.status;
  Result<std::string> id = ParseInitiateMultipartUpload(reply.ex->body);
  if (!id.ok()) return id.status().Annotate("CreateMultipartUpload " + key);
  return id;
}

void S3Store::UploadPartAsync(const std::string& key, const std::string& upload_id, int part_number,
                              const Body& body, PartCallback done) {
  auto call = std::make_shared<S3Call>();
  call->operation = "UploadPart " + std::to_string(part_number) + " of";
  call->method = "PUT";
  call->key = key;
  call->query = {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}};
  call->body = body;
  call->has_body = true;
  const std::string what = call->operation + " " + S3Uri(client_->options().bucket, key);
  call->done = [done = std::move(done), what](Status st, std::unique_ptr<HttpExchange> ex) {
    if (!st.ok()) {
      done(std::move(st));
      return;
    }
    std::string etag = StripQuotes(ex->Header("etag"));
    if (etag.empty()) {
      done(Status::Internal(what + ": the server sent no ETag for the part"));
    } else {
      done(std::move(etag));
    }
  };
  client_->Execute(std::move(call));
}

Status S3Store::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  auto call = std::make_shared<S3Call>();
  call->operation = "AbortMultipartUpload";
  call->method = "DELETE";
  call->key = key;
  call->query = {{"uploadId", upload_id}};
  Status st = client_->ExecuteSync(std::move(call)).status;
  if (st.s3_code() == "NoSuchUpload") return Status::OK();  // already gone: the goal is reached
  return st;
}

}  // namespace s3
}  // namespace kvfs
