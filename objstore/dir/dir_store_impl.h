// The class behind NewDirStore (objstore/dir/dir_store.h), implemented in dir_store_impl.cc.
// Private to objstore/dir.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <functional>
#include <string>

#include "objstore/dir/dir_key_codec.h"
#include "objstore/dir/dir_store_options.h"
#include "objstore/object_store.h"

namespace kvfs::dirstore {

// Thread-safe: all state is immutable after Init() (which runs before the store is shared)
// except an atomic counter; every operation is
// a sequence of file-system calls whose atomic steps (rename, link) give the S3 semantics.
class DirStore final : public ObjectStore {
 public:
  DirStore(std::string root, DirStoreOptions options);
  // Creates the sub-directories and removes stale temporary files.
  Status Init();

  std::string Describe() const override { return "file://" + root_; }
  Status CheckAccess() override;
  Result<ObjectInfo> Head(const std::string& key) override;
  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override;
  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override;
  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override;
  Result<std::string> CreateMultipartUpload(const std::string& key,
                                            const MultipartOptions& opts) override;
  Result<std::vector<UnfinishedUpload>> ListUnfinishedUploads(const std::string& prefix) override;
  void UploadPartAsync(const std::string& key, const std::string& upload_id, int part_number,
                       const Body& body, PartCallback done) override;
  Result<ObjectInfo> CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                             const std::vector<CompletedPart>& parts,
                                             const PutOptions& opts) override;
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id) override;
  Result<ListResult> List(const ListRequest& req) override;
  Status Delete(const std::string& key, const DeleteOptions& opts = {}) override;
  Result<ObjectInfo> Copy(const std::string& src_key, const std::string& dst_key,
                          const PutOptions& opts) override;

 private:
  // Absolute path of a key's file.
  Result<std::string> ObjectPath(const std::string& key) const;
  // Creates a temporary file, lets `fill` write it, fsyncs it; returns its path. The file is
  // removed again if anything fails.
  Result<std::string> WriteTemp(const std::function<Status(int fd)>& fill, const std::string& what);
  // Publish's If-Match: the bytes at tmp_path replace the version under final_path only if its
  // ETag is if_match (kPreconditionFailed otherwise, nothing written).
  Status ReplaceIfMatch(const std::string& tmp_path, const std::string& final_path,
                        const std::string& key, const std::string& if_match);
  // Moves a finished temporary file onto the key: rename, or link() when only a create is
  // allowed. Removes the temporary file in every case.
  Result<ObjectInfo> Publish(const std::string& tmp_path, const std::string& key,
                             const PutOptions& opts);
  Result<ObjectInfo> PutSync(const std::string& key, const Body& body, const PutOptions& opts);
  // Moves [offset, offset+want) of the open object out of fd; returns the bytes moved.
  using RangeReader = std::function<Result<uint64_t>(int fd, uint64_t offset, uint64_t want)>;
  // Opens the object of `req`, checks its ETag, and reads the range with `read`.
  Result<uint64_t> GetSync(const GetRequest& req, const RangeReader& read);
  Result<std::string> UploadPartSync(const std::string& key, const std::string& upload_id,
                                     int part_number, const Body& body);
  // Directory of an upload after checking that it exists and belongs to `key`.
  Result<std::string> UploadDir(const std::string& key, const std::string& upload_id) const;
  // Removes empty directories between a deleted file and objects_dir_.
  void PruneEmptyParents(const std::string& path) const;
  // Reads <root>/layout, or writes it for a new root: the tree layout, unless objects/ already
  // holds objects of the flat layout (a root made before the tree layout).
  Status ChooseLayout();

  const std::string root_;
  const std::string objects_dir_;
  const std::string tmp_dir_;
  const std::string uploads_dir_;
  const DirStoreOptions options_;
  KeyLayout layout_ = KeyLayout::kTree;  // set by Init()
  std::atomic<uint64_t> temp_seq_{0};
};

}  // namespace kvfs::dirstore
