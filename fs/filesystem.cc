// Filesystem: construction, names, attributes, open and read. The write path is in fs_write.cc,
// directory operations, unlink and rename in fs_dir.cc.
#include "fs/filesystem.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>

#include "cache/cache_dir.h"

namespace kvfs {

Result<std::unique_ptr<Filesystem>> Filesystem::Create(std::shared_ptr<ObjectStore> store,
                                                       std::shared_ptr<ChunkReader> reader,
                                                       FsOptions options, SteadyClock clock) {
  KVFS_RETURN_IF_ERROR(options.Validate());
  // Creates it private without following symlinks, refuses one another user controls, and removes
  // only the spool files of an earlier run (cache_dir.h).
  KVFS_RETURN_IF_ERROR(PrepareSpoolDir(options.spool_dir, "spool_dir"));
  return std::unique_ptr<Filesystem>(
      new Filesystem(std::move(store), std::move(reader), std::move(options), std::move(clock)));
}

Filesystem::Filesystem(std::shared_ptr<ObjectStore> store, std::shared_ptr<ChunkReader> reader,
                       FsOptions options, SteadyClock clock)
    : store_(std::move(store)),
      reader_(std::move(reader)),
      options_(std::move(options)),
      codec_(options_.key_prefix, options_.fanout_hex_chars),
      uploader_(store_, options_),
      meta_(std::chrono::seconds(options_.metadata_ttl_secs), options_.metadata_cache_max_entries,
            clock),
      listings_(store_, {.ttl = std::chrono::seconds(options_.metadata_ttl_secs)}, clock) {}

Filesystem::~Filesystem() {
  std::lock_guard<std::mutex> l(mu_);
  if (!local_files_.empty()) {
    spdlog::info("kvfs: {} local file(s) not uploaded at shutdown (temporary or unfinished)",
                 local_files_.size());
  }
}

// ---------------------------------------------------------------------------------------------
// Paths and keys

Result<std::vector<std::string>> Filesystem::PathOf(uint64_t ino) const {
  auto p = inodes_.Path(ino);
  if (!p) return Status::NotFound("inode " + std::to_string(ino) + " no longer has a name");
  return *p;
}

Result<std::vector<std::string>> Filesystem::ChildPath(uint64_t parent,
                                                       const std::string& name) const {
  KVFS_RETURN_IF_ERROR(NameCodec::ValidateName(name));
  KVFS_ASSIGN_OR_RETURN(std::vector<std::string> path, PathOf(parent));
  path.push_back(name);
  return path;
}

bool Filesystem::IsTempName(const std::string& name) const {
  for (const auto& pat : options_.temp_patterns) {
    if (fnmatch(pat.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

std::string Filesystem::Display(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& n : path) s += (s.empty() ? "" : "/") + n;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Resolution and attributes

Result<Filesystem::Node> Filesystem::Resolve(const std::string& key) {
  std::shared_ptr<LocalFile> lf = FindLocal(key);
  auto local_node = [&] {
    Node node;
    node.kind = MetaEntry::kFile;
    node.info.key = key;
    node.info.size = lf->size_now();
    node.info.mtime_sec = lf->mtime_sec();
    node.local = lf;
    return node;
  };
  if (lf && lf->temp_now()) return local_node();
  auto remote = ResolveRemote(key);
  // A write in progress shows only while no complete object of that name exists: readers of a
  // chunk being rewritten get the uploaded bytes, never a partial file.
  if (lf && (!remote.ok() || remote->kind != MetaEntry::kFile)) {
    return local_node();
  }
  return remote;
}

Result<Filesystem::Node> Filesystem::ResolveRemote(const std::string& key) {
  Node node;
  if (auto e = meta_.Get(key)) {
    if (e->kind == MetaEntry::kMissing) return Status::NotFound("no such file: " + key);
    node.kind = e->kind;
    node.info = e->info;
    return node;
  }
  if (listings_.KnownMissing(key)) {
    meta_.PutMissing(key);
    return Status::NotFound("no such file: " + key);
  }
  auto head = store_->Head(key);
  if (head.ok()) {
    head->key = key;
    meta_.PutFile(*head);
    node.kind = MetaEntry::kFile;
    node.info = *head;
    return node;
  }
  if (head.status().code() != StatusCode::kNotFound) return head.status();
  if (!codec_.flat() && options_.subdirectories) {
    // Not a file: a directory if any key lies under "key/" (a marker or implicit prefix).
    ListRequest req;
    req.prefix = key + "/";
    req.max_keys = 1;
    KVFS_ASSIGN_OR_RETURN(ListResult lr, store_->List(req));
    if (!lr.objects.empty() || !lr.common_prefixes.empty()) {
      meta_.PutDir(key);
      node.kind = MetaEntry::kDir;
      node.info.key = key;
      return node;
    }
  }
  meta_.PutMissing(key);
  listings_.NoteMiss(key);
  return Status::NotFound("no such file: " + key);
}

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

Result<FsEntry> Filesystem::Lookup(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
  uint64_t ino = inodes_.Ref(parent, name, node.kind == MetaEntry::kDir);
  return FsEntry{AttrOf(ino, node)};
}

void Filesystem::Forget(uint64_t ino, uint64_t nlookup) { inodes_.Forget(ino, nlookup); }

Result<FileAttr> Filesystem::GetAttr(uint64_t ino, std::optional<uint64_t> fh) {
  if (ino == kRootIno) return DirAttr(ino);
  if (fh) {
    auto h = GetHandle(*fh);
    if (h.ok() && (*h)->local) {
      Node node;
      node.kind = MetaEntry::kFile;
      node.info.size = (*h)->local->size_now();
      node.info.mtime_sec = (*h)->local->mtime_sec();
      return AttrOf(ino, node);
    }
  }
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  if (inodes_.IsDir(ino)) return DirAttr(ino);
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
  return AttrOf(ino, node);
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
    if (*req.size > options_.max_chunk_bytes) {
      return Status::ResourceExhausted("truncate past max_chunk_bytes on " + what);
    }
    std::shared_ptr<LocalFile> lf;
    if (fh) {
      auto h = GetHandle(*fh);
      if (h.ok()) lf = (*h)->local;
    }
    if (!lf) {
      auto path = PathOf(ino);
      if (path.ok()) {
        auto key = codec_.FileKey(*path);
        if (key.ok()) lf = FindLocal(*key);
      }
    }
    if (!lf) return Status::PermissionDenied("cannot truncate an uploaded file (" + what + ")");
    std::lock_guard<std::mutex> l(lf->mu);
    if (!lf->failed.ok()) return lf->failed;
    KVFS_RETURN_IF_ERROR(lf->TruncateLocked(*req.size));
    lf->dirty = true;
    cur.size = *req.size;
  }
  return cur;
}

// ---------------------------------------------------------------------------------------------
// Handles, open and read

std::shared_ptr<LocalFile> Filesystem::FindLocal(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = local_files_.find(key);
  return it == local_files_.end() ? nullptr : it->second;
}

Result<std::shared_ptr<Filesystem::Handle>> Filesystem::GetHandle(uint64_t fh) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = handles_.find(fh);
  if (it == handles_.end()) return Status::InvalidArgument("bad file handle");
  return it->second;
}

uint64_t Filesystem::AddHandle(std::shared_ptr<Handle> h) {
  std::lock_guard<std::mutex> l(mu_);
  uint64_t fh = next_fh_++;
  handles_[fh] = std::move(h);
  return fh;
}

Result<OpenResult> Filesystem::Open(uint64_t ino, int flags) {
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  if (path.empty() || inodes_.IsDir(ino)) return Status::InvalidArgument("is a directory");
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->writable = (flags & O_ACCMODE) != O_RDONLY;
  std::shared_ptr<LocalFile> lf;
  if (!h->writable) {
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
    if (node.kind == MetaEntry::kDir) return Status::InvalidArgument("is a directory");
    lf = node.local;
    if (!lf) {
      KVFS_ASSIGN_OR_RETURN(h->remote, reader_->Open(key, node.info));
      // O_DIRECT opens bypass the page cache anyway, and FOPEN_DIRECT_IO would turn the kernel's
      // parallel requests for them into sequential ones.
      const bool direct_io = !options_.page_cache && h->remote->Local() && !(flags & O_DIRECT);
      return OpenResult{AddHandle(std::move(h)), /*keep_cache=*/true, direct_io};
    }
  } else {
    lf = FindLocal(key);
    bool fresh = !lf;
    if (lf && (flags & O_TRUNC)) {
      // O_TRUNC on a file another handle is writing: this writer gets its own version, so two
      // writers of one name never truncate each other's bytes.
      std::lock_guard<std::mutex> l(lf->mu);
      fresh = lf->handles > 0 || !lf->failed.ok();
    }
    if (fresh) {
      // Opening an existing object for writing starts a new, empty version (O_TRUNC or not): the
      // engines rewrite whole chunks, and downloading a chunk only to overwrite it is waste.
      if (!lf) {
        KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
        if (node.kind == MetaEntry::kDir) return Status::InvalidArgument("is a directory");
      }
      if (flags & O_APPEND) {
        return Status::NotSupported("appending to an uploaded file is not supported: " + key);
      }
      KVFS_ASSIGN_OR_RETURN(lf, NewLocal(key, Display(path), IsTempName(path.back()),
                                         inodes_.ParentOf(ino), path.back()));
    }
  }
  std::lock_guard<std::mutex> l(lf->mu);
  if (!lf->failed.ok()) return lf->failed;
  if (h->writable && (flags & O_TRUNC) && lf->size > 0) {
    KVFS_RETURN_IF_ERROR(lf->TruncateLocked(0));
    lf->dirty = true;
  }
  lf->handles++;
  h->local = lf;
  return OpenResult{AddHandle(std::move(h)), /*keep_cache=*/false};
}

Result<uint64_t> Filesystem::Read(uint64_t fh, uint64_t offset, uint64_t size, char* buf) {
  KVFS_ASSIGN_OR_RETURN(auto h, GetHandle(fh));
  if (h->remote) return h->remote->Read(offset, size, buf);
  uint64_t end = h->local->size_now();
  if (offset >= end) return uint64_t{0};
  return h->local->Read(offset, std::min(size, end - offset), buf);
}

Result<FdRange> Filesystem::ReadFd(uint64_t fh, uint64_t offset, uint64_t size,
                                   std::shared_ptr<const void>* keep_alive) {
  KVFS_ASSIGN_OR_RETURN(auto h, GetHandle(fh));
  // Local files change while written; their bytes are copied by Read.
  if (!h->remote) return Status::NotSupported("no file-backed reads of local files");
  KVFS_ASSIGN_OR_RETURN(FdRange r, h->remote->ReadFd(offset, size));
  // The fd belongs to the ReadHandle, which the Handle owns.
  if (keep_alive != nullptr) *keep_alive = std::move(h);
  return r;
}

FsStat Filesystem::StatFs() const {
  FsStat s;
  s.bsize = 4096;
  s.frsize = 4096;
  s.blocks = options_.statfs_total_bytes / s.frsize;
  s.bfree = s.bavail = s.blocks;
  s.files = s.ffree = 1ull << 32;
  s.namemax = NameCodec::kMaxNameBytes;
  return s;
}

size_t Filesystem::LocalFileCount() const {
  std::lock_guard<std::mutex> l(mu_);
  return local_files_.size();
}

}  // namespace kvfs
