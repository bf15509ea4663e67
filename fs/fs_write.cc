// Filesystem write path: create, write, flush/fsync/release (validate + upload), and the life
// of a LocalFile from creation to upload (or failure) and hand-over to the reader.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include "fs/filesystem.h"

namespace kvfs {

Status Filesystem::ValidateChunk(uint64_t size, const std::string& display_name) const {
  const auto& sizes = options_.chunk_sizes;
  bool whole =
      sizes.empty() ? size > 0 : std::find(sizes.begin(), sizes.end(), size) != sizes.end();
  if (whole) return Status::OK();
  std::string allowed;
  for (uint64_t s : sizes) allowed += (allowed.empty() ? "" : ", ") + std::to_string(s);
  if (allowed.empty()) allowed = "any non-empty size";
  return Status::InvalidArgument("rejected '" + display_name + "': " + std::to_string(size) +
                                 " bytes is not a whole chunk (chunk sizes: " + allowed + ")");
}

Result<std::shared_ptr<LocalFile>> Filesystem::NewLocal(const std::string& key,
                                                        const std::string& display, bool temp,
                                                        uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto lf, LocalFile::Create(options_.spool_dir, key, display, temp));
  {
    std::lock_guard<std::mutex> l(lf->mu);
    lf->parent_ino = parent;
    lf->name = name;
  }
  // The newest writer owns the name; an older LocalFile of that key keeps its open handles and
  // still commits on its own close (conditional create decides between them).
  std::lock_guard<std::mutex> l(mu_);
  local_files_[key] = lf;
  return lf;
}

Result<std::pair<FsEntry, OpenResult>> Filesystem::CreateFile(uint64_t parent,
                                                              const std::string& name, int flags) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  std::shared_ptr<LocalFile> lf;
  if (std::shared_ptr<LocalFile> existing = FindLocal(key)) {
    // (`existing` keeps the file alive while its mutex is held.)
    std::lock_guard<std::mutex> l(existing->mu);
    if (flags & O_EXCL) return Status::AlreadyExists("file exists: " + Display(path));
    if (existing->temp && existing->handles == 0 && !existing->unlinked && existing->failed.ok()) {
      // An idle temp file: reuse it, as creat() on a local file would.
      if (flags & O_TRUNC) KVFS_RETURN_IF_ERROR(existing->TruncateLocked(0));
      existing->dirty = true;
      existing->handles++;
      lf = existing;
    }
    // Otherwise it is in use by another writer: this one gets its own version.
  }
  if (!lf) {
    KVFS_ASSIGN_OR_RETURN(lf, NewLocal(key, Display(path), IsTempName(name), parent, name));
    std::lock_guard<std::mutex> l(lf->mu);
    // A created file must end as an object or as an error, never silently vanish.
    lf->dirty = true;
    lf->handles++;
  }
  uint64_t ino = inodes_.Ref(parent, name, false);
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->writable = true;
  h->local = lf;
  Node node;
  node.kind = MetaEntry::kFile;
  node.info.key = key;
  node.info.size = lf->size_now();
  node.info.mtime_sec = lf->mtime_sec();
  FsEntry entry{AttrOf(ino, node)};
  return std::make_pair(entry, OpenResult{AddHandle(std::move(h)), false});
}

Result<uint64_t> Filesystem::Write(uint64_t fh, uint64_t offset, const char* data, uint64_t size) {
  KVFS_ASSIGN_OR_RETURN(auto h, GetHandle(fh));
  if (!h->writable || !h->local) return Status::InvalidArgument("file not open for writing");
  LocalFile& f = *h->local;
  std::lock_guard<std::mutex> l(f.mu);
  if (offset > options_.max_chunk_bytes || size > options_.max_chunk_bytes - offset) {
    return Status::ResourceExhausted("write past max_chunk_bytes (" +
                                     std::to_string(options_.max_chunk_bytes) + ") in '" +
                                     f.display_name + "'");
  }
  if (!f.failed.ok()) return f.failed;
  KVFS_RETURN_IF_ERROR(f.WriteLocked(offset, data, size));
  f.dirty = true;
  if (options_.upload_while_writing && !f.temp) {
    if (!f.early) {
      f.early = std::make_unique<EarlyUpload>(
          store_.get(), f.key, f.fd(), options_.multipart_part_size, options_.upload_parallelism);
    }
    f.early->OnWrite(offset, size);
  }
  return size;
}

Status Filesystem::Flush(uint64_t fh) {
  KVFS_ASSIGN_OR_RETURN(auto h, GetHandle(fh));
  if (!h->writable || !h->local) return Status::OK();
  std::lock_guard<std::mutex> l(h->local->mu);
  return CommitLocked(*h->local, h->local);
}

Status Filesystem::Fsync(uint64_t fh) { return Flush(fh); }

Status Filesystem::Release(uint64_t fh) {
  std::shared_ptr<Handle> h;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = handles_.find(fh);
    if (it == handles_.end()) return Status::InvalidArgument("bad file handle");
    h = std::move(it->second);
    handles_.erase(it);
  }
  if (!h->local) return Status::OK();
  LocalFile& f = *h->local;
  std::lock_guard<std::mutex> l(f.mu);
  Status st;
  // Normally flush already committed; this covers writes after the last flush.
  if (h->writable) st = CommitLocked(f, h->local);
  if (--f.handles == 0) MaybeDropLocked(f, h->local);
  return st;
}

Status Filesystem::CommitLocked(LocalFile& f, const std::shared_ptr<LocalFile>& self) {
  if (!f.failed.ok()) return f.failed;
  if (!f.dirty || f.temp || f.unlinked) return Status::OK();
  Status st = ValidateChunk(f.size, f.display_name);
  // Parts sent while writing serve only if they still match this key and these bytes; otherwise
  // the early upload is aborted here (reset) and the spool uploads the normal way.
  if (f.early && !(st.ok() && f.early->key() == f.key && f.early->Usable(f.size))) {
    f.early.reset();
  }
  if (st.ok()) {
    auto info = uploader_.Upload(f.key, f.fd(), f.size, f.display_name, /*no_replace=*/false,
                                 f.early.get());
    f.early.reset();
    if (info.ok()) {
      info->key = f.key;
      f.dirty = false;
      f.uploaded = *info;
      meta_.PutFile(*info);
      return Status::OK();
    }
    st = info.status();
  }
  spdlog::warn("kvfs: {}", st.ToString());
  FailLocked(f, self, st);
  return st;
}

void Filesystem::FailLocked(LocalFile& f, const std::shared_ptr<LocalFile>& self,
                            const Status& st) {
  f.failed = st;
  f.dirty = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = local_files_.find(f.key);
    if (it != local_files_.end() && it->second == self) local_files_.erase(it);
  }
  meta_.Erase(f.key);
  if (f.parent_ino != 0) {
    inodes_.Detach(f.parent_ino, f.name);
    if (invalidate_) invalidate_(f.parent_ino, f.name);
  }
}

void Filesystem::MaybeDropLocked(LocalFile& f, const std::shared_ptr<LocalFile>& self) {
  // A temporary file stays (locally) until it is renamed or unlinked.
  if (f.temp && !f.unlinked && f.failed.ok()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = local_files_.find(f.key);
    if (it != local_files_.end() && it->second == self) local_files_.erase(it);
  }
  if (f.uploaded && !f.dirty && !f.unlinked && f.failed.ok()) {
    f.adopted = reader_->AdoptWritten(f.key, *f.uploaded, f.spool_path());
  }
}

}  // namespace kvfs
