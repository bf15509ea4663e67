// Filesystem attributes: of files (from what a name resolves to, or from an open handle when the
// name is gone), of directories (fixed), their changes (only truncation of a local file), and
// statfs (the free space of the cache disk, or of the bounded tier).
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <ctime>

#include "fs/filesystem.h"

namespace kvfs {

FileAttr Filesystem::DirAttr(uint64_t ino) const {
  FileAttr a;
  a.ino = ino;
  a.is_dir = true;
  a.mode = S_IFDIR | options_.dir_mode;
  a.nlink = 2;
  a.uid = options_.uid;
  a.gid = options_.gid;
  a.mtime_sec = 0;
  return a;
}

FileAttr Filesystem::AttrOf(uint64_t ino, const Node& node) const {
  if (node.kind == MetaEntry::kDir) return DirAttr(ino);
  FileAttr a;
  a.ino = ino;
  a.size = node.info.size;
  a.mtime_sec = node.info.mtime_sec ? node.info.mtime_sec : time(nullptr);
  a.mode = S_IFREG | options_.file_mode;
  a.nlink = 1;
  a.uid = options_.uid;
  a.gid = options_.gid;
  return a;
}

std::optional<FileAttr> Filesystem::AttrOfOpen(uint64_t ino) const {
  for (const auto& h : handles_.FilesOf(ino)) {
    Node node;
    node.kind = MetaEntry::kFile;
    if (h->local) {
      node.info.size = h->local->size_now();
      node.info.mtime_sec = h->local->mtime_sec();
    } else {
      node.info = h->info;
    }
    return AttrOf(ino, node);
  }
  return std::nullopt;
}

Result<FileAttr> Filesystem::GetAttr(uint64_t ino, std::optional<uint64_t> fh, bool* needs_store) {
  if (ino == kRootIno) return DirAttr(ino);
  if (fh) {
    auto h = handles_.File(*fh);
    if (h.ok() && (*h)->local) {
      Node node;
      node.kind = MetaEntry::kFile;
      node.info.size = (*h)->local->size_now();
      node.info.mtime_sec = (*h)->local->mtime_sec();
      return AttrOf(ino, node);
    }
  }
  auto path = PathOf(ino);
  if (!path.ok()) {
    // fstat() of a file unlinked while open (the kernel passes no handle with it): the file
    // lives until its last close, as on a local filesystem (tempfile.TemporaryFile, pytest).
    if (auto open = AttrOfOpen(ino)) return *open;
    return path.status();
  }
  if (inodes_.IsDir(ino)) return DirAttr(ino);
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(*path));
  Result<Node> node = Resolve(key, needs_store);
  if (!node.ok() && node.status().code() == StatusCode::kNotFound) {
    // Removed by another node while open here: this mount's handles still read it.
    if (auto open = AttrOfOpen(ino)) return *open;
  }
  KVFS_RETURN_IF_ERROR(node.status());
  return AttrOf(ino, *node);
}

Result<FileAttr> Filesystem::SetAttr(uint64_t ino, const SetAttrRequest& req,
                                     std::optional<uint64_t> fh) {
  KVFS_ASSIGN_OR_RETURN(FileAttr cur, GetAttr(ino, fh));
  const std::string what = "inode " + std::to_string(ino);
  if (req.mode && (*req.mode & 07777) != (cur.mode & 07777)) {
    return Status::PermissionDenied("chmod is not supported (fixed mode) on " + what);
  }
  if ((req.uid && *req.uid != cur.uid) || (req.gid && *req.gid != cur.gid)) {
    return Status::PermissionDenied("chown is not supported (fixed owner) on " + what);
  }
  if (req.size && *req.size != cur.size) {
    if (cur.is_dir) return Status::InvalidArgument("cannot truncate a directory");
    std::shared_ptr<LocalFile> lf;
    if (fh) {
      auto h = handles_.File(*fh);
      if (h.ok()) lf = (*h)->local;
    }
    if (!lf) {
      auto path = PathOf(ino);
      if (path.ok()) {
        auto key = codec_.FileKey(*path);
        if (key.ok()) lf = local_files_.Find(*key);
      }
    }
    if (!lf) return Status::PermissionDenied("cannot truncate an uploaded file (" + what + ")");
    KVFS_RETURN_IF_ERROR(lf->Truncate(*req.size));
    cur.size = *req.size;
  }
  return cur;
}

FsStat Filesystem::StatFs() const {
  FsStat s;
  s.bsize = 4096;
  s.frsize = 4096;
  s.blocks = options_.statfs_total_bytes / s.frsize;
  // Free: what this node can still take for new chunks. The store itself has no limit here; what
  // fills up is the disk of the cache directory, where chunks are spooled while written and
  // which the cache's chunks share (evicted as needed). So free = that disk's free space plus the
  // cache's evictable bytes, at most the reported size: engines' free-space guards (LMCache's
  // DiskGuard, SGLang's cleaner, llm-d's evictor) then stop or evict only when writes would
  // really fail with ENOSPC, not because the cache holds copies it can drop.
  uint64_t free_bytes = s.blocks * s.frsize;
  struct statvfs disk;
  if (!options_.spool_dir.empty() && statvfs(options_.spool_dir.c_str(), &disk) == 0) {
    const uint64_t takes = static_cast<uint64_t>(disk.f_bavail) * disk.f_frsize +
                           (reader_ ? reader_->EvictableBytes() : 0);
    free_bytes = std::min(free_bytes, takes);
  }
  // With a bounded tier, the tier's capacity and what is left of it (counted by the collector,
  // plus this node's writes since): the engines' guards then see the shared tier fill up.
  if (auto usage = tier_ ? tier_->CurrentUsage() : std::nullopt) {
    s.blocks = usage->capacity / s.frsize;
    const uint64_t left = usage->used >= usage->capacity ? 0 : usage->capacity - usage->used;
    free_bytes = std::min(free_bytes, left);
  }
  s.bfree = s.bavail = free_bytes / s.frsize;
  s.files = s.ffree = 1ull << 32;
  s.namemax = NameCodec::kMaxNameBytes;
  return s;
}

}  // namespace kvfs
