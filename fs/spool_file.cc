// SpoolFile (fs/spool_file.h), in three parts: its life and handles (creation of the spool,
// attach and release of handles, the hand-over of a committed spool to the reader); the
// transitions that publish or drop it; its bytes.
#include "fs/spool_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <memory>

#include "base/crc32c.h"
#include "base/deadline.h"
#include "base/fd_reserve.h"
#include "base/log.h"
#include "base/posix_io.h"

namespace kvfs {

Result<std::shared_ptr<SpoolFile>> SpoolFile::Create(const Deps& deps, Place place, bool temp,
                                                     bool created) {
  static std::atomic<uint64_t> counter{0};
  std::string path;
  int fd = -1;
  // A sealed spool of an earlier run (after a reboot, a pid may come again) keeps its name.
  for (int tries = 0; tries < 1000 && fd < 0; ++tries) {
    path = deps.options->spool_dir + "/spool-" + std::to_string(getpid()) + "-" +
           std::to_string(counter.fetch_add(1));
    // Writers decide how many spool files are open: never the daemon's last descriptors.
    fd =
        KeepFdReserve(open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int err = errno;
    if (err == EMFILE) unlink(path.c_str());  // created, then refused by the reserve
    return Status::FromErrno(err, "creating spool file " + path);
  }
  std::string key = place.key;
  std::shared_ptr<SpoolFile> f(new SpoolFile(deps, fd, std::move(path), std::move(place), temp));
  {
    MutexLock l(&f->mu_);
    if (created) f->DirtyLocked();
    f->over_object_ = !created;
    f->handles_ = 1;
    f->writers_ = 1;
  }
  // The newest writer owns the name; an older SpoolFile of that key keeps its open handles and
  // still commits on its own close (conditional create decides between them).
  deps.files->Put(key, f);
  return f;
}

Result<std::shared_ptr<SpoolFile>> SpoolFile::Recover(const Deps& deps,
                                                      const std::string& spool_path,
                                                      const SpoolSeal::Record& seal, Place place) {
  int fd = KeepFdReserve(open(spool_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  if (fd < 0) return Status::FromErrno(errno, "opening sealed spool file " + spool_path);
  struct stat st;
  Status bad;
  Result<SliceCrcs> crcs = Status::Internal("not computed");
  if (fstat(fd, &st) != 0) {
    bad = Status::FromErrno(errno, "stat " + spool_path);
  } else if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != seal.size) {
    bad = Status::DataLoss(spool_path + " holds " + std::to_string(st.st_size) +
                           " bytes, its seal says " + std::to_string(seal.size));
  } else {
    // One pass checks the seal and gives the slices' CRCs for the upload.
    crcs = SliceCrcsOfFile(fd, seal.size, spool_path);
    if (!crcs.ok()) {
      bad = crcs.status();
    } else if (crcs->Whole(seal.size) != seal.crc32c) {
      bad = Status::DataLoss(spool_path + ": its bytes do not have the CRC32C its seal records");
    }
  }
  Result<UserXattrs> attrs = UserXattrs::Decode(seal.user_xattrs);
  if (bad.ok() && !attrs.ok()) bad = Status::DataLoss(spool_path + ": " + attrs.status().message());
  if (!bad.ok()) {
    close(fd);
    return bad;
  }
  const std::string key = place.key;
  std::shared_ptr<SpoolFile> f(new SpoolFile(deps, fd, spool_path, std::move(place), false));
  {
    MutexLock l(&f->mu_);
    f->SetSizeLocked(seal.size);
    f->replaces_ = seal.replaces;
    f->over_object_ = true;  // unknown here: a failed upload must not hide an object of the name
    f->QueuedLocked();
    f->sealed_ = true;
    f->sealed_crc_ = WrittenCrc{seal.crc32c, std::move(crcs).value()};
    f->xattrs_ = std::move(attrs).value();
  }
  // A name written again since this mount started belongs to its newer writer; the recovered
  // bytes are still uploaded (conditional create decides between them).
  deps.files->PutIfAbsent(key, f);
  return f;
}

SpoolFile::SpoolFile(const Deps& deps, int fd, std::string spool_path, Place place, bool temp)
    : deps_(deps), fd_(fd), spool_path_(std::move(spool_path)), mtime_sec_(time(nullptr)) {
  MutexLock l(&mu_);
  place_ = std::move(place);
  temp_ = temp;
  temp_atomic_.store(temp);
}

SpoolFile::~SpoolFile() {
  MutexLock l(&mu_);  // no one else holds a reference any more; taken for the analysis
  early_.reset();     // waits for parts still reading the spool fd; aborts an unused upload
  close(fd_);
  if (sealed_) {
    // Accepted, never uploaded (the daemon stopped first): the next mount uploads it.
    LogWarn(
        "kvfs: '{}' ({} bytes) was not uploaded before the daemon stopped: it stays "
        "sealed in {} for the next mount",
        place_.display, size_, spool_path_);
    return;
  }
  if (!adopted_) unlink(spool_path_.c_str());
}

void SpoolFile::OverObjectOf(uint64_t size) {
  MutexLock l(&mu_);
  over_size_ = size;
}

bool SpoolFile::Ended() const {
  MutexLock l(&mu_);
  return state_ == State::kFailed || state_ == State::kDiscarded;
}

bool SpoolFile::IsObject(const ObjectInfo& object) {
  MutexLock l(&mu_);
  CatchUpLocked();  // written by the kernel since: not that object any more
  return state_ == State::kCommitted && created_object_ && uploaded_ &&
         uploaded_->etag == object.etag && uploaded_->size == object.size;
}

bool SpoolFile::WouldPublish() {
  MutexLock l(&mu_);
  CatchUpLocked();
  return !temp_ && (state_ == State::kDirty || state_ == State::kAbandoned);
}

bool SpoolFile::FsyncWaits() {
  MutexLock l(&mu_);
  CatchUpLocked();
  return state_ == State::kQueued || state_ == State::kFailed;
}

SpoolFile::Place SpoolFile::place() const {
  MutexLock l(&mu_);
  return place_;
}

Status SpoolFile::SetXattr(const std::string& name, std::string value, UserXattrs::SetMode mode) {
  MutexLock l(&mu_);
  CatchUpLocked();
  KVFS_RETURN_IF_ERROR(XattrsOpenLocked(name));
  KVFS_RETURN_IF_ERROR(xattrs_.Set(name, std::move(value), mode));
  XattrsChangedLocked();
  return Status::OK();
}

Status SpoolFile::RemoveXattr(const std::string& name) {
  MutexLock l(&mu_);
  CatchUpLocked();
  KVFS_RETURN_IF_ERROR(XattrsOpenLocked(name));
  KVFS_RETURN_IF_ERROR(xattrs_.Remove(name));
  XattrsChangedLocked();
  return Status::OK();
}

UserXattrs SpoolFile::Xattrs() const {
  MutexLock l(&mu_);
  return xattrs_;
}

Status SpoolFile::XattrsOpenLocked(const std::string& name) const {
  if (state_ == State::kClean || state_ == State::kDirty) return Status::OK();
  return Status::PermissionDenied(
      "extended attribute " + name + " of '" + place_.display +
      "': a chunk's attributes are set before its close() or rename() publishes it; it is " +
      (state_ == State::kFailed || state_ == State::kDiscarded || state_ == State::kAbandoned
           ? "gone"
           : "published"));
}

void SpoolFile::XattrsChangedLocked() {
  // Parts sent early carry the attributes the upload was created with: not these.
  early_.reset();
  if (state_ == State::kClean) DirtyLocked();  // a new version, even without a write
}

bool SpoolFile::displaced() const {
  MutexLock l(&mu_);
  return displaced_;
}

uint64_t SpoolFile::size_now() const {
  if (kernel_written_atomic_.load()) {
    struct stat st;
    if (fstat(fd_, &st) == 0) return static_cast<uint64_t>(st.st_size);
  }
  return size_atomic_.load();
}

bool SpoolFile::KernelMayWrite() const {
  MutexLock l(&mu_);
  // A spool the kernel writes already stays its backing file when written again after its
  // publication (replaces_ from then on): the inode's opens must all use it.
  return (!replaces_ || kernel_written_) && state_ != State::kFailed && state_ != State::kDiscarded;
}

void SpoolFile::KernelWrites() {
  MutexLock l(&mu_);
  if (kernel_written_) return;
  kernel_written_ = true;
  kernel_written_atomic_.store(true);
  early_.reset();  // parts go out at the commit: the daemon no longer sees the writes
  spool_crc_.Invalidate();
  SeenLocked();
}

void SpoolFile::SeenLocked() {
  struct stat st;
  if (kernel_written_ && fstat(fd_, &st) == 0) seen_mtime_ = st.st_mtim;
}

void SpoolFile::CatchUpLocked() {
  // During a queued transfer the kernel's changes wait to be seen until it ended, as they did
  // when the transfer held mu_: the version sent then becomes kCommitted, and the change a new
  // version that replaces it.
  if (!kernel_written_ || uploading_ || state_ == State::kFailed || state_ == State::kDiscarded) {
    return;
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) return;
  const auto size = static_cast<uint64_t>(st.st_size);
  const bool changed = size != size_ || st.st_mtim.tv_sec != seen_mtime_.tv_sec ||
                       st.st_mtim.tv_nsec != seen_mtime_.tv_nsec;
  if (!changed) return;
  // Written by the kernel since last seen: a new version of the bytes, as after Write().
  seen_mtime_ = st.st_mtim;
  SetSizeLocked(size);
  spool_crc_.Invalidate();
  DirtyLocked();
}

void SpoolFile::SetSizeLocked(uint64_t s) {
  size_ = s;
  size_atomic_.store(s);
}

void SpoolFile::DirtyLocked() {
  if (state_ == State::kCommitted && created_object_ && !temp_) {
    // A new version of the object these bytes became (a writer that goes on after the close that
    // published it, a shared mapping's pages written back later): it replaces that object. Met
    // as a create, it would lose to the store's copy - its own last version - and vanish.
    replaces_ = true;
    over_object_ = true;
  }
  if (state_ == State::kClean || state_ == State::kCommitted || state_ == State::kQueued) {
    UnsealLocked();  // a queued version written again is not what was accepted
    state_ = State::kDirty;
    queued_atomic_.store(false);
    published_atomic_.store(false);
    uploaded_.reset();
    created_object_ = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Handles

void SpoolFile::AttachReader() {
  // A reader reads the spool without the lock; one that races an unlink or a failure keeps the
  // bytes it opened, as an open before an unlink does.
  handles_.fetch_add(1);
}

Result<bool> SpoolFile::AttachWriter(bool keeps_bytes) {
  MutexLock l(&mu_);
  if (state_ == State::kFailed || state_ == State::kDiscarded) return failure_;
  // Let go: its last handle was released (under mu_) and it left SpoolFiles - or the cache took
  // its spool - between the caller's lookup and here. A writer attached now would write a file
  // nobody finds; the caller starts a new one over the object instead.
  if (handles_ == 0 && !temp_ && state_ != State::kQueued) return false;
  // Published, its last release still to come (the kernel sends it after close() returned): the
  // open meets the object, as it would after that release - unless it keeps the bytes (O_RDWR)
  // and these are the object's, or the kernel writes this spool (passthrough_writes: no second
  // version can be opened beside it).
  if (state_ == State::kCommitted && !kernel_written_ && !(keeps_bytes && created_object_)) {
    return false;
  }
  ++handles_;
  ++writers_;
  return true;
}

bool SpoolFile::WaitForWriters(std::chrono::milliseconds d) {
  MutexLock l(&mu_);
  return writers_gone_.WaitFor(
      &mu_, d, [this]() REQUIRES(mu_) { return writers_ == 0 || state_ != State::kQueued; });
}

bool SpoolFile::ReuseIdleTemp(bool truncate) {
  MutexLock l(&mu_);
  if (!temp_ || handles_ > 0 || state_ == State::kFailed || state_ == State::kDiscarded) {
    return false;
  }
  if (truncate) {
    if (ftruncate(fd_, 0) != 0) return false;
    SetSizeLocked(0);
  }
  DirtyLocked();
  ++handles_;
  ++writers_;
  return true;
}

SpoolFile::Outcome SpoolFile::Release(bool writer) {
  if (!writer) {
    // Not the last handle: nothing ends here, and nothing waits for an upload holding mu_.
    for (int n = handles_.load(); n > 1;) {
      if (handles_.compare_exchange_weak(n, n - 1)) return Outcome{};
    }
  }
  MutexLock l(&mu_);
  CatchUpLocked();
  Outcome out;
  if (writer && state_ == State::kDirty && !temp_) {
    // Normally a flush committed already; this covers bytes written after the last one.
    out = CommitLocked(/*wait=*/true);
  }
  if (writer && --writers_ == 0) writers_gone_.SignalAll();
  const bool last = --handles_ == 0;
  if (last) {
    if (temp_orphaned_ && temp_ && state_ != State::kFailed && state_ != State::kDiscarded) {
      // Killed while writing it: nobody will rename it; its name and spool go now.
      LogInfo("kvfs: temporary file '{}' ({} bytes) was closed by a dying writer: removed",
              place_.display, size_);
      state_ = State::kDiscarded;
      failure_ = Status::NotFound("'" + place_.display + "' was abandoned by a dying writer");
      early_.reset();
      out.kind = Outcome::kDropped;
      out.place = place_;
    }
    if (state_ == State::kAbandoned) {
      // No live process closed it after the dying one: the bytes are whatever that process had
      // written when it died, never a chunk to publish.
      state_ = State::kDiscarded;
      failure_ = Status::NotFound("'" + place_.display + "' was abandoned by a dying writer");
    }
    // The cache holds the bytes before the name leaves the local files: an open in between
    // finds one or the other, never a miss that downloads (or streams) what this node wrote.
    MaybeAdoptLocked();
  }
  // Recorded before the name leaves the local files (an empty file is published here, at its
  // last release, which the kernel sends after close() returned: an unlink right after the close
  // waits for this lock and then finds the object recorded).
  RecordLocked(out);
  // A temporary file stays (locally) until it is renamed or unlinked; a queued chunk until its
  // upload is recorded (UploadQueued).
  const bool ended = state_ == State::kFailed || state_ == State::kDiscarded;
  if (last && (!temp_ || ended) && state_ != State::kQueued) {
    deps_.files->EraseIf(place_.key, this);
  }
  return out;
}

void SpoolFile::MaybeAdoptLocked() {
  // Only bytes that are the object: after a lost create race the store holds another writer's
  // object of that name, which may differ from this spool.
  if (state_ == State::kCommitted && created_object_ && uploaded_ && !adopted_ && !temp_) {
    const std::optional<WrittenCrc> crc = SpoolCrcLocked();
    adopted_ = deps_.reader->AdoptWritten(place_.key, *uploaded_, spool_path_,
                                          crc ? std::optional<uint32_t>(crc->whole) : std::nullopt);
    SeenLocked();  // the cache's own changes are not a write
  }
}

std::optional<WrittenCrc> SpoolFile::SpoolCrcLocked() const {
  uint32_t crc;
  if (spool_crc_.CrcOf(size_, &crc)) return WrittenCrc{crc, spool_crc_.SlicesOf(size_)};
  if (sealed_crc_) return sealed_crc_;  // computed for the seal (checked at recovery)
  // Not folded from the writes (the kernel wrote the spool, or it was rewritten): the upload
  // computed it from these very bytes (uploaded_ is reset by any change since).
  if (state_ == State::kCommitted && created_object_ && uploaded_ && uploaded_->crc32c) {
    return WrittenCrc{*uploaded_->crc32c, uploaded_->slice_crcs};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// SpoolFile's transitions that publish or drop it (fs/spool_file.h): commit (the whole-chunk
// rule, then the upload), fail, abandon by a dying process, discard, and link and rename to
// another name.

Status SpoolFile::CheckWholeLocked(uint64_t size, const Place& place) const {
  const std::string& display = place.display;
  // Before anything else: a kernel write that may have failed makes any size suspect.
  KVFS_RETURN_IF_ERROR(CheckKernelWritesLocked());
  // An empty file is a valid file (touch, marker files, NIXL's pool files): never a partial
  // chunk, since no engine writes empty chunks.
  if (size == 0) return Status::OK();
  if (size > deps_.options->max_chunk_bytes) {  // the kernel's writes are not checked as they come
    return Status::ResourceExhausted("rejected '" + display + "': " + std::to_string(size) +
                                     " bytes is more than max_chunk_bytes (" +
                                     std::to_string(deps_.options->max_chunk_bytes) + ")");
  }
  const auto& sizes = deps_.options->chunk_sizes;
  bool whole = sizes.empty() || std::find(sizes.begin(), sizes.end(), size) != sizes.end();
  if (whole && sizes.empty() && deps_.learnt_sizes != nullptr) {
    auto learnt = deps_.learnt_sizes->CheckClose(place.key, size, deps_.store);
    if (learnt) {
      return Status::InvalidArgument(
          "rejected '" + display + "': " + std::to_string(size) +
          " bytes is not a whole chunk: names like '" + ChunkSizeLearner::PatternOf(place.key) +
          "' hold " + std::to_string(learnt->size) + "-byte chunks (e.g. '" + learnt->from_key +
          "'; learn_chunk_sizes: a smaller size is taken as the new chunk size once " +
          std::to_string(ChunkSizeLearner::kEstablish) + " names have had it)");
    }
  }
  if (whole) return Status::OK();
  std::string allowed;
  for (uint64_t s : sizes) allowed += (allowed.empty() ? "" : ", ") + std::to_string(s);
  return Status::InvalidArgument("rejected '" + display + "': " + std::to_string(size) +
                                 " bytes is not a whole chunk (chunk sizes: " + allowed + ")");
}

Status SpoolFile::CheckKernelWritesLocked() const {
  if (!kernel_written_) return Status::OK();
  // After a failed write the spool's file system has no room left (tmpfs fills to the page; the
  // daemon writes as root, so reserved blocks count): less than this left means one may have
  // failed.
  constexpr uint64_t kFullBelow = 1ull << 20;
  struct statvfs vfs;
  if (fstatvfs(fd_, &vfs) == 0 && static_cast<uint64_t>(vfs.f_bfree) * vfs.f_frsize < kFullBelow) {
    return Status::FromErrno(ENOSPC,
                             "not publishing '" + place_.display +
                                 "': the spool's file system is full, so a write the "
                                 "kernel made into it (passthrough_writes) may have failed");
  }
  return Status::OK();
}

SpoolFile::Outcome SpoolFile::Commit(bool wait, bool queue_only) {
  MutexLock l(&mu_);
  temp_orphaned_ = false;  // a live close: the temp file's writer (or a holder) is alive
  return RecordLocked(CommitLocked(wait, queue_only));
}

SpoolFile::Outcome SpoolFile::CommitLocked(bool wait, bool queue_only) {
  Outcome out;
  if (uploading_ && (wait || kernel_written_)) {
    // fsync() of a chunk whose queued upload is on its way: its end answers (or this waits to
    // upload it again, if it failed). A close of a file the kernel writes (passthrough_writes):
    // its writes are seen only once the transfer ended (CatchUpLocked), and this close is the
    // one that must make them the next version - a shared mapping's writes were lost otherwise.
    out.status = WaitForTransferLocked(wait ? "fsync() waited" : "close() waited");
    if (!out.status.ok()) return out;
  }
  CatchUpLocked();
  if (state_ == State::kFailed) {
    out.status = failure_;
    return out;
  }
  // kAbandoned: a live process that shares the descriptor closes it after the dying one did.
  // kQueued: accepted already; a waiting commit (fsync) stores it now instead of the queue.
  const bool pending =
      state_ == State::kDirty || state_ == State::kAbandoned || (wait && state_ == State::kQueued);
  if (!pending || temp_) return out;
  // Checked whole when it was accepted; stored as the queue would, without holding mu_.
  if (state_ == State::kQueued) return UploadQueuedLocked();
  Status st = CheckWholeLocked(size_, place_);
  if (!st.ok()) {
    if (queue_only && !wait) {
      out.kind = Outcome::kNotQueued;
      return out;
    }
    return FailLocked(std::move(st));
  }
  // The name's object would refuse these bytes (exists policy), or another version was renamed
  // over this one: the close waits for that answer.
  const bool refused_ahead =
      displaced_ || (over_size_ && !replaces_ && deps_.uploader->WouldRefuse(*over_size_, size_));
  if (!wait && !refused_ahead && SealLocked(place_).ok()) {
    // Write-back: the chunk is whole and sealed; the name shows it on this node from here on.
    QueuedLocked();
    out.kind = Outcome::kQueued;
    out.place = place_;
    return out;
  }
  if (queue_only && !wait) {
    out.kind = Outcome::kNotQueued;
    return out;
  }
  return UploadLocked();
}

Status SpoolFile::SealLocked(const Place& place) {
  std::optional<WrittenCrc> crc = SpoolCrcLocked();
  Status st;
  if (!crc) {
    // Not folded from the writes (the kernel wrote the spool, or it was rewritten): one pass.
    Result<SliceCrcs> c = SliceCrcsOfFile(fd_, size_, "spool of '" + place.display + "'");
    if (c.ok()) crc = WrittenCrc{c->Whole(size_), *c};
    st = c.status();
  }
  if (st.ok()) {
    SpoolSeal::Record r{place.key, place.display, size_, crc->whole, replaces_, xattrs_.Encode()};
    st = SpoolSeal::Write(spool_path_, fd_, r, deps_.options->write_back_fdatasync);
  }
  if (!st.ok()) {
    LogWarn(
        "kvfs: cannot seal '{}' for write-back ({}): it is uploaded before its close() or "
        "rename() returns",
        place.display, st.ToString());
    return st;
  }
  sealed_ = true;
  sealed_crc_ = crc;
  return st;
}

void SpoolFile::QueuedLocked() {
  state_ = State::kQueued;
  queued_atomic_.store(true);
  published_atomic_.store(true);
}

void SpoolFile::UnsealLocked() {
  if (!sealed_) return;
  SpoolSeal::Remove(spool_path_);
  sealed_ = false;
  sealed_crc_.reset();
}

SpoolFile::Outcome SpoolFile::UploadLocked() {
  // Parts sent while writing serve only if they still match this key and these bytes; otherwise
  // the early upload is aborted here (reset) and the spool uploads the normal way.
  // Its attributes are these: a change of them drops the early upload (XattrsChangedLocked).
  if (early_ && !(early_->key() == place_.key && early_->Usable(size_))) early_.reset();
  const std::string attrs = xattrs_.Encode();
  auto up =
      replaces_
          ? deps_.uploader->Replace(place_.key, fd_, size_, place_.display, SpoolCrcLocked(), attrs)
          : deps_.uploader->Upload(place_.key, fd_, size_, place_.display,
                                   /*no_replace=*/false, early_.get(), SpoolCrcLocked(), attrs);
  early_.reset();
  return UploadEndedLocked(std::move(up));
}

SpoolFile::Outcome SpoolFile::UploadQueuedLocked() {
  // Its attributes are these: a change of them drops the early upload (XattrsChangedLocked).
  if (early_ && !(early_->key() == place_.key && early_->Usable(size_))) early_.reset();
  const std::string attrs = xattrs_.Encode();
  // What the transfer sends is fixed here: nothing that changes the bytes, the key or these
  // fields runs until it ends (they wait for uploading_).
  std::unique_ptr<EarlyUpload> early = std::move(early_);
  const Place place = place_;
  const uint64_t size = size_;
  const bool replaces = replaces_;
  const std::optional<WrittenCrc> crc = SpoolCrcLocked();
  uploading_ = true;
  Result<UploadOutcome> up = Status::Internal("no upload");
  {
    MutexUnlock transfer(&mu_);
    up = replaces ? deps_.uploader->Replace(place.key, fd_, size, place.display, crc, attrs)
                  : deps_.uploader->Upload(place.key, fd_, size, place.display,
                                           /*no_replace=*/false, early.get(), crc, attrs);
    early.reset();  // waits for parts still reading the spool; aborts an unused upload
  }
  uploading_ = false;
  transfer_done_.SignalAll();
  if (state_ == State::kQueued) return UploadEndedLocked(std::move(up));
  // Unlinked while its bytes were on their way (Discard: the only change that does not wait for
  // the transfer). Nothing is recorded for a name that is gone; an object the transfer made is
  // handed back, for the unlink's rules to apply to it as if it had come after the upload.
  queued_atomic_.store(false);
  Outcome out;
  out.kind = Outcome::kOrphaned;
  out.place = place;
  out.info.key = place.key;
  if (up.ok()) {
    out.object_remains = true;
    out.info = std::move(up->info);
    out.info.key = place.key;
  }
  return out;
}

Status SpoolFile::WaitForTransferLocked(const char* what) {
  const int64_t deadline = ThreadDeadlineMs();
  auto ended = [this]() REQUIRES(mu_) { return !uploading_; };
  if (deadline <= 0) {
    transfer_done_.Wait(&mu_, ended);
    return Status::OK();
  }
  const auto at = std::chrono::steady_clock::time_point(std::chrono::milliseconds(deadline));
  if (transfer_done_.WaitUntil(&mu_, at, ended)) return Status::OK();
  return Status::DeadlineExceeded(std::string(what) + " for the upload of '" + place_.display +
                                  "', accepted at close() and still on its way to the store (" +
                                  ThreadDeadlineSource() + ")");
}

SpoolFile::Outcome SpoolFile::UploadEndedLocked(Result<UploadOutcome> up) {
  if (!up.ok() && state_ == State::kQueued && sealed_ && MayRetry(up.status())) {
    // Accepted and sealed: a store that fails now (an outage, a server error, credentials
    // being fixed) does not lose it. It stays queued and sealed for the next attempt.
    Outcome out;
    out.status = up.status();
    out.place = place_;
    return out;
  }
  queued_atomic_.store(false);
  if (!up.ok()) return FailLocked(up.status());  // the adapter logs the failed reply
  Outcome out = CommittedLocked(place_.key, std::move(up).value());
  out.place = place_;
  return out;
}

bool SpoolFile::MayRetry(const Status& st) {
  switch (st.code()) {
    case StatusCode::kAlreadyExists:      // another writer's chunk of that name (exists policy)
    case StatusCode::kInvalidArgument:    // not a whole chunk
    case StatusCode::kResourceExhausted:  // past max_chunk_bytes
    case StatusCode::kDataLoss:           // the spool lost bytes
    case StatusCode::kNameTooLong:
      return false;
    default:
      return true;
  }
}

SpoolFile::Outcome SpoolFile::UploadQueued() {
  MutexLock l(&mu_);
  // An fsync() uploading it already: its end decides whether anything is left to send.
  transfer_done_.Wait(&mu_, [this]() REQUIRES(mu_) { return !uploading_; });
  CatchUpLocked();  // written again since it was accepted: not this version's upload
  Outcome out;
  if (state_ != State::kQueued || temp_) return out;
  out = UploadQueuedLocked();
  RecordLocked(out);
  if (handles_ == 0 && state_ == State::kCommitted) {
    MaybeAdoptLocked();  // first, as in Release: an open in between finds the cache copy
    deps_.files->EraseIf(place_.key, this);  // recorded: the name resolves to the object now
  }
  return out;
}

SpoolFile::Outcome SpoolFile::CommittedLocked(const std::string& key, UploadOutcome up) {
  UnsealLocked();  // the object is in the store: nothing left to recover
  up.info.key = key;
  state_ = State::kCommitted;
  published_atomic_.store(true);
  uploaded_ = up.info;
  created_object_ = up.created;
  Outcome out;
  out.kind = Outcome::kPublished;
  out.info = std::move(up.info);
  return out;
}

SpoolFile::Outcome SpoolFile::RecordLocked(Outcome out) {
  if ((out.kind == Outcome::kPublished || out.kind == Outcome::kDropped ||
       out.kind == Outcome::kOrphaned) &&
      deps_.record) {
    deps_.record(out);
  }
  return out;
}

SpoolFile::Outcome SpoolFile::FailLocked(Status st) {
  UnsealLocked();
  state_ = State::kFailed;
  published_atomic_.store(false);
  failure_ = st;
  early_.reset();
  deps_.files->EraseIf(place_.key, this);
  Outcome out;
  out.kind = Outcome::kDropped;
  out.object_remains = over_object_ || st.code() == StatusCode::kAlreadyExists;
  out.status = std::move(st);
  out.place = place_;
  return out;
}

SpoolFile::Outcome SpoolFile::Abandon(pid_t pid) {
  MutexLock l(&mu_);
  CatchUpLocked();
  Outcome out;
  if (temp_ && state_ != State::kFailed && state_ != State::kDiscarded) {
    temp_orphaned_ = true;  // the last Release decides: a live close may still come
    return out;
  }
  if (state_ != State::kDirty || temp_) return out;
  LogInfo(
      "kvfs: '{}' ({} bytes) was closed by exiting process {} without a close() of its own: "
      "not published",
      place_.display, size_, pid);
  state_ = State::kAbandoned;
  early_.reset();  // aborts the parts sent so far
  deps_.files->EraseIf(place_.key, this);
  out.kind = Outcome::kDropped;
  out.object_remains = over_object_;
  out.place = place_;
  return RecordLocked(out);
}

bool SpoolFile::Discard(const std::function<void()>& under_way) {
  MutexLock l(&mu_);
  if (uploading_ && under_way) under_way();
  if (state_ != State::kFailed) {
    UnsealLocked();  // an unlink cancels a pending upload
    state_ = State::kDiscarded;
    published_atomic_.store(false);
    failure_ = Status::NotFound("'" + place_.display + "' was removed");
    early_.reset();
  }
  return temp_;
}

bool SpoolFile::Displace() {
  {
    MutexLock l(&mu_);
    const bool being_written =
        (handles_ > 0 && (state_ == State::kClean || state_ == State::kDirty)) ||
        state_ == State::kQueued;
    if (!temp_ && being_written) {
      LogInfo(
          "kvfs: '{}' was renamed over while {} bytes of it were still being written here: the "
          "writer's close publishes them against the renamed file's object (conditional create: "
          "EEXIST unless the same bytes)",
          place_.display, size_);
      displaced_ = true;
      return false;
    }
  }
  Discard();
  return true;
}

SpoolFile::Outcome SpoolFile::LinkTo(const Place& dst) {
  MutexLock l(&mu_);
  CatchUpLocked();
  Outcome out;
  if (state_ == State::kFailed || state_ == State::kDiscarded) {
    out.kind = Outcome::kRejected;
    out.status = failure_;
    return out;
  }
  Status st = CheckWholeLocked(size_, dst);
  if (st.ok()) {
    auto up = deps_.uploader->Upload(dst.key, fd_, size_, dst.display, /*no_replace=*/true,
                                     /*early=*/nullptr, SpoolCrcLocked(), xattrs_.Encode());
    if (up.ok()) {
      up->info.key = dst.key;
      out.kind = Outcome::kPublished;
      out.info = std::move(up->info);
      return out;
    }
    st = up.status();
  }
  out.kind = Outcome::kRejected;
  out.status = std::move(st);
  return out;
}

SpoolFile::Outcome SpoolFile::RenameTo(Place dst, bool dst_temp, bool no_replace, bool wait,
                                       std::shared_ptr<SpoolFile>* replaced) {
  MutexLock l(&mu_);
  Outcome out;
  if (uploading_) {
    // Its queued upload sends it under the old name: the rename follows that transfer.
    out.status = WaitForTransferLocked("rename() waited");
    if (!out.status.ok()) {
      out.kind = Outcome::kRejected;
      return out;
    }
  }
  CatchUpLocked();
  if (state_ == State::kFailed) {
    out.status = failure_;
    return out;
  }
  bool queued = false;
  if (!dst_temp && !wait) {
    // Write-back: a whole chunk is renamed at once (sealed under the final name) and uploaded
    // under that name after.
    early_.reset();  // parts sent under the old name
    Status st = CheckWholeLocked(size_, dst);
    if (!st.ok()) {
      out.kind = Outcome::kRejected;
      out.status = std::move(st);
      return out;
    }
    if (SealLocked(dst).ok()) {
      QueuedLocked();
      out.kind = Outcome::kQueued;
      queued = true;
    }
  }
  if (!dst_temp && !queued) {
    // Upload under the final name; the rename returns only when the object is durable. On
    // failure the source stays as it was (POSIX: a failed rename changes nothing).
    early_.reset();  // parts sent under the old name
    Status st = CheckWholeLocked(size_, dst);
    if (st.ok()) {
      auto up = deps_.uploader->Upload(dst.key, fd_, size_, dst.display, no_replace,
                                       /*early=*/nullptr, SpoolCrcLocked(), xattrs_.Encode());
      if (up.ok()) {
        out = CommittedLocked(dst.key, std::move(up).value());
      } else {
        st = up.status();
      }
    }
    if (!st.ok()) {
      out.kind = Outcome::kRejected;
      out.status = std::move(st);
      return out;
    }
  }
  if (dst_temp && state_ == State::kQueued) {
    // Renamed to a temp name before its upload: local only again, never uploaded as that name.
    UnsealLocked();
    state_ = State::kDirty;
    published_atomic_.store(false);
  }
  deps_.files->EraseIf(place_.key, this);
  // Open handles (a temp name, a queued upload) keep it visible under the new name; otherwise the
  // object is.
  std::shared_ptr<SpoolFile> prev = (dst_temp || handles_ > 0 || state_ == State::kQueued)
                                        ? deps_.files->Put(dst.key, shared_from_this())
                                        : deps_.files->Take(dst.key);
  if (prev.get() != this) *replaced = std::move(prev);
  out.place = std::move(place_);  // where it was: Filesystem forgets that name
  place_ = std::move(dst);
  temp_ = dst_temp;
  temp_atomic_.store(dst_temp);
  if (handles_ == 0) MaybeAdoptLocked();
  return out;
}

// ---------------------------------------------------------------------------------------------
// SpoolFile's bytes (fs/spool_file.h): writes, truncation and reads of the spool file, the
// CRC32C folded as the bytes come, the parts sent while written (EarlyUpload), and the preload of
// an object's bytes for an O_RDWR open.

Result<uint64_t> SpoolFile::Write(uint64_t offset, const char* data, uint64_t n) {
  const FsOptions& o = *deps_.options;
  MutexLock l(&mu_);
  // The bytes of a queued upload on its way stay as they are until it ends.
  if (uploading_) KVFS_RETURN_IF_ERROR(WaitForTransferLocked("a write waited"));
  CatchUpLocked();
  if (offset > o.max_chunk_bytes || n > o.max_chunk_bytes - offset) {
    return Status::ResourceExhausted("write past max_chunk_bytes (" +
                                     std::to_string(o.max_chunk_bytes) + ") in '" + place_.display +
                                     "'");
  }
  if (state_ == State::kFailed) return failure_;
  Status st = PwriteFull(fd_, data, n, offset, "writing spool file for '" + place_.display + "'");
  if (!st.ok()) {
    // Bytes the engine wrote are lost (ENOSPC, EIO of the cache disk): the file can never become
    // the chunk, so it fails now and its close reports the same error.
    RecordLocked(FailLocked(st));
    return st;
  }
  spool_crc_.Add(offset, data, n);  // while the bytes are in the CPU cache
  if (offset + n > size_) SetSizeLocked(offset + n);
  DirtyLocked();
  SeenLocked();
  if (o.upload_while_writing && !temp_ && !replaces_ && !kernel_written_ &&
      state_ == State::kDirty) {
    if (!early_) {
      early_ = std::make_unique<EarlyUpload>(deps_.store, place_.key, fd_, o.multipart_part_size,
                                             o.upload_parallelism, deps_.uploader->aborts(),
                                             xattrs_.Encode());
    }
    early_->OnWrite(offset, n);
  }
  return n;
}

Status SpoolFile::Truncate(uint64_t new_size) {
  MutexLock l(&mu_);
  if (uploading_) KVFS_RETURN_IF_ERROR(WaitForTransferLocked("a truncation waited"));
  CatchUpLocked();
  if (new_size > deps_.options->max_chunk_bytes) {
    return Status::ResourceExhausted("truncate past max_chunk_bytes in '" + place_.display + "'");
  }
  if (state_ == State::kFailed) return failure_;
  if (early_) early_->Invalidate();  // bytes already sent may change
  if (ftruncate(fd_, static_cast<off_t>(new_size)) != 0) {
    spool_crc_.Invalidate();  // the spool's size is not known now
    return Status::FromErrno(errno, "truncating spool file for '" + place_.display + "'");
  }
  if (new_size == 0) {
    spool_crc_.Reset();
  } else if (new_size != size_) {
    spool_crc_.Invalidate();  // cut or zero-extended: computed from the spool if needed
  }
  SetSizeLocked(new_size);
  DirtyLocked();
  SeenLocked();
  return Status::OK();
}

Status SpoolFile::Preload(ReadHandle* from, uint64_t size) {
  MutexLock l(&mu_);
  constexpr uint64_t kStep = 1 << 20;
  std::unique_ptr<char[]> buf(new char[kStep]);
  uint64_t off = 0;
  while (off < size) {
    KVFS_ASSIGN_OR_RETURN(uint64_t n, from->Read(off, std::min(kStep, size - off), buf.get()));
    if (n == 0) break;
    KVFS_RETURN_IF_ERROR(
        PwriteFull(fd_, buf.get(), n, off, "writing spool file for '" + place_.display + "'"));
    spool_crc_.Add(off, buf.get(), n);
    off += n;
  }
  if (off != size) {
    return Status::IoError("'" + place_.display + "' changed while it was opened: " +
                           std::to_string(off) + " of " + std::to_string(size) + " bytes read");
  }
  SetSizeLocked(size);
  replaces_ = true;
  return Status::OK();
}

Result<uint64_t> SpoolFile::Read(uint64_t offset, uint64_t n, char* buf) const {
  return PreadFull(fd_, buf, n, offset, "reading spool file " + spool_path_);
}

}  // namespace kvfs
