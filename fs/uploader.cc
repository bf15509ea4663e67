#include "fs/uploader.h"

#include <spdlog/spdlog.h>

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
  // The same parallel part upload as the parts sent while writing, all of it now: parts go out
  // with at most upload_parallelism in flight, and a failure aborts the upload.
  EarlyUpload upload(store_.get(), key, fd, options_.multipart_part_size,
                     options_.upload_parallelism);
  return upload.Complete(size, conditional);
}

}  // namespace kvfs
