// MemoryStore's multipart uploads in progress, and S3's rules for completing one.
#include "tests/fakes/memory_uploads.h"

namespace kvfs {

namespace {

Status NoSuchUpload(const std::string& id) { return Status::NotFound("no such upload: " + id); }

}  // namespace

void MemoryUploads::Begin(const std::string& id, const std::string& key, int64_t initiated_sec) {
  uploads_[id].key = key;
  uploads_[id].initiated_sec = initiated_sec;
}

std::vector<UnfinishedUpload> MemoryUploads::Unfinished(const std::string& prefix) const {
  std::vector<UnfinishedUpload> out;
  for (const auto& [id, u] : uploads_) {
    if (u.key.compare(0, prefix.size(), prefix) == 0) out.push_back({u.key, id, u.initiated_sec});
  }
  return out;
}

Result<MemoryUploads::Part*> MemoryUploads::PartOf(const std::string& id, const std::string& key,
                                                   int part_number) {
  auto it = uploads_.find(id);
  if (it == uploads_.end() || it->second.key != key) return NoSuchUpload(id);
  return &it->second.parts[part_number];
}

Result<std::string> MemoryUploads::Assemble(const std::string& id, const std::string& key,
                                            const std::vector<CompletedPart>& parts,
                                            uint64_t min_part_size) const {
  auto it = uploads_.find(id);
  if (it == uploads_.end() || it->second.key != key) return NoSuchUpload(id);
  if (parts.empty()) return Status::InvalidArgument("complete with no parts: " + key);
  std::string data;
  int prev = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const CompletedPart& cp = parts[i];
    if (cp.part_number <= prev) return Status::InvalidArgument("parts not ascending: " + key);
    prev = cp.part_number;
    auto pit = it->second.parts.find(cp.part_number);
    if (pit == it->second.parts.end() || pit->second.etag != cp.etag) {
      return Status::InvalidArgument("invalid part " + std::to_string(cp.part_number) + ": " + key);
    }
    if (i + 1 < parts.size() && pit->second.data.size() < min_part_size) {
      return Status::InvalidArgument("part too small: " + key);
    }
    data += pit->second.data;
  }
  return data;
}

Status MemoryUploads::End(const std::string& id, const std::string& key) {
  auto it = uploads_.find(id);
  if (it == uploads_.end() || it->second.key != key) return NoSuchUpload(id);
  uploads_.erase(it);
  return Status::OK();
}

}  // namespace kvfs
