// LocalFile's life and handles: creation of the spool, attach and release of handles, the
// hand-over of a committed spool to the reader. Bytes: local_file_bytes.cc; the transitions that
// publish or drop the file: local_file_transitions.cc.
#include "fs/local_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>

#include "base/fd_reserve.h"
#include "base/posix_io.h"

namespace kvfs {

Result<std::shared_ptr<LocalFile>> LocalFile::Create(const Env& env, Place place, bool temp,
                                                     bool created) {
  static std::atomic<uint64_t> counter{0};
  std::string path = env.options->spool_dir + "/spool-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter.fetch_add(1));
  // Writers decide how many spool files are open: never the daemon's last descriptors.
  int fd =
      KeepFdReserve(open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd < 0) {
    const int err = errno;
    if (err == EMFILE) unlink(path.c_str());  // created, then refused by the reserve
    return Status::FromErrno(err, "creating spool file " + path);
  }
  std::string key = place.key;
  std::shared_ptr<LocalFile> f(new LocalFile(env, fd, std::move(path), std::move(place), temp));
  {
    MutexLock l(&f->mu_);
    if (created) f->DirtyLocked();
    f->over_object_ = !created;
    f->handles_ = 1;
  }
  // The newest writer owns the name; an older LocalFile of that key keeps its open handles and
  // still commits on its own close (conditional create decides between them).
  env.files->Put(key, f);
  return f;
}

LocalFile::LocalFile(const Env& env, int fd, std::string spool_path, Place place, bool temp)
    : env_(env), fd_(fd), spool_path_(std::move(spool_path)), mtime_sec_(time(nullptr)) {
  MutexLock l(&mu_);
  place_ = std::move(place);
  temp_ = temp;
  temp_atomic_.store(temp);
}

LocalFile::~LocalFile() {
  MutexLock l(&mu_);  // no one else holds a reference any more; taken for the analysis
  early_.reset();     // waits for parts still reading the spool fd; aborts an unused upload
  close(fd_);
  if (!adopted_) unlink(spool_path_.c_str());
}

bool LocalFile::Ended() const {
  MutexLock l(&mu_);
  return state_ == State::kFailed || state_ == State::kDiscarded;
}

bool LocalFile::WouldPublish() const {
  MutexLock l(&mu_);
  return !temp_ && (state_ == State::kDirty || state_ == State::kAbandoned);
}

bool LocalFile::FsyncWaits() const {
  MutexLock l(&mu_);
  return state_ == State::kQueued || state_ == State::kFailed;
}

void LocalFile::SetSizeLocked(uint64_t s) {
  size_ = s;
  size_atomic_.store(s);
}

void LocalFile::DirtyLocked() {
  if (state_ == State::kClean || state_ == State::kCommitted || state_ == State::kQueued) {
    state_ = State::kDirty;
    queued_atomic_.store(false);
    published_atomic_.store(false);
    uploaded_.reset();
    created_object_ = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Handles

Status LocalFile::Attach(bool writer, bool truncate) {
  if (!writer) {
    // A reader reads the spool without the lock; one that races an unlink or a failure keeps
    // the bytes it opened, as an open before an unlink does.
    handles_.fetch_add(1);
    return Status::OK();
  }
  MutexLock l(&mu_);
  if (state_ == State::kFailed || state_ == State::kDiscarded) return failure_;
  if (writer && truncate && size_ > 0) {
    if (early_) early_->Invalidate();
    if (ftruncate(fd_, 0) != 0) {
      return Status::FromErrno(errno, "truncating spool file for '" + place_.display + "'");
    }
    SetSizeLocked(0);
    DirtyLocked();
  }
  ++handles_;
  return Status::OK();
}

bool LocalFile::ReuseIdleTemp(bool truncate) {
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
  return true;
}

LocalFile::Outcome LocalFile::Release(bool writer) {
  if (!writer) {
    // Not the last handle: nothing ends here, and nothing waits for an upload holding mu_.
    for (int n = handles_.load(); n > 1;) {
      if (handles_.compare_exchange_weak(n, n - 1)) return Outcome{};
    }
  }
  MutexLock l(&mu_);
  Outcome out;
  if (writer && state_ == State::kDirty && !temp_) {
    // Normally a flush committed already; this covers bytes written after the last one.
    out = CommitLocked(/*wait=*/true);
  }
  if (--handles_ == 0) {
    if (temp_orphaned_ && temp_ && state_ != State::kFailed && state_ != State::kDiscarded) {
      // Killed while writing it: nobody will rename it; its name and spool go now.
      spdlog::info("kvfs: temporary file '{}' ({} bytes) was closed by a dying writer: removed",
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
    const bool ended = state_ == State::kFailed || state_ == State::kDiscarded;
    // The cache holds the bytes before the name leaves the local files: an open in between
    // finds one or the other, never a miss that downloads (or streams) what this node wrote.
    MaybeAdoptLocked();
    // A temporary file stays (locally) until it is renamed or unlinked. One published just now
    // (an empty file, published at its last release) stays until the filesystem has recorded the
    // object (Filesystem::Release): a lookup in between would find neither and cache the miss.
    // A queued chunk stays until its upload is recorded (UploadQueued).
    if ((!temp_ || ended) && state_ != State::kQueued) {
      if (out.kind == Outcome::kPublished) {
        out.leave = true;
      } else {
        env_.files->EraseIf(place_.key, this);
      }
    }
  }
  return out;
}

void LocalFile::LeaveLocalFiles() {
  MutexLock l(&mu_);
  env_.files->EraseIf(place_.key, this);
}

void LocalFile::MaybeAdoptLocked() {
  // Only bytes that are the object: after a lost create race the store holds another writer's
  // object of that name, which may differ from this spool.
  if (state_ == State::kCommitted && created_object_ && uploaded_ && !adopted_ && !temp_) {
    adopted_ = env_.reader->AdoptWritten(place_.key, *uploaded_, spool_path_, SpoolCrcLocked());
  }
}

std::optional<uint32_t> LocalFile::SpoolCrcLocked() const {
  uint32_t crc;
  if (spool_crc_.CrcOf(size_, &crc)) return crc;
  return std::nullopt;
}

}  // namespace kvfs
