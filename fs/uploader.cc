#include "fs/uploader.h"

#include <vector>

#include "base/crc32c.h"
#include "base/deadline.h"
#include "base/log.h"
#include "base/posix_io.h"
#include "base/slice_crcs.h"

namespace kvfs {

namespace {

Status AsIoError(const Status& s, const std::string& display_name, const std::string& key) {
  if (s.code() == StatusCode::kAlreadyExists) return s;
  // Past blocking_timeout: ETIMEDOUT, as for every other request that waited on the store.
  if (s.code() == StatusCode::kDeadlineExceeded) {
    return s.Annotate("uploading '" + display_name + "' as " + key);
  }
  return Status::IoError("uploading '" + display_name + "' as " + key + " failed: " + s.ToString());
}

}  // namespace

Uploader::Uploader(std::shared_ptr<ObjectStore> store, const FsOptions& options)
    : store_(std::move(store)), options_(options) {}

Result<UploadOutcome> Uploader::Upload(const std::string& key, int fd, uint64_t size,
                                       const std::string& display_name, bool no_replace,
                                       EarlyUpload* early, std::optional<WrittenCrc> crc,
                                       const std::string& user_xattrs) {
  Result<ObjectInfo> r = Status::Internal("unset");
  if (early != nullptr) {
    r = early->Complete(size, /*conditional=*/true);
    const bool out_of_time = r.status().code() == StatusCode::kDeadlineExceeded ||
                             (ThreadDeadlineMs() > 0 && MonotonicMs() >= ThreadDeadlineMs());
    if (!r.ok() && out_of_time) return AsIoError(r.status(), display_name, key);
    if (!r.ok() && r.status().code() != StatusCode::kAlreadyExists) {
      LogInfo("early upload of {} failed ({}); uploading it again", key, r.status().ToString());
      early = nullptr;
    }
  }
  if (early == nullptr) {
    r = size >= options_.multipart_threshold ? Multipart(key, fd, size, user_xattrs)
                                             : PutOnce(key, fd, size, crc, user_xattrs);
  }
  if (r.ok()) return UploadOutcome{std::move(r).value(), /*created=*/true};
  if (r.status().code() == StatusCode::kAlreadyExists) {
    return OnExists(key, fd, size, display_name, no_replace, crc, user_xattrs);
  }
  return AsIoError(r.status(), display_name, key);
}

Result<UploadOutcome> Uploader::OnExists(const std::string& key, int fd, uint64_t size,
                                         const std::string& display_name, bool no_replace,
                                         std::optional<WrittenCrc> known_crc,
                                         const std::string& user_xattrs, bool retried_empty) {
  // The store has already made sure the key exists (objstore/s3 checks a doubtful 412 itself);
  // what is left is the exists policy, which needs the existing object's size.
  auto head = store_->Head(key);
  if (!head.ok()) {
    return Status::IoError("uploading '" + display_name + "' as " + key +
                           ": the key exists but cannot be read back: " + head.status().ToString());
  }
  if (head->size == size && head->crc32c) {
    // Our own PUT whose reply was lost (the retry met our object), or another writer's identical
    // bytes: the same checksum makes it ours, whatever the exists policy, and the local copy
    // may be kept.
    Result<uint32_t> crc = Status::Internal("unset");
    if (known_crc) {
      crc = known_crc->whole;
    } else {
      Result<SliceCrcs> of_file = SliceCrcsOfFile(fd, size, "spool of " + key);
      crc = of_file.ok() ? Result<uint32_t>(of_file->Whole(size)) : of_file.status();
    }
    if (crc.ok() && *crc == *head->crc32c) {
      head->key = key;
      return UploadOutcome{std::move(head).value(), /*created=*/true};
    }
  }
  if (!no_replace && options_.exists_policy == ExistsPolicy::kSameSizeOk && head->size == size) {
    head->key = key;
    return UploadOutcome{std::move(head).value(), /*created=*/false};
  }
  if (!no_replace && head->size == 0 && size > 0 && size <= kMaxReplacePut && !head->etag.empty()) {
    // An empty object is no chunk (no engine writes one): it is a name that was created and
    // closed before its bytes came - fio lays its file out that way, `touch x; echo hello > x`
    // too. Keeping it would drop the whole chunk written after it (EEXIST at a close nobody
    // checks), so the first whole chunk replaces it - conditionally: only while the key still
    // holds that empty version (If-Match on its ETag), so two writers racing end with one whole
    // version and the loser meets it here again (same bytes: ours; else the rules above).
    auto put = PutOnce(key, fd, size, known_crc, user_xattrs, /*conditional=*/false, head->etag);
    if (put.ok()) {
      LogInfo("kvfs: '{}' replaced the empty object {} with {} bytes", display_name, key, size);
      return UploadOutcome{std::move(put).value(), /*created=*/true};
    }
    if (put.status().code() != StatusCode::kPreconditionFailed) {
      return AsIoError(put.status(), display_name, key);
    }
    if (!retried_empty) {
      // Another version got there first: judge that one as any existing object.
      return OnExists(key, fd, size, display_name, no_replace, known_crc, user_xattrs,
                      /*retried_empty=*/true);
    }
  }
  return Status::AlreadyExists("'" + display_name + "' already exists as " + key + " (" +
                               std::to_string(head->size) + " bytes; this file has " +
                               std::to_string(size) + ")");
}

Result<UploadOutcome> Uploader::Replace(const std::string& key, int fd, uint64_t size,
                                        const std::string& display_name,
                                        std::optional<WrittenCrc> crc,
                                        const std::string& user_xattrs) {
  Result<ObjectInfo> r = size >= options_.multipart_threshold
                             ? Multipart(key, fd, size, user_xattrs, /*conditional=*/false)
                             : PutOnce(key, fd, size, crc, user_xattrs, /*conditional=*/false);
  if (r.ok()) return UploadOutcome{std::move(r).value(), /*created=*/true};
  return AsIoError(r.status(), display_name, key);
}

Result<ObjectInfo> Uploader::PutOnce(const std::string& key, int fd, uint64_t size,
                                     const std::optional<WrittenCrc>& crc,
                                     const std::string& user_xattrs, bool conditional,
                                     const std::string& if_match) {
  PutOptions opts;
  opts.if_none_match = conditional;
  opts.if_match = if_match;
  opts.user_xattrs = user_xattrs;
  if (crc) {
    opts.crc32c = crc->whole;
    opts.slice_crcs = crc->slices;  // when not known: the whole only
  } else {
    KVFS_ASSIGN_OR_RETURN(opts.slice_crcs, SliceCrcsOfFile(fd, size, "spool of " + key));
    opts.crc32c = opts.slice_crcs->Whole(size);
  }
  auto r = store_->Put(key, Body::FromFile(fd, 0, size), opts);
  if (r.ok() && r->size == 0) r->size = size;
  return r;
}

Result<ObjectInfo> Uploader::Multipart(const std::string& key, int fd, uint64_t size,
                                       const std::string& user_xattrs, bool conditional) {
  // The same parallel part upload as the parts sent while writing, all of it now: parts go out
  // with at most upload_parallelism in flight, and a failure aborts the upload.
  EarlyUpload upload(store_.get(), key, fd, options_.multipart_part_size,
                     options_.upload_parallelism, &aborts_, user_xattrs);
  return upload.Complete(size, conditional);
}

}  // namespace kvfs
