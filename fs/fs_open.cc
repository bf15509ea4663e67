// Filesystem open and read: opening a name (for writing: fs_write.cc), reading an open file
// from its object through the reader (or from its local bytes), the file-backed reads the adapter
// splices, and forgetting objects found changed or removed.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "fs/filesystem.h"
#include "fs/read/lazy_read_handle.h"

namespace kvfs {

Result<OpenResult> Filesystem::Open(uint64_t ino, int flags, bool* needs_store, pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  if (path.empty() || inodes_.IsDir(ino)) return Status::InvalidArgument("is a directory");
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  if ((flags & O_ACCMODE) != O_RDONLY) return OpenForWrite(ino, path, key, flags, pid);
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key, needs_store));
  if (node.kind == MetaEntry::kDir) return Status::InvalidArgument("is a directory");
  if (node.local && !VisibleTo(*node.local, pid)) {
    return Status::NotFound("no such file (being written by another process): " + key);
  }
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  if (node.local) {  // a file being written here, or a temp file: its local bytes
    KVFS_RETURN_IF_ERROR(node.local->Attach(/*writer=*/false, /*truncate=*/false));
    h->local = std::move(node.local);
    return OpenResult{handles_.AddFile(std::move(h)), /*keep_cache=*/false};
  }
  h->info = node.info;
  if (tier_) tier_->NoteUse(key);  // a hash-set insert; recorded in the store once per interval
  // Opened in the reader at the first read: an open that never reads (llm-d's existence check)
  // transfers nothing.
  h->remote = std::make_unique<LazyReadHandle>(reader_.get(), key, node.info,
                                               reader_->ServesLocally(node.info));
  // O_DIRECT opens bypass the page cache anyway, and FOPEN_DIRECT_IO would turn the kernel's
  // parallel requests for them into sequential ones.
  const bool direct_io = !options_.page_cache && h->remote->Local() && !(flags & O_DIRECT);
  const int passthrough_fd = options_.passthrough ? h->remote->PassthroughFd() : -1;
  std::string version = node.info.etag + "/" + std::to_string(node.info.size);
  return OpenResult{handles_.AddFile(std::move(h)), /*keep_cache=*/true, direct_io, passthrough_fd,
                    std::move(version)};
}

void Filesystem::NotePassthrough(uint64_t fh) {
  auto h = handles_.File(fh);
  if (h.ok() && (*h)->remote) (*h)->remote->NotePassthrough();
}

Result<uint64_t> Filesystem::Read(uint64_t fh, uint64_t offset, uint64_t size, char* buf) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (h->remote) {
    Result<uint64_t> n = h->remote->Read(offset, size, buf);
    if (n.status().code() == StatusCode::kPreconditionFailed) ForgetChanged(h->ino);
    return n;
  }
  uint64_t end = h->local->size_now();
  if (offset >= end) return uint64_t{0};
  return h->local->Read(offset, std::min(size, end - offset), buf);
}

bool Filesystem::ReadWouldWait(uint64_t fh, uint64_t offset, uint64_t size) {
  auto h = handles_.File(fh);
  // An unknown handle fails at once; local files are read from local bytes.
  if (!h.ok() || !(*h)->remote) return false;
  return (*h)->remote->WouldWait(offset, size);
}

Result<FdRange> Filesystem::ReadFd(uint64_t fh, uint64_t offset, uint64_t size,
                                   std::shared_ptr<const void>* keep_alive) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  // Local files change while written; their bytes are copied by Read.
  if (!h->remote) return Status::NotSupported("no file-backed reads of local files");
  Result<FdRange> got = h->remote->ReadFd(offset, size);
  if (got.status().code() == StatusCode::kPreconditionFailed) ForgetChanged(h->ino);
  KVFS_ASSIGN_OR_RETURN(FdRange r, std::move(got));
  // The fd belongs to the ReadHandle, which the Handle owns.
  if (keep_alive != nullptr) *keep_alive = std::move(h);
  return r;
}

void Filesystem::ForgetChanged(uint64_t ino) {
  auto path = PathOf(ino);
  if (!path.ok()) return;
  auto key = codec_.FileKey(*path);
  if (!key.ok()) return;
  // The handle is stale (ESTALE); the next lookup and open must see the object as it is now.
  meta_.Erase(*key);
  reader_->Invalidate(*key);
}

void Filesystem::ForgetRemoved(const std::string& key) {
  if (local_files_.Find(key)) return;  // a new version is being written here: it is not gone
  meta_.PutMissing(key);
  reader_->Invalidate(key);
}

void Filesystem::KeepOpenLocal(uint64_t ino) {
  for (const auto& h : handles_.FilesOf(ino)) {
    if (!h->remote) continue;
    Status st = h->remote->KeepLocal();
    if (!st.ok()) spdlog::warn("kvfs: keeping an open, unlinked file readable: {}", st.ToString());
  }
}

}  // namespace kvfs
