#include "fs/uploader.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>
#include <vector>

namespace kvfs {

namespace {

Status AsIoError(const Status& s, const std::string& display_name, const std::string& key) {
  if (s.code() == StatusCode::kAlreadyExists) return s;
  return Status::IoError("uploading '" + display_name + "' as " + key + " failed: " + s.ToString());
}

}  // namespace

Uploader::Uploader(std::shared_ptr<ObjectStore> store, const FsOptions& options)
    : store_(std::move(store)), options_(options) {}

Result<ObjectInfo> Uploader::Upload(const std::string& key, int fd, uint64_t size,
                                    const std::string& display_name, bool no_replace,
                                    EarlyUpload* early) {
  bool conditional = options_.conditional_create;
  if (!conditional) {
    // Without If-None-Match the check is a HEAD before the write: racy between nodes, but
    // writers of one chunk name write the same bytes.
    auto head = store_->Head(key);
    if (head.ok()) return OnExists(key, fd, size, display_name, no_replace);
    if (head.status().code() != StatusCode::kNotFound) {
      return AsIoError(head.status(), display_name, key);
    }
  }
  Result<ObjectInfo> r = Status::Internal("unset");
  if (early != nullptr) {
    r = early->Complete(size, conditional);
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
      spdlog::info("early upload of {} failed ({}); uploading it again", key,
                   r.status().ToString());
      early = nullptr;
    }
  }
  if (early == nullptr) {
    r = size >= options_.multipart_threshold ? Multipart(key, fd, size, conditional)
                                             : PutOnce(key, fd, size, conditional);
  }
  if (r.ok()) return r;
  if (r.status().code() == StatusCode::kAlreadyExists) {
    return OnExists(key, fd, size, display_name, no_replace);
  }
  return AsIoError(r.status(), display_name, key);
}

Result<ObjectInfo> Uploader::OnExists(const std::string& key, int fd, uint64_t size,
                                      const std::string& display_name, bool no_replace) {
  auto head = store_->Head(key);
  if (!head.ok() && head.status().code() == StatusCode::kNotFound) {
    // The server refused a conditional create of a key that does not exist (Ceph RGW does this
    // at times). Fall back to an unconditional write: writers of one name write the same bytes.
    spdlog::warn("conditional create of {} refused but the key is absent; writing unconditionally",
                 key);
    auto r = size >= options_.multipart_threshold ? Multipart(key, fd, size, false)
                                                  : PutOnce(key, fd, size, false);
    if (!r.ok()) return AsIoError(r.status(), display_name, key);
    return r;
  }
  if (!head.ok()) return AsIoError(head.status(), display_name, key);
  if (!no_replace && options_.exists_policy == ExistsPolicy::kSameSizeOk && head->size == size) {
    return head;
  }
  return Status::AlreadyExists("'" + display_name + "' already exists as " + key + " (" +
                               std::to_string(head->size) + " bytes; this file has " +
                               std::to_string(size) + ")");
}

Result<ObjectInfo> Uploader::PutOnce(const std::string& key, int fd, uint64_t size,
                                     bool conditional) {
  PutOptions opts;
  opts.if_none_match = conditional;
  auto r = store_->Put(key, Body::FromFile(fd, 0, size), opts);
  if (r.ok() && r->size == 0) r->size = size;
  return r;
}

Result<ObjectInfo> Uploader::Multipart(const std::string& key, int fd, uint64_t size,
                                       bool conditional) {
  KVFS_ASSIGN_OR_RETURN(std::string upload_id, store_->CreateMultipartUpload(key));
  const uint64_t part_size = options_.multipart_part_size;
  const int nparts = static_cast<int>((size + part_size - 1) / part_size);

  // Parts go out with at most upload_parallelism in flight; callbacks (on the store's I/O thread)
  // only record the result and wake this thread.
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  Status first_error;
  std::vector<CompletedPart> parts(nparts);
  for (int i = 0; i < nparts; ++i) {
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return in_flight < options_.upload_parallelism || !first_error.ok(); });
      if (!first_error.ok()) break;
      ++in_flight;
    }
    uint64_t off = static_cast<uint64_t>(i) * part_size;
    uint64_t len = std::min(part_size, size - off);
    store_->UploadPartAsync(key, upload_id, i + 1, Body::FromFile(fd, off, len),
                            [&, i](Result<std::string> etag) {
                              std::lock_guard<std::mutex> l(mu);
                              if (etag.ok()) {
                                parts[i] = CompletedPart{i + 1, *etag};
                              } else if (first_error.ok()) {
                                first_error = etag.status();
                              }
                              --in_flight;
                              cv.notify_all();
                            });
  }
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return in_flight == 0; });
  }
  if (first_error.ok()) {
    PutOptions opts;
    opts.if_none_match = conditional;
    auto r = store_->CompleteMultipartUpload(key, upload_id, parts, opts);
    if (r.ok()) {
      if (r->size == 0) r->size = size;
      return r;
    }
    first_error = r.status();
  }
  Status abort = store_->AbortMultipartUpload(key, upload_id);
  if (!abort.ok()) {
    spdlog::warn("aborting multipart upload of {} failed: {}", key, abort.ToString());
  }
  return first_error;
}

}  // namespace kvfs
