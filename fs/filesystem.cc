// Filesystem: construction, names, attributes, open and read. The write path is in fs_write.cc,
// directory operations, unlink and rename in fs_dir.cc.
#include "fs/filesystem.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>

#include "cache/cache_dir.h"
#include "fs/process_state.h"
#include "fs/read/lazy_read_handle.h"

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
      meta_(std::chrono::seconds(options_.metadata_ttl_secs), options_.metadata_cache_max_bytes,
            clock),
      learnt_sizes_(options_.learn_chunk_sizes && options_.chunk_sizes.empty()),
      listings_(
          store_,
          {.ttl = std::chrono::seconds(options_.metadata_ttl_secs),
           .on_object = [this](const ObjectInfo& o) { learnt_sizes_.Observe(o.key, o.size); }},
          clock),
      revalidator_(store_, &meta_, reader_.get(), options_.revalidate_timeout_ms),
      probe_(ProcMatchesOwnPid() ? ProcessProbe{ProcessIsExiting, KilledBySignal, ThreadGroupOf,
                                                [](pid_t tgid, uint64_t ino, const std::string& n) {
                                                  return HoldsWritableFd(tgid, ino, n);
                                                }}
                                 : ProcessProbe{}),
      unlinked_(UnlinkedNames::kDefaultMaxEntries) {
  if (!probe_.exiting) {
    spdlog::warn(
        "kvfs: /proc does not show this daemon's own pid namespace: closes by dying processes "
        "cannot be told from live ones, nor a writer's close from its children's, so a partial "
        "chunk may be published unless chunk_sizes is set, and chunks being written are "
        "visible to every process");
  }
}

