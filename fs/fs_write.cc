// Filesystem write path: create, open for writing, write, truncate, flush/fsync/release. Each
// finds the LocalFile, asks it for a transition (fs/local_file.h holds the state machine) and
// records what the transition did (Apply): FLUSH/RELEASE -> LocalFile::Commit/Release -> Uploader
// -> the store's conditional PUT or multipart upload.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include "fs/filesystem.h"

namespace kvfs {

Result<std::shared_ptr<LocalFile>> Filesystem::NewLocal(const std::vector<std::string>& path,
                                                        const std::string& key, uint64_t parent,
                                                        bool created) {
  LocalFile::Env env{&options_,     store_.get(),
                     &uploader_,    reader_.get(),
                     &local_files_, learnt_sizes_.enabled() ? &learnt_sizes_ : nullptr};
  LocalFile::Place place{key, Display(path), parent, path.back()};
  return LocalFile::Create(env, std::move(place), IsTempName(path.back()), created);
}

void Filesystem::Apply(const LocalFile::Outcome& out, const std::shared_ptr<LocalFile>& lf) {
  switch (out.kind) {
    case LocalFile::Outcome::kNothing:
    case LocalFile::Outcome::kRejected:
      return;
    case LocalFile::Outcome::kQueued: {
      // Only write_back queues (Commit and RenameTo without waiting).
      if (lf == nullptr || write_back_ == nullptr) return;
      // Held by the task until it has run: the handles may all be released before.
      write_back_->Submit(lf->size_now(), [this, lf] {
        LocalFile::Outcome up = lf->UploadQueued([this](const LocalFile::Outcome& o) { Apply(o); });
        if (up.kind == LocalFile::Outcome::kDropped) {
          spdlog::error(
              "kvfs: '{}' was accepted at close() but its upload failed: not stored ({}); the "
              "name is gone (write_back)",
              up.place.display, up.status.ToString());
          return false;
        }
        return true;
      });
      return;
    }
    case LocalFile::Outcome::kPublished:
      Published(out.info);
      return;
    case LocalFile::Outcome::kDropped:
      // No object, no visible file: the kernel saw the name created, so it is told to forget it.
      // A failed new version of an existing object (a refused rewrite) leaves the name with its
      // inode, showing the object again; the kernel forgets the version's size.
      meta_.Erase(out.place.key);
      if (out.place.parent_ino != 0) {
        if (!out.object_remains) inodes_.Detach(out.place.parent_ino, out.place.name);
        Invalidate(out.place.parent_ino, out.place.name);
      }
      return;
  }
}

void Filesystem::Published(const ObjectInfo& info) {
  unlinked_.Forget(info.key);  // stored again from here: the name shows again
  meta_.PutFile(info);
  listings_.NoteChild(info.key, /*is_dir=*/false);
  listings_.NoteAdded(info.key);  // a listing made before must not hide it once the entry goes
  if (feed_) feed_->Announce({FeedEvent::kStored, info});
  if (tier_) tier_->NoteWrite(info.key, info.size);
  learnt_sizes_.Observe(info.key, info.size);
}

Result<std::pair<FsEntry, OpenResult>> Filesystem::CreateFile(uint64_t parent,
                                                              const std::string& name, int flags,
                                                              pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  std::shared_ptr<LocalFile> lf = local_files_.Find(key);
  if (lf && (flags & O_EXCL)) return Status::AlreadyExists("file exists: " + Display(path));
  // An idle temp file is reused, as creat() on a local file would; a file another writer is
  // writing is left to it: this one gets its own version.
  if (!lf || !lf->ReuseIdleTemp(flags & O_TRUNC)) {
    // A created file must end as an object or as an error, never silently vanish.
    KVFS_ASSIGN_OR_RETURN(lf, NewLocal(path, key, parent, /*created=*/true));
  }
  lf->set_owner(ProcessOf(pid));
  lf->set_creator(ProcessOf(pid));
  uint64_t ino = inodes_.Ref(parent, name, false);
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->writable = true;
  h->sync = flags & O_DSYNC;  // O_SYNC includes O_DSYNC's bit
  h->local = lf;
  Node node;
  node.kind = MetaEntry::kFile;
  node.info.key = key;
  node.info.size = lf->size_now();
  node.info.mtime_sec = lf->mtime_sec();
  FsEntry entry{AttrOf(ino, node)};
  if (!lf->published_now()) entry.ttl_secs = 0;  // others see it when it is published, not before
  return std::make_pair(entry, OpenResult{handles_.AddFile(std::move(h)), false});
}

Result<OpenResult> Filesystem::OpenForWrite(uint64_t ino, const std::vector<std::string>& path,
                                            const std::string& key, int flags, pid_t pid) {
  std::shared_ptr<LocalFile> lf = local_files_.Find(key);
  // A file that failed or was abandoned is over; O_TRUNC on a file another handle is writing
  // gives this writer its own version, so two writers of one name never truncate each other.
  if (lf && (lf->Ended() || (flags & O_TRUNC))) lf.reset();
  if (lf) {
    KVFS_RETURN_IF_ERROR(lf->Attach(/*writer=*/true, /*truncate=*/false));
  } else {
    // Opening an existing object write-only starts a new, empty version (O_TRUNC or not): the
    // engines rewrite whole chunks, and downloading a chunk only to overwrite it is waste. Opened
    // for reading and writing, it keeps its bytes (below).
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
    if (node.kind == MetaEntry::kDir) return Status::InvalidArgument("is a directory");
    if (flags & O_APPEND) {
      return Status::NotSupported("appending to an uploaded file is not supported: " + key);
    }
    KVFS_ASSIGN_OR_RETURN(lf, NewLocal(path, key, inodes_.ParentOf(ino), /*created=*/false));
    lf->set_owner(ProcessOf(pid));
    lf->set_creator(ProcessOf(pid));
    if ((flags & O_ACCMODE) == O_RDWR && !(flags & O_TRUNC) && node.info.size > 0) {
      // Read and write: the file keeps its bytes (a shared mapping reads them back).
      KVFS_ASSIGN_OR_RETURN(auto from, reader_->Open(key, node.info));
      Status st = lf->Preload(from.get(), node.info.size);
      if (!st.ok()) {
        lf->Discard();
        local_files_.EraseIf(key, lf.get());
        return st;
      }
    }
  }
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->writable = true;
  h->sync = flags & O_DSYNC;
  h->local = std::move(lf);
  return OpenResult{handles_.AddFile(std::move(h)), /*keep_cache=*/false};
}

Result<uint64_t> Filesystem::Write(uint64_t fh, uint64_t offset, const char* data, uint64_t size,
                                   pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (!h->writable || !h->local) return Status::InvalidArgument("file not open for writing");
  // The process that writes is the writer (a descriptor handed to a server process, a forked
  // worker): its close publishes. One /proc read per writing thread and handle.
  if (pid > 0 && h->last_writer_thread.exchange(pid) != pid) h->local->set_owner(ProcessOf(pid));
  LocalFile::Outcome out;
  auto r = h->local->Write(offset, data, size, &out);
  Apply(out);
  return r;
}

Status Filesystem::Flush(uint64_t fh, pid_t pid) {
  return Commit(fh, pid, /*wait=*/!options_.write_back);
}

Status Filesystem::Fsync(uint64_t fh) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (h->local && h->local->FsyncWaits()) {
    // A chunk accepted at a close or rename (write_back) is made durable here, or its failure
    // reported, whichever descriptor asks.
    LocalFile::Outcome out = h->local->Commit(/*wait=*/true);
    Apply(out);
    return out.status;
  }
  // A chunk still being written is not published by fsync: an O_SYNC/O_DSYNC writer's kernel
  // sends one after every write(), mid-chunk. As a close by a thread the daemon cannot place
  // (pid 0), this publishes only where nobody's close can be told from another's (no owner).
  return Commit(fh, /*pid=*/0, /*wait=*/true);
}

