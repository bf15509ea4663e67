// MemoryStore: an in-memory ObjectStore with S3 semantics, for unit tests.
//
// Semantics follow S3: keys in ascending byte order, List with delimiter and continuation tokens,
// conditional create (If-None-Match: * -> kAlreadyExists), If-Match on GET (kPreconditionFailed),
// multipart uploads whose object appears only on Complete, Delete of an absent key succeeds,
// If-Match on Delete (kPreconditionFailed). What it stores through the ObjectStore calls carries
// kvfs's writer mark (ObjectInfo::kvfs_written, as the S3 store's writes do); PutObject stores an
// object without it, as another application would.
// Asynchronous calls complete inline on the calling thread (the interface allows this for stores
// without an I/O thread), so a test sees their effect as soon as the call returns.
//
// Thread-safe: one mutex guards all state; callbacks run after it is released.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "objstore/object_store.h"
#include "objstore/store_ops.h"
#include "tests/fakes/memory_uploads.h"
#include "tests/fakes/ordered_listing.h"

namespace kvfs {

class MemoryStore : public ObjectStore {
 public:
  MemoryStore() = default;

  std::string Describe() const override { return "mem://"; }
  Status CheckAccess() override {
    Count(StoreOp::kCheckAccess);
    return Status::OK();
  }
  Result<ObjectInfo> Head(const std::string& key) override;
  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override;
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
  Result<std::vector<UnfinishedUpload>> ListUnfinishedUploads(const std::string& prefix) override;
  Result<ListResult> List(const ListRequest& req) override;
  Status Delete(const std::string& key, const DeleteOptions& opts = {}) override;
  Result<ObjectInfo> Copy(const std::string& src_key, const std::string& dst_key,
                          const PutOptions& opts) override;

  // --- Test helpers ---
  // Stores an object directly (as "another tool" would), bypassing counters: it carries no
  // kvfs mark or checksum.
  void PutObject(const std::string& key, std::string data);
  // Runs once, right before the next Delete of `key` takes effect (with the store unlocked): a
  // test's way to make something happen between a caller's check and its delete.
  void BeforeNextDelete(const std::string& key, std::function<void()> fn);
  // Flips the bits of the byte at `offset` of an object in place, keeping its ETag and checksum:
  // damage at rest that only a checksum can reveal.
  void CorruptObject(const std::string& key, uint64_t offset);
  // Sets an object's Last-Modified (tests of what depends on the store's clock).
  void SetMtime(const std::string& key, int64_t mtime_sec);
  // The object's bytes, or nullopt if absent.
  std::optional<std::string> GetObject(const std::string& key) const;
  // All keys, ascending.
  std::vector<std::string> Keys() const;
  size_t ObjectCount() const;
  // Multipart uploads started but neither completed nor aborted.
  size_t PendingUploadCount() const;
  // Minimum size of every part but the last (S3: 5 MiB). Default 0 so tests can use tiny parts.
  void SetMinPartSize(uint64_t bytes);
  // Requests served of one operation (objstore/store_ops.h), for tests that check how many
  // requests an operation costs; Requests(): of all operations.
  uint64_t Calls(StoreOp op) const { return calls_[OpIndex(op)].load(); }
  uint64_t Requests() const;

 private:
  struct Object {
    std::string data;
    std::string etag;
    int64_t mtime_sec = 0;
    std::optional<uint32_t> crc32c;
    std::optional<SliceCrcs> slice_crcs;
    bool kvfs_written = false;
    std::string user_xattrs;
  };
  static Result<std::string> ReadBody(const Body& body);
  static ObjectInfo InfoOf(const std::string& key, const Object& obj);
  // What a LIST says of it: no metadata, as on S3.
  static ObjectInfo ListedInfoOf(const std::string& key, const Object& obj);
  std::string NextEtagLocked(const std::string& data) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Object> objects_ GUARDED_BY(mu_);
  MemoryUploads uploads_ GUARDED_BY(mu_);
  // Upload id -> the attributes CreateMultipartUpload was given (S3 takes metadata there).
  std::map<std::string, std::string> upload_xattrs_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  uint64_t min_part_size_ GUARDED_BY(mu_) = 0;
  std::map<std::string, std::function<void()>> before_delete_ GUARDED_BY(mu_);
  void Count(StoreOp op) { calls_[OpIndex(op)].fetch_add(1); }
  std::array<std::atomic<uint64_t>, kNumStoreOps> calls_{};
};

// A fresh, empty in-memory store.
std::shared_ptr<ObjectStore> NewMemoryStore();

}  // namespace kvfs
