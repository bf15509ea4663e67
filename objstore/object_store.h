// ObjectStore: the one interface between kvfs and an S3-like object store.
//
// Keys are full object keys inside one bucket (or one local directory); any key prefix
// (s3_file_prefix) is applied by the caller. Every method is thread-safe; implementations may be
// called from many threads at once.
//
// Asynchronous methods (`...Async`) start the operation and return at once; `done` runs exactly
// once, on an internal I/O thread of the store (or inline, for stores without one). A callback
// must not block and must not call a synchronous method of the same store (it would wait on the
// thread that has to serve it). The synchronous methods block the caller until the operation,
// retries included, has finished or its time limit has passed.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/slice_crcs.h"
#include "base/status.h"
#include "objstore/store_stats.h"

namespace kvfs {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;       // as the server sent it, without quotes; may be empty
  int64_t mtime_sec = 0;  // Last-Modified as Unix seconds; 0 if unknown
  // CRC32C of the whole object as its writer recorded it (kvfs's object metadata, see
  // kChecksumMetaHeader); unset when the object carries none (other writers, multipart uploads) or
  // the answer could not carry it (LIST).
  std::optional<uint32_t> crc32c;
  // The CRC32C of each slice of the object as its writer recorded it (kSliceChecksumMetaHeader;
  // set with crc32c for single-PUT chunks, never for multipart ones), when it Fits the size.
  std::optional<SliceCrcs> slice_crcs = std::nullopt;
  // The object carries kvfs's writer mark (kWriterMetaHeader, or kChecksumMetaHeader, which only
  // kvfs writes): kvfs stored it. Set by Head (and a GET's on_info); a LIST cannot carry it. What
  // the bounded tier checks before it counts or removes an object (tier/collector.h): a bucket
  // may hold other applications' objects beside the chunks.
  bool kvfs_written = false;
  // The user.* extended attributes its writer set (UserXattrs::Encode, kXattrsMetaHeader): "" for
  // none; unset where the answer cannot say (a LIST, a multipart completion).
  std::optional<std::string> user_xattrs = std::nullopt;
};

// The object metadata that carries ObjectInfo::crc32c on S3 (8 lowercase hex digits). Ceph RGW 16
// keeps user metadata but knows no x-amz-checksum-*; CRC32C costs ~2 ms per 64 MiB against ~70
// ms for MD5 (bench/micro_checksum.cc), so it is kvfs's own metadata rather than a Content-MD5.
inline constexpr char kChecksumMetaHeader[] = "x-amz-meta-kvfs-crc32c";
std::string FormatCrc32c(uint32_t crc);
// The object metadata that carries ObjectInfo::slice_crcs on S3 (SliceCrcs::Format). A separate
// value, so readers that know only kChecksumMetaHeader keep verifying the whole.
inline constexpr char kSliceChecksumMetaHeader[] = "x-amz-meta-kvfs-crc32c-slices";
// The object metadata that marks every object kvfs's S3 store writes, by PUT and by
// CreateMultipartUpload (S3 takes a multipart object's metadata when the upload is created, so
// multipart chunks, which carry no checksum, carry this), with the value kWriterMetaValue; a copy
// keeps it. The directory store keeps it as the xattr user.kvfs.writer.
inline constexpr char kWriterMetaHeader[] = "x-amz-meta-kvfs-writer";
inline constexpr char kWriterMetaValue[] = "kvfs";
// The object metadata that carries ObjectInfo::user_xattrs on S3, given by PUT and by
// CreateMultipartUpload; a copy keeps it. The directory store keeps it as the xattr
// user.kvfs.xattrs.
inline constexpr char kXattrsMetaHeader[] = "x-amz-meta-kvfs-xattrs";
std::optional<uint32_t> ParseCrc32c(const std::string& hex);

// Bytes to send as a PUT or part body. Not owned: the memory or the file must stay valid until the
// operation completes. Either `data` (memory) or `fd` (a file region read with pread) is used.
struct Body {
  const char* data = nullptr;
  int fd = -1;
  uint64_t offset = 0;  // file offset, when fd >= 0
  uint64_t length = 0;