Filesystem::~Filesystem() {
  if (size_t n = local_files_.size()) {
    spdlog::info("kvfs: {} local file(s) not uploaded at shutdown (temporary or unfinished)", n);
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

Result<Filesystem::Node> Filesystem::Resolve(const std::string& key, bool* needs_store) {
  std::shared_ptr<LocalFile> lf = local_files_.Find(key);
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
  auto remote = ResolveRemote(key, needs_store);
  if (needs_store != nullptr && *needs_store) return remote;
  // A write in progress shows only while no complete object of that name exists: readers of a
  // chunk being rewritten get the uploaded bytes, never a partial file.
  if (lf && (!remote.ok() || remote->kind != MetaEntry::kFile)) {
    return local_node();
  }
  return remote;
}

Result<Filesystem::Node> Filesystem::ResolveRemote(const std::string& key, bool* needs_store) {
  Node node;
  auto hidden = [&] { return Status::NotFound("no such file (unlinked on this node): " + key); };
  if (auto e = meta_.Get(key)) {
    if (e->kind == MetaEntry::kMissing) return Status::NotFound("no such file: " + key);
    node.kind = e->kind;
    node.info = e->info;
    node.ttl_secs = std::chrono::duration<double>(e->left).count();
    // A listing made after the unlink still holds the object: it stays hidden here.
    if (node.kind == MetaEntry::kFile && unlinked_.Hides(node.info)) return hidden();
    return node;
  }
  if (listings_.KnownMissing(key)) {
    meta_.PutMissing(key);
    return Status::NotFound("no such file: " + key);
  }
  if (auto local = ServeLocalCopy(key)) {
    if (unlinked_.Hides(local->info)) return hidden();
    return *local;
  }
  if (needs_store != nullptr) {
    *needs_store = true;
    return Status::Unavailable(key + ": the answer needs the store");
  }
  // With directories, one LIST tells file from directory from missing (fs_lookup.cc).
  if (!codec_.flat() && options_.subdirectories) return ResolveByListing(key);
  auto head = store_->Head(key);
  if (head.ok()) {
    head->key = key;
    return FoundFile(std::move(head).value());
  }
  if (head.status().code() != StatusCode::kNotFound) return head.status();
  unlinked_.Forget(key);  // gone from the store: a new object of that name will show
  meta_.PutMissing(key);
  listings_.NoteMiss(key);
  return Status::NotFound("no such file: " + key);
}

std::optional<Filesystem::Node> Filesystem::ServeLocalCopy(const std::string& key) {
  if (options_.cached_chunk_trust_secs == 0 || reader_ == nullptr) return std::nullopt;
  std::optional<ChunkReader::LocalCopyInfo> copy = reader_->LocalCopy(key);
  if (!copy) return std::nullopt;
  const MetaCache::Stale stale = meta_.GetStale(key);
  Node node;
  node.kind = MetaEntry::kFile;
  if (stale.entry) {
    // The last answer of the store must be about the same object as the local copy.
    const ObjectInfo& info = stale.entry->info;
    if (stale.entry->kind != MetaEntry::kFile || info.size != copy->size ||
        (!info.etag.empty() && !copy->etag.empty() && info.etag != copy->etag)) {
      return std::nullopt;
    }
    if (stale.age > std::chrono::seconds(options_.cached_chunk_trust_secs)) return std::nullopt;
    node.info = info;
  } else {
    // No metadata (evicted, or a restart): the fill was the store's last word on it.
    if (time(nullptr) - copy->fetched_sec >
        static_cast<int64_t>(options_.cached_chunk_trust_secs)) {
      return std::nullopt;
    }
    node.info.key = key;
    node.info.size = copy->size;
    node.info.etag = copy->etag;
    node.info.mtime_sec = copy->fetched_sec;
  }
  node.info.key = key;
  revalidator_.Enqueue(node.info, stale.gen);
  return node;
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

Result<FsEntry> Filesystem::Lookup(uint64_t parent, const std::string& name, bool* needs_store,
                                   pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  // A temporary name is never uploaded under that name: without a local file it does not exist,
  // and the open(O_CREAT) of each engine's temp file costs no request.
  if (IsTempName(name) && local_files_.Find(key) == nullptr) {
    return Status::NotFound("no such file (temporary name, local only): " + key);
  }
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key, needs_store));
  FsEntry entry;
  entry.ttl_secs = node.ttl_secs;
  if (node.local && !node.local->published_now()) {
    // A chunk being written: only its writer sees it, and nobody caches the answer, so that
    // others see it the moment it is published.
    entry.ttl_secs = 0;
    if (!VisibleTo(*node.local, pid)) return entry;  // ino 0, not cached
  }
  uint64_t ino = inodes_.Ref(parent, name, node.kind == MetaEntry::kDir);
  entry.attr = AttrOf(ino, node);
  return entry;
}

void Filesystem::KeepOpenLocal(uint64_t ino) {
  std::vector<std::shared_ptr<Handle>> open;
  {
    MutexLock l(&mu_);
    for (const auto& [fh, h] : handles_) {
      if (h->ino == ino && h->remote) open.push_back(h);
    }
  }
  for (const auto& h : open) {
    Status st = h->remote->KeepLocal();
    if (!st.ok()) spdlog::warn("kvfs: keeping an open, unlinked file readable: {}", st.ToString());
  }
}

double Filesystem::MissTtlSecs(uint64_t parent, const std::string& name) {
  auto path = ChildPath(parent, name);
  if (!path.ok()) return 0;
  auto key = codec_.FileKey(*path);
  if (!key.ok()) return 0;
  auto missing = meta_.Get(*key);
  if (!missing) return 0;  // not cached here (a temp name, caching off): the kernel asks again
  return std::chrono::duration<double>(missing->left).count();
}

pid_t Filesystem::ProcessOf(pid_t pid) const {
  return pid > 0 && probe_.thread_group ? probe_.thread_group(pid) : 0;
}

bool Filesystem::VisibleTo(const LocalFile& lf, pid_t pid) const {
  if (lf.published_now()) return true;
  const pid_t owner = lf.owner();
  if (owner == 0) return true;  // written from a pid namespace we cannot see into
  const pid_t tgid = ProcessOf(pid);
  // The creator too: a process that opens a log file and hands it to a server process reads
  // what the server writes.
  return tgid == 0 || tgid == owner || tgid == lf.creator();
}

std::optional<FileAttr> Filesystem::AttrOfOpen(uint64_t ino) const {
  MutexLock l(&mu_);
  for (const auto& [fh, h] : handles_) {
    if (h->ino != ino) continue;
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

void Filesystem::Forget(uint64_t ino, uint64_t nlookup) { inodes_.Forget(ino, nlookup); }

Result<FileAttr> Filesystem::GetAttr(uint64_t ino, std::optional<uint64_t> fh, bool* needs_store) {
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
      auto h = GetHandle(*fh);
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

// ---------------------------------------------------------------------------------------------
// Handles, open and read

Result<std::shared_ptr<Filesystem::Handle>> Filesystem::GetHandle(uint64_t fh) const {
  MutexLock l(&mu_);
  auto it = handles_.find(fh);
  if (it == handles_.end()) return Status::InvalidArgument("bad file handle");
  return it->second;
}

uint64_t Filesystem::AddHandle(std::shared_ptr<Handle> h) {
  MutexLock l(&mu_);
  uint64_t fh = next_fh_++;
  handles_[fh] = std::move(h);
  return fh;
}

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
    return OpenResult{AddHandle(std::move(h)), /*keep_cache=*/false};
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
  return OpenResult{AddHandle(std::move(h)), /*keep_cache=*/true, direct_io};
}

Result<uint64_t> Filesystem::Read(uint64_t fh, uint64_t offset, uint64_t size, char* buf) {
  KVFS_ASSIGN_OR_RETURN(auto h, GetHandle(fh));
  if (h->remote) {
    Result<uint64_t> n = h->remote->Read(offset, size, buf);
    if (n.status().code() == StatusCode::kPreconditionFailed) ForgetChanged(h->ino);
    return n;
  }
  uint64_t end = h->local->size_now();
  if (offset >= end) return uint64_t{0};
  return h->local->Read(offset, std::min(size, end - offset), buf);
}

void Filesystem::ForgetRemoved(const std::string& key) {
  if (local_files_.Find(key)) return;  // a new version is being written here: it is not gone
  meta_.PutMissing(key);
  reader_->Invalidate(key);
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

bool Filesystem::ReadWouldWait(uint64_t fh, uint64_t offset, uint64_t size) {
  auto h = GetHandle(fh);
  // An unknown handle fails at once; local files are read from local bytes.
  if (!h.ok() || !(*h)->remote) return false;
  return (*h)->remote->WouldWait(offset, size);
}

Result<FdRange> Filesystem::ReadFd(uint64_t fh, uint64_t offset, uint64_t size,
                                   std::shared_ptr<const void>* keep_alive) {
  KVFS_ASSIGN_OR_RETURN(auto h, GetHandle(fh));
  // Local files change while written; their bytes are copied by Read.
  if (!h->remote) return Status::NotSupported("no file-backed reads of local files");
  Result<FdRange> got = h->remote->ReadFd(offset, size);
  if (got.status().code() == StatusCode::kPreconditionFailed) ForgetChanged(h->ino);
  KVFS_ASSIGN_OR_RETURN(FdRange r, std::move(got));
  // The fd belongs to the ReadHandle, which the Handle owns.
  if (keep_alive != nullptr) *keep_alive = std::move(h);
  return r;
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

size_t Filesystem::LocalFileCount() const { return local_files_.size(); }

}  // namespace kvfs