void Filesystem::DrainWriteBack() {
  if (write_back_ == nullptr) return;
  const WriteBackStats s = write_back_->Stats();
  if (s.pending > 0) {
    spdlog::info("kvfs: waiting for {} chunk upload(s) accepted at close() ({} bytes)", s.pending,
                 s.pending_bytes);
  }
  write_back_->Drain();
}

Status Filesystem::Commit(uint64_t fh, pid_t pid, bool wait) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (!h->writable || !h->local) return Status::OK();
  LocalFile& lf = *h->local;
  const pid_t owner = lf.owner();
  const pid_t tgid = ProcessOf(pid);
  // A process that was handed the descriptor (a server writing its log to an inherited stdout)
  // and exits with a status (exit(), the end of main) with it open closes it like an explicit
  // close. The file's own creator exiting with it open, or anyone killed by a signal (kill -9,
  // the OOM killer, a crash), is a dying writer: a chunk half written is never published.
  const bool exiting = pid > 0 && probe_.exiting && probe_.exiting(pid) &&
                       (tgid == 0 || tgid == lf.creator() || !probe_.killed || probe_.killed(pid));
  if (owner != 0 && tgid != owner && !(exiting && tgid == 0)) {
    // Another process's copy of the descriptor (a child closing it at exec or exit, a shell, a
    // server the descriptor was handed to before it wrote): the writer's own close publishes.
    return Status::OK();
  }
  if (exiting) {
    // The writer died (or a thread we could not place did): nothing is published for it. Its
    // own later close, if it was not the writer after all, still commits (kAbandoned).
    Apply(lf.Abandon(pid));
    return Status::OK();  // nobody is left to read this answer
  }
  if (owner != 0 && lf.size_now() == 0 && lf.WouldPublish()) {
    // Nothing written yet: the descriptor may live on in a process it was handed to (a server's
    // log on its stdout) that writes later. An empty file is published at its last release.
    return Status::OK();
  }
  if (owner != 0 && probe_.holds_writer && lf.WouldPublish()) {
    // The writer still holds the file through another descriptor (`cmd > f`: the shell's dup2
    // and close of the original; an explicit dup): that descriptor's close publishes.
    auto path = PathOf(h->ino);
    if (path.ok() && !path->empty() && probe_.holds_writer(owner, h->ino, path->back())) {
      return Status::OK();
    }
  }
  LocalFile::Outcome out = h->local->Commit(wait || h->sync);
  Apply(out, h->local);
  return out.status;
}

Status Filesystem::Release(uint64_t fh) {
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<Handle> h, handles_.TakeFile(fh));
  if (!h->local) return Status::OK();
  if (write_back_ != nullptr && h->local->queued_now()) {
    // Its upload may hold the file's lock: the release waits on the write-back queue's release
    // threads, not on this FUSE worker. Nothing is left to commit (the chunk was accepted).
    write_back_->Post([this, lf = h->local, writable = h->writable] {
      ReleaseLocal(*lf, writable);
    });
    return Status::OK();
  }
  return ReleaseLocal(*h->local, h->writable);
}

Status Filesystem::ReleaseLocal(LocalFile& lf, bool writable) {
  LocalFile::Outcome out = lf.Release(writable);
  Apply(out);
  if (out.leave) lf.LeaveLocalFiles();  // the name resolves to the object now
  return out.status;
}

}  // namespace kvfs