  static Body FromMemory(const void* p, uint64_t n) {
    Body b;
    b.data = static_cast<const char*>(p);
    b.length = n;
    return b;
  }
  static Body FromFile(int fd, uint64_t offset, uint64_t n) {
    Body b;
    b.fd = fd;
    b.offset = offset;
    b.length = n;
    return b;
  }
};

struct GetRequest {
  static constexpr uint64_t kToEnd = std::numeric_limits<uint64_t>::max();
  std::string key;
  uint64_t offset = 0;
  uint64_t length = kToEnd;  // bytes wanted from offset; kToEnd: up to the end of the object
  std::string if_match;      // ETag the object must still have; empty: any version
  // Called once, before the first byte reaches the caller, with what the store said of the object
  // in its reply (etag, size when known, crc32c): how a reader learns the checksum of an object
  // it only knows from a LIST. Runs where the sink runs. May be empty.
  std::function<void(const ObjectInfo&)> on_info;
};

struct PutOptions {
  // Create only if the key is absent (If-None-Match: *). A lost race gives kAlreadyExists.
  bool if_none_match = false;
  // Replace only the version with this ETag (If-Match on PUT); empty: no condition. A mismatch
  // (or an absent key) gives kPreconditionFailed and writes nothing. Exact in the directory and
  // memory stores; on S3 the server decides: AWS S3 honours it on PutObject, Ceph RGW 16 too but
  // only with the ETag unquoted (objstore/s3 retries a 412 that HEAD contradicts). Single PUTs
  // only: multipart completion is never sent with it. Used to replace an empty object by the
  // first whole chunk written to its name (Uploader::OnExists).
  std::string if_match;
  // Recorded with the object (ObjectInfo::crc32c, slice_crcs) so that readers can verify what
  // they download, and (slices) serve each slice of it once it is checked.
  std::optional<uint32_t> crc32c;
  std::optional<SliceCrcs> slice_crcs = std::nullopt;
  // The chunk's user.* extended attributes (UserXattrs::Encode; ObjectInfo::user_xattrs); "" for
  // none.
  std::string user_xattrs;
};

// What a multipart upload's object carries; S3 takes an object's metadata when its multipart
// upload is created, not at completion.
struct MultipartOptions {
  std::string user_xattrs;  // as PutOptions::user_xattrs
};

struct DeleteOptions {
  // Delete only if the object's ETag is still this (If-Match); empty: whatever it holds. A
  // mismatch gives kPreconditionFailed and deletes nothing. An absent object still succeeds.
  // Honoured exactly by the directory and memory stores; on S3 the server decides: AWS S3 honours
  // If-Match on DeleteObject, Ceph RGW 16 ignores it (deletes whatever the key holds) - callers
  // that must not lose a newer version check with HEAD first (tier/collector.cc).
  std::string if_match;
};

struct ListRequest {
  std::string prefix;
  std::string delimiter;           // "" for a flat listing, "/" for one directory level
  std::string continuation_token;  // from the previous ListResult; "" for the first page
  int max_keys = 1000;
};

struct ListResult {
  std::vector<ObjectInfo> objects;           // in ascending byte order of key
  std::vector<std::string> common_prefixes;  // full prefixes, ending in the delimiter
  bool truncated = false;
  std::string next_continuation_token;  // set when truncated
};

struct CompletedPart {
  int part_number = 0;  // 1-based
  std::string etag;
};

// A multipart upload that was begun and neither completed nor aborted (a writer or daemon that
// died mid-upload leaves one; its parts cost storage until it is aborted).
struct UnfinishedUpload {
  std::string key;
  std::string upload_id;
  int64_t initiated_sec = 0;  // Unix time it was begun; 0 if the store did not say
};

class ObjectStore {
 public:
  using GetCallback = std::function<void(Result<uint64_t> bytes_read)>;
  using PutCallback = std::function<void(Result<ObjectInfo> info)>;
  using PartCallback = std::function<void(Result<std::string> etag)>;
  // Receives a GET's bytes in order: each call holds the `n` bytes that follow those already
  // delivered (from req.offset on, across resumed attempts). Runs on the store's I/O thread (or
  // inline) and holds up the store's other transfers while it runs, so it must be quick (a write
  // to a local file is the intended use). A non-OK return stops the GET, which then completes
  // with that status.
  using GetSink = std::function<Status(const char* data, size_t n)>;

