// ListMultipartUploads, all pages: the unfinished uploads under a prefix.
#include "objstore/s3/s3_store_impl.h"
#include "objstore/s3/s3_url.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs::s3 {

namespace {
// A server that keeps answering "truncated" with the same markers must not loop forever.
constexpr int kMaxPages = 10000;
}  // namespace

Result<std::vector<UnfinishedUpload>> S3Store::ListUnfinishedUploads(const std::string& prefix) {
  std::vector<UnfinishedUpload> out;
  std::string key_marker, id_marker;
  for (int page = 0; page < kMaxPages; ++page) {
    auto call = std::make_shared<S3Call>();
    call->operation = "ListMultipartUploads";
    call->method = "GET";
    call->query = {{"uploads", ""}};
    if (!prefix.empty()) call->query.emplace_back("prefix", prefix);
    if (!key_marker.empty()) call->query.emplace_back("key-marker", key_marker);
    if (!id_marker.empty()) call->query.emplace_back("upload-id-marker", id_marker);
    S3Client::Reply reply = client_->ExecuteSync(std::move(call));
    if (!reply.status.ok()) return reply.status;
    Result<UploadList> list = ParseListMultipartUploads(reply.ex->body);
    const std::string what = "ListMultipartUploads " + S3Uri(client_->options().bucket, prefix);
    if (!list.ok()) return list.status().Annotate(what);
    for (PendingUpload& u : list->uploads) {
      out.push_back({std::move(u.key), std::move(u.upload_id), u.initiated_sec});
    }
    if (!list->truncated) return out;
    if (list->next_key_marker == key_marker && list->next_upload_id_marker == id_marker) {
      return Status::IoError(what + ": the server repeated its page markers");
    }
    key_marker = list->next_key_marker;
    id_marker = list->next_upload_id_marker;
  }
  return Status::IoError("ListMultipartUploads " + S3Uri(client_->options().bucket, prefix) +
                         ": more than " + std::to_string(kMaxPages) + " pages");
}

}  // namespace kvfs::s3
