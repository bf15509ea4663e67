#include "fs/fs_options.h"

#include <unistd.h>

namespace kvfs {

Status FsOptions::Validate() {
  if (!key_prefix.empty() && key_prefix.back() != '/') key_prefix += '/';
  if (key_prefix.size() > 512) return Status::InvalidArgument("key_prefix longer than 512 bytes");
  if (key_prefix.find("//") != std::string::npos || key_prefix == "/") {
    return Status::InvalidArgument("key_prefix must not contain empty components: " + key_prefix);
  }
  if (max_chunk_bytes == 0) return Status::InvalidArgument("max_chunk_bytes must be positive");
  // A lookup's LIST must see at least the object of the name itself (filesystem.cc, Lookups).
  if (lookup_list_max_keys < 1 || lookup_list_max_keys > 1000) {
    return Status::InvalidArgument("lookup_list_max_keys must be in 1..1000");
  }
  for (uint64_t s : chunk_sizes) {
    if (s == 0 || s > max_chunk_bytes) {
      return Status::InvalidArgument("chunk_sizes entry " + std::to_string(s) +
                                     " must be in 1..max_chunk_bytes");
    }
  }
  if (multipart_part_size == 0) return Status::InvalidArgument("multipart_part_size must be > 0");
  if (multipart_threshold == 0) return Status::InvalidArgument("multipart_threshold must be > 0");
  if ((max_chunk_bytes + multipart_part_size - 1) / multipart_part_size > 10000) {
    return Status::InvalidArgument("multipart_part_size too small: more than 10000 parts");
  }
  if (upload_parallelism < 1) return Status::InvalidArgument("upload_parallelism must be >= 1");
  if (write_back_uploads < 1) return Status::InvalidArgument("write_back_uploads must be >= 1");
  if (fanout_hex_chars < 0 || fanout_hex_chars > kMaxFanoutHexChars) {
    return Status::InvalidArgument("fanout_hex_chars must be in 0.." +
                                   std::to_string(kMaxFanoutHexChars));
  }
  if (spool_dir.empty()) return Status::InvalidArgument("spool_dir is required");
  if (uid == static_cast<uid_t>(-1)) uid = getuid();
  if (gid == static_cast<gid_t>(-1)) gid = getgid();
  file_mode &= 07777;
  dir_mode &= 07777;
  return Status::OK();
}

const FsOptions& DefaultFsOptions() {
  static const FsOptions defaults;
  return defaults;
}

}  // namespace kvfs