  virtual ~ObjectStore() = default;

  // A short description for messages and logs, e.g. "s3://bucket (http://127.0.0.1:7480)".
  // Never contains secrets.
  virtual std::string Describe() const = 0;

  // Checks that the bucket / directory exists and the credentials are accepted. Used at startup
  // so a mount fails with a clear message instead of serving errors.
  virtual Status CheckAccess() = 0;

  // Metadata of one object. kNotFound if absent.
  virtual Result<ObjectInfo> Head(const std::string& key) = 0;

  // Reads [offset, offset+length) into dst (which has room for `length` bytes, or for the rest of
  // the object when length is kToEnd - then the caller must know the size). Completes with the
  // number of bytes written to dst: fewer than `length` only when the object ends first; an
  // offset past the end reads 0 bytes. A transfer that fails mid-body resumes from the next byte;
  // the bytes delivered are always the object's bytes, never a mix of two versions when if_match
  // is set (kPreconditionFailed if it changed).
  virtual void GetAsync(const GetRequest& req, char* dst, GetCallback done) = 0;

  // GetAsync, but the bytes go to `sink` as they arrive rather than into one buffer, so the caller
  // can use the first bytes (write them to a file, answer a reader) before the last have come,
  // and holds no buffer of its own. `done` gets the number of bytes delivered. The default, for
  // stores that cannot stream, reads the whole range into a temporary buffer and delivers it in
  // one call; it needs a known req.length.
  virtual void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done);

  // Whole-object write: the object appears atomically when the call succeeds.
  virtual void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                        PutCallback done) = 0;

  // Multipart upload. Parts are 1-based; every part but the last must be at least 5 MiB on S3.
  virtual Result<std::string> CreateMultipartUpload(const std::string& key,
                                                    const MultipartOptions& opts) = 0;
  virtual void UploadPartAsync(const std::string& key, const std::string& upload_id,
                               int part_number, const Body& body, PartCallback done) = 0;
  // Returns the new object's info; its etag may be empty if the server sent none (Ceph RGW) -
  // then size is still filled in. With opts.if_none_match, an existing key gives kAlreadyExists.
  virtual Result<ObjectInfo> CompleteMultipartUpload(const std::string& key,
                                                     const std::string& upload_id,
                                                     const std::vector<CompletedPart>& parts,
                                                     const PutOptions& opts) = 0;
  virtual Status AbortMultipartUpload(const std::string& key, const std::string& upload_id) = 0;

  // One page of keys under a prefix, in ascending byte order.
  virtual Result<ListResult> List(const ListRequest& req) = 0;

  // Every unfinished multipart upload of a key under `prefix` (all pages). kNotSupported for
  // stores that keep no such uploads across restarts.
  virtual Result<std::vector<UnfinishedUpload>> ListUnfinishedUploads(const std::string& prefix) {
    return Status::NotSupported("listing unfinished uploads");
  }

  // Deletes a key. Deleting an absent key succeeds (as on S3). Every implementation declares the
  // same default for opts.
  virtual Status Delete(const std::string& key, const DeleteOptions& opts = {}) = 0;

  // Server-side copy of a whole object.
  virtual Result<ObjectInfo> Copy(const std::string& src_key, const std::string& dst_key,
                                  const PutOptions& opts) = 0;

  // Counters since the store was opened. Thread-safe; the values are read one at a time.
  virtual StoreStats Stats() const { return {}; }

  // Synchronous forms of the asynchronous calls: start, then wait for the callback.
  Result<uint64_t> Get(const GetRequest& req, char* dst);
  Result<ObjectInfo> Put(const std::string& key, const Body& body, const PutOptions& opts = {});
  Result<std::string> UploadPart(const std::string& key, const std::string& upload_id,
                                 int part_number, const Body& body);
};

// The one error for "a GET returned a different number of bytes than the listed (HEAD/LIST) size
// promised": the object changed after it was listed, so the reader's view is stale -
// kPreconditionFailed, like a failed If-Match (ESTALE at the kernel; fs/errno_map.cc).
// `detail` says which request saw it ("GET of 100 bytes at 0 returned 40").
Status ObjectSizeChanged(const std::string& key, uint64_t listed_size, const std::string& detail);

}  // namespace kvfs
