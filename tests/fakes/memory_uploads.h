// MemoryUploads: the multipart uploads MemoryStore (tests/fakes/memory_store.h) has begun and not
// yet completed or aborted: their parts as uploaded, and S3's rules for assembling an object from
// them at CompleteMultipartUpload (parts ascending, each named by its ETag, every part but the
// last at least the minimum part size).
//
// Thread-safety: not thread-safe; MemoryStore guards its one instance with its own mutex.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "objstore/object_store.h"

namespace kvfs {

class MemoryUploads {
 public:
  struct Part {
    std::string data;
    std::string etag;
  };

  // Begins upload `id` of `key`.
  void Begin(const std::string& id, const std::string& key, int64_t initiated_sec);
  // The uploads whose key starts with `prefix`, in upload-id order.
  std::vector<UnfinishedUpload> Unfinished(const std::string& prefix) const;
  // Part `part_number` of upload `id` of `key`, empty when new (the caller fills it in):
  // kNotFound when there is no such upload of that key.
  Result<Part*> PartOf(const std::string& id, const std::string& key, int part_number);
  // The object's bytes: the `parts` of upload `id` of `key`, concatenated, as S3 checks them
  // (kNotFound: no such upload; kInvalidArgument: no parts, out of order, unknown or mismatched
  // ETag, a part but the last under `min_part_size`). The upload stays.
  Result<std::string> Assemble(const std::string& id, const std::string& key,
                               const std::vector<CompletedPart>& parts,
                               uint64_t min_part_size) const;
  // Ends upload `id` of `key` (completed or aborted); kNotFound when there is no such upload.
  Status End(const std::string& id, const std::string& key);
  size_t size() const { return uploads_.size(); }

 private:
  struct Upload {
    std::string key;
    int64_t initiated_sec = 0;
    std::map<int, Part> parts;
  };
  std::map<std::string, Upload> uploads_;
};

}  // namespace kvfs
