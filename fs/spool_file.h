// SpoolFile: one file written through this mount (or a local-only temporary file), from its
// creation to its end, and the only code that changes its state. Its bytes live in a spool file
// (bounded by disk, not RAM) until they are uploaded; after that the spool is handed to the
// ChunkReader as the cache entry, or deleted. Filesystem asks for transitions; nobody else
// writes its fields.
//
// States and transitions (docs/write-path.md has the diagram and the rules behind it):
//
//   created (creat/O_EXCL) -> kDirty          opened for writing, nothing written -> kClean
//   kClean | kCommitted --Write/Truncate--> kDirty   (parts may go out while written: EarlyUpload;
//   from kCommitted of an object this file created, the new version replaces it)
//   kDirty --Commit (flush/fsync/release by a live process)--> kCommitted | kFailed
//   kDirty --Commit without waiting (write_back: close, rename)--> kQueued (whole; shown here;
//   sealed: SpoolSeal records it beside the spool, so a crash of the daemon does not lose it)
//   kQueued --UploadQueued (the write-back thread) or a waiting Commit (fsync)--> as from kDirty,
//   but a failure the store may get over leaves it kQueued and sealed (tried again)
//   kDirty --Abandon (implicit close by a dying process)--> kAbandoned: hidden, nothing sent;
//   kAbandoned --Commit (a live holder of the same descriptor closes it)--> as from kDirty
//   kAbandoned --last Release--> kDiscarded
//   any --Discard (unlink; renamed over while idle, committed or a temp file)--> kDiscarded
//   kClean | kDirty open, kQueued --Displace (renamed over)--> unchanged, out of SpoolFiles: its
//   own close publishes it under the conditional-create rules
//   temp file --Abandon, then last Release with no live close since--> kDiscarded
//   temp file --RenameTo(final name)--> kCommitted under the new key (or unchanged on failure)
//   last handle released in kCommitted, object created by this file --> spool adopted by the
//   reader as the cache entry (never when the name already held another writer's object)
// kFailed and kDiscarded are terminal: nothing is ever uploaded from them; a later open of the
// name starts a new SpoolFile.
//
// Thread-safety: thread-safe. mu_ is held across the upload of a close that waits for it
// (write_back off, O_SYNC, a rename), so a file's writes and its close are serialized. A
// queued upload (write_back) lets go of mu_ while its bytes are on their way (uploading_): an
// unlink, open, release, rename or fsync of the file meanwhile never waits on the store for the
// lock. What would change the bytes or the key under the transfer (a write, a truncation, a
// rename, a second upload) waits for it instead, within the calling request's deadline; an
// unlink goes through at once, and the transfer's end hands an object it made for a name that
// is gone back to Filesystem (kOrphaned). Size, mtime and temp are mirrored in atomics so that
// stat() and lookups never wait. Lock order: SpoolFile::mu_ -> SpoolFiles::mu_; two SpoolFile
// locks are never held at once.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/crc32c_fold.h"
#include "base/mutex.h"
#include "base/status.h"
#include "base/user_xattrs.h"
#include "fs/chunk_size_learner.h"
#include "fs/early_upload.h"
#include "fs/fs_options.h"
#include "fs/fs_types.h"
#include "fs/read/chunk_reader.h"
#include "fs/spool_files.h"
#include "fs/spool_seal.h"
#include "fs/uploader.h"
#include "objstore/object_store.h"

namespace kvfs {

class SpoolFile : public std::enable_shared_from_this<SpoolFile> {
 public:
  enum class State {
    kClean,      // open for writing, nothing to upload
    kDirty,      // bytes not yet in the store (whole parts may already have gone out)
    kAbandoned,  // dirty, but closed by a dying process: hidden, published only by a live close
    kQueued,     // whole and accepted (write_back): shown on this node, its upload queued
    kCommitted,  // the object under key() holds exactly these bytes
    kFailed,     // a commit failed (terminal: every later call reports failure())
    kDiscarded,  // unlinked, replaced, or abandoned by a dying writer (terminal; never uploaded)
  };
  // Where the file lives in the namespace; only RenameTo changes it.
  struct Place {
    std::string key;      // the object key it is uploaded as
    std::string display;  // path relative to the mount, for messages
    uint64_t parent_ino = 0;
    std::string name;
  };
  // What a transition did, for Filesystem's own bookkeeping (metadata cache, inodes, kernel).
  struct Outcome {
    enum Kind {
      kNothing,    // nothing to upload (clean, temp, already committed)
      kPublished,  // the object is in the store: `info`
      kQueued,     // whole, shown on this node; its upload is to be queued (UploadQueued)
      kRejected,   // a rename's upload failed; the file is unchanged: `status`
      kDropped,    // the file failed (kFailed) or was abandoned (kDiscarded) just now: the
                   // name `place` disappears; `status` is the failure
      kOrphaned,   // a queued upload's transfer ended after the name was unlinked (the unlink
                   // did not wait for it); object_remains: it made the object `info`, which the
                   // name must not show
      kNotQueued,  // Commit(queue_only): the chunk would be refused or uploaded now; unchanged
    };
    Kind kind = kNothing;
    Status status;
    ObjectInfo info;
    Place place;
    // kDropped: the name still holds an object (this was a new version of it, or its upload
    // found one there): the name stays, showing that object.
    bool object_remains = false;
  };

  // What Filesystem owns and every SpoolFile uses; outlives them all.
  struct Deps {
    const FsOptions* options = nullptr;
    ObjectStore* store = nullptr;
    Uploader* uploader = nullptr;
    ChunkReader* reader = nullptr;
    SpoolFiles* files = nullptr;
    ChunkSizeLearner* learnt_sizes = nullptr;  // null: learn_chunk_sizes is off
    // The filesystem's bookkeeping of a publication or a drop (metadata, inodes, the kernel's
    // entries). Called with the file's lock held, before the name leaves SpoolFiles: an unlink or
    // rename of the name, which waits for that lock, finds the outcome recorded, and a lookup
    // finds the spool file or the record - never neither, never a record after the unlink.
    std::function<void(const Outcome&)> record;
  };

  // A new file with `handles` open handles, registered as what place.key shows. `created`: made
  // by creat() - it must end as an object or an error, so it starts dirty even when empty.
  static Result<std::shared_ptr<SpoolFile>> Create(const Deps& deps, Place place, bool temp,
                                                   bool created);
  // A chunk a crashed run accepted for write-back (its spool file at `spool_path`, sealed as
  // `seal`): checked against the seal (size, CRC32C: kDataLoss if it differs), then kQueued as
  // when its close() returned - shown on this node unless a newer writer has the name already -
  // for Filesystem to queue its upload.
  static Result<std::shared_ptr<SpoolFile>> Recover(const Deps& deps, const std::string& spool_path,
                                                    const SpoolSeal::Record& seal, Place place);
  // Closes the spool; deletes it unless the reader adopted it or it is still sealed (accepted,
  // never uploaded: left for the next mount).
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // --- Observers that never wait for an upload ---
  // The kernel's writes (passthrough_writes) are not seen: their size is read from the spool.
  uint64_t size_now() const;
  // Where the file is (its key, name and parent): a copy, as a rename may move it meanwhile.
  Place place() const EXCLUDES(mu_);
  // Renamed over while being written (Displace): another version owns its name.
  bool displaced() const EXCLUDES(mu_);
  int64_t mtime_sec() const { return mtime_sec_; }
  bool temp_now() const { return temp_atomic_.load(); }
  // Whether these bytes are what the file's name shows on this node (kCommitted, or kQueued: a
  // whole chunk whose upload follows): until then only the writer sees the file
  // (Filesystem::VisibleTo).
  bool published_now() const { return published_atomic_.load(); }
  // Whether the file may be kQueued (write_back): its upload may hold the file's lock. A hint for
  // where to run a release, never a decision about the file.
  bool queued_now() const { return queued_atomic_.load(); }
  // The process writing this file: its creator, then whichever process last wrote to it. Only its
  // close publishes. 0: unknown (pid namespaces the daemon cannot see into): anyone's close does.
  pid_t owner() const { return owner_.load(); }
  void set_owner(pid_t tgid) {
    if (tgid > 0) owner_.store(tgid);
  }
  // Opened for writing over an object of `size` bytes (the name's object when it was opened): a
  // write-back close whose chunk that object would refuse (exists policy: another non-empty
  // size) uploads before it returns, so that it gets the refusal (EEXIST) as without write-back.
  void OverObjectOf(uint64_t size) EXCLUDES(mu_);
  // The process that created or opened it for writing first (it sees the file while another
  // process it handed the descriptor to writes it).
  pid_t creator() const { return creator_.load(); }
  void set_creator(pid_t tgid) {
    pid_t none = 0;
    if (tgid > 0) creator_.compare_exchange_strong(none, tgid);
  }
  // A file that failed or was dropped: a new open of its name starts a new SpoolFile.
  bool Ended() const EXCLUDES(mu_);
  // Whether these bytes are `object`: this file created it and has not changed since.
  bool IsObject(const ObjectInfo& object) EXCLUDES(mu_);
  // Whether a Commit now would upload something (dirty, not a temp file).
  bool WouldPublish() EXCLUDES(mu_);
  // kQueued (a waiting Commit uploads it now) or kFailed (Commit reports why): what fsync()
  // waits for on any descriptor of the file.
  bool FsyncWaits() EXCLUDES(mu_);

  // --- Writes by the kernel (passthrough_writes) ---
  // Whether the kernel may write this file's spool for an open: a new version (not started from
  // the object's bytes, which are sent only if changed), not failed or dropped.
  bool KernelMayWrite() const EXCLUDES(mu_);
  // An open of it was granted as a passthrough write: from now on its bytes and size may change
  // without Write(), so every transition first reads the spool's size and time (CatchUpLocked),
  // the checksum is computed from the spool, and no parts are sent while it is written.
  void KernelWrites() EXCLUDES(mu_);
  bool kernel_written() const { return kernel_written_atomic_.load(); }
  // Kernel-written and open: the inode's opens all use this spool (a new version is refused).
  bool KernelHeld() const { return kernel_written_atomic_.load() && handles_.load() > 0; }
  // The spool, as the kernel's backing file of such opens, and the name that tells opens of this
  // spool from opens of anything else (PassthroughTable's version).
  int spool_fd() const { return fd_; }
  std::string backing_version() const { return kSpoolVersionPrefix + spool_path_; }

  // --- Handles ---
  // One more handle (open of this file): a reader's (lock-free), or a writer's. A writer is not
  // attached (false: the caller starts a new SpoolFile over the object) to a file let go - its
  // last handle released since it was looked up - nor to a published one, unless it `keeps_bytes`
  // (O_RDWR) and they are the object's, or the kernel writes the spool. Fails with the failure of
  // an ended file.
  void AttachReader();
  Result<bool> AttachWriter(bool keeps_bytes) EXCLUDES(mu_);
  // creat() of a name whose temp file is idle (no handles, still alive): reuse it as a local
  // file would be. False if it is not idle (the caller then makes a new file).
  bool ReuseIdleTemp(bool truncate) EXCLUDES(mu_);
  // An open handle is being closed (RELEASE). A writer's close commits what a flush did not -
  // unless the last flush came from a dying process (Abandon): then the bytes are discarded.
  // The last handle ends the file's life here: it leaves SpoolFiles (unless it is a live temp
  // file), after its outcome is recorded, and a committed spool becomes the reader's cache entry.
  Outcome Release(bool writer) EXCLUDES(mu_);

  // --- Bytes ---
  // A failed spool write fails the file (recorded: kDropped): its close reports the error.
  Result<uint64_t> Write(uint64_t offset, const char* data, uint64_t n) EXCLUDES(mu_);
  Status Truncate(uint64_t size) EXCLUDES(mu_);
  Result<uint64_t> Read(uint64_t offset, uint64_t n, char* buf) const;
  // A file opened for reading and writing keeps its contents (POSIX): the object's `size` bytes
  // are copied into the spool from `from`, and the file stays clean (nothing to upload unless it
  // is written). Without it, a shared mapping of an existing file would fault past the end of
  // an empty new version (SIGBUS).
  Status Preload(ReadHandle* from, uint64_t size) EXCLUDES(mu_);

  // --- Transitions ---
  // flush()/fsync() by a live process: validates the whole chunk and uploads it; returns when
  // the object is durable or the file failed. Without `wait` (write_back), a whole chunk is
  // only accepted: kQueued, and the caller queues UploadQueued. `queue_only` (with !wait): a
  // chunk that cannot be queued (not whole, refused ahead, no seal) is neither uploaded nor
  // refused: kNotQueued, the file unchanged, for the caller to apply the publication rule
  // (which the queued upload applies itself, WaitForWriters) before it commits again.
  Outcome Commit(bool wait = true, bool queue_only = false) EXCLUDES(mu_);
  // The publication rule for a chunk accepted without it (Commit queue_only): waits up to `d`
  // until no writable handle of the file is open (the writer's RELEASE follows its close() at
  // once unless another descriptor shares it: a dup, a fork) or the file is no longer kQueued.
  // Returns whether that happened.
  bool WaitForWriters(std::chrono::milliseconds d) EXCLUDES(mu_);
  // The queued upload (a write-back thread): uploads a file still kQueued (nothing otherwise: it
  // was rewritten, discarded, or a waiting Commit stored it). A file with no handles left then
  // leaves SpoolFiles. An upload that fails in a way the store may get over (MayRetry) leaves the
  // file kQueued and sealed: kNothing with the failure in `status`, to be tried again; so does a
  // waiting Commit (fsync) of a kQueued file, which reports that failure. Neither holds mu_
  // during the transfer; a file unlinked meanwhile ends kOrphaned with the object it made.
  Outcome UploadQueued() EXCLUDES(mu_);
  // Whether an upload that failed with `st` may succeed later: everything but the refusals that
  // would be the same again (the exists policy, the whole-chunk rules, a spool that lost bytes).
  static bool MayRetry(const Status& st);
  // The implicit close of a dying process (its FLUSH): nothing is published on its behalf, the
  // name disappears at once (kDropped) and parts sent early are aborted. A live process that
  // shares the descriptor may still commit it; otherwise its last Release discards it. A temp
  // file keeps its name until that last Release, which discards it unless a live close came in
  // between (nobody will rename it: it would hold its name and spool until unmount).
  Outcome Abandon(pid_t pid) EXCLUDES(mu_);
  // --- The chunk's user.* extended attributes, published with it ---
  // Set or removed while the file is being written (or is a temp file not renamed yet): they are
  // part of the version, so a file opened over an object and not written yet becomes a new
  // version. Once the chunk is accepted or stored they are fixed: kPermissionDenied.
  Status SetXattr(const std::string& name, std::string value, UserXattrs::SetMode mode)
      EXCLUDES(mu_);
  Status RemoveXattr(const std::string& name) EXCLUDES(mu_);
  UserXattrs Xattrs() const EXCLUDES(mu_);

  // unlink(), or another file renamed over this one: never uploaded; open handles keep their
  // bytes. Returns whether it was a temp file. `under_way` (optional) runs, under this file's
  // lock, when a queued upload's bytes were on their way: it comes before that upload's end,
  // which reports kOrphaned.
  bool Discard(const std::function<void()>& under_way = nullptr) EXCLUDES(mu_);
  // Another file was renamed over this one's name. A file still open for writing (kClean or
  // kDirty with handles) or accepted and queued (write_back) is not discarded: its writer's
  // close() must not return 0 with nothing stored, so it keeps its bytes and publishes at its
  // own close under the conditional-create rules, against the object the rename stored (the same
  // bytes: success; another size: EEXIST). Anything else (idle, committed, abandoned, a temp
  // file) is discarded as by Discard(). Returns whether it was discarded.
  bool Displace() EXCLUDES(mu_);
  // link() of this file to `dst`: uploads these bytes as dst.key with a create that never
  // replaces (link(2) fails EEXIST when the name exists; identical bytes count as done). The file
  // itself is unchanged: its own name stays what it was (NIXL: link(tmp, final), unlink(tmp)).
  // kPublished (info: the object) or kRejected (status).
  Outcome LinkTo(const Place& dst) EXCLUDES(mu_);
  // rename() of this (temp or unfinished) file to `dst`: uploads it under dst.key first unless
  // `dst_temp` (returns when durable; on failure the file is unchanged, kRejected). Without
  // `wait` (write_back) a whole chunk is renamed at once and kQueued under dst.key. Moves it in
  // SpoolFiles; *replaced gets a different SpoolFile that showed dst.key (to be discarded).
  Outcome RenameTo(Place dst, bool dst_temp, bool no_replace, bool wait,
                   std::shared_ptr<SpoolFile>* replaced) EXCLUDES(mu_);

 private:
  SpoolFile(const Deps& deps, int fd, std::string spool_path, Place place, bool temp);
  Outcome CommitLocked(bool wait, bool queue_only = false) REQUIRES(mu_);
  // Uploads the whole chunk as place_.key: kCommitted (kPublished) or kFailed (kDropped).
  Outcome UploadLocked() REQUIRES(mu_);
  // The upload of a kQueued file, with mu_ let go during the transfer (uploading_): as
  // UploadLocked, or kOrphaned when the file was unlinked meanwhile.
  Outcome UploadQueuedLocked() REQUIRES(mu_);
  // What an upload's result makes of the file: kCommitted, kFailed, or (accepted and sealed, a
  // failure the store may get over) still kQueued.
  Outcome UploadEndedLocked(Result<UploadOutcome> up) REQUIRES(mu_);
  // Waits for a queued upload's transfer to end, until the calling thread's deadline
  // (base/deadline.h): then kDeadlineExceeded naming the file and `what` waited.
  Status WaitForTransferLocked(const char* what) REQUIRES(mu_);
  // The upload of these bytes as `key` succeeded: kCommitted, kPublished.
  Outcome CommittedLocked(const std::string& key, UploadOutcome up) REQUIRES(mu_);
  Outcome FailLocked(Status st) REQUIRES(mu_);
  // Hands a publication or a drop to Deps::record (the lock held: see there); returns `out`.
  Outcome RecordLocked(Outcome out) REQUIRES(mu_);
  void DirtyLocked() REQUIRES(mu_);
  // Kernel-written files: takes the spool's size, and marks the file dirty if the spool changed
  // since last seen (its size or modification time: the kernel's writes update both).
  void CatchUpLocked() REQUIRES(mu_);
  // Remembers the spool's modification time as seen (after the daemon's own changes to it).
  void SeenLocked() REQUIRES(mu_);
  void SetSizeLocked(uint64_t s) REQUIRES(mu_);
  // Whether the attributes may still change (SetXattr): kPermissionDenied naming the file if not.
  Status XattrsOpenLocked(const std::string& name) const REQUIRES(mu_);
  // They changed: early parts no longer match, and a clean file becomes a new version.
  void XattrsChangedLocked() REQUIRES(mu_);
  // The whole-chunk rule (chunk_sizes, max_chunk_bytes), after CheckKernelWritesLocked: every
  // publication (commit, rename, link) passes here.
  Status CheckWholeLocked(uint64_t size, const Place& place) const REQUIRES(mu_);
  // Kernel-written files: a write the kernel failed is not seen here, only its trace - a full
  // spool disk (ENOSPC is the failure a spool meets) - which fails the file as a failed Write()
  // would.
  Status CheckKernelWritesLocked() const REQUIRES(mu_);
  // The last handle went away in kCommitted: hand the spool to the reader if the object holds
  // these very bytes.
  void MaybeAdoptLocked() REQUIRES(mu_);
  // The spool's CRC32Cs (the whole and its slices) as folded from the writes, if they covered
  // exactly [0, size_), else as computed for its seal or by its upload.
  std::optional<WrittenCrc> SpoolCrcLocked() const REQUIRES(mu_);
  // Write-back accepts the chunk as `place`: writes its seal (SpoolSeal). A failure (the spool's
  // disk full, say) is logged and the caller uploads before it returns instead.
  Status SealLocked(const Place& place) REQUIRES(mu_);
  // Accepted (write-back): shown on this node, its upload to be queued.
  void QueuedLocked() REQUIRES(mu_);
  // The chunk is no longer pending (stored, failed, rewritten, discarded): its seal goes.
  void UnsealLocked() REQUIRES(mu_);

  const Deps deps_;
  const int fd_;
  const std::string spool_path_;
  const int64_t mtime_sec_;
  std::atomic<uint64_t> size_atomic_{0};
  std::atomic<bool> temp_atomic_{false};
  std::atomic<bool> published_atomic_{false};
  std::atomic<bool> queued_atomic_{false};
  std::atomic<pid_t> owner_{0};
  std::atomic<pid_t> creator_{0};
  std::atomic<bool> kernel_written_atomic_{false};

  mutable Mutex mu_;
  Place place_ GUARDED_BY(mu_);
  bool temp_ GUARDED_BY(mu_) = false;  // matches a temp pattern: never uploaded under this name
  State state_ GUARDED_BY(mu_) = State::kClean;
  Status failure_ GUARDED_BY(mu_);  // kFailed: why; kDiscarded: what a later call reports
  uint64_t size_ GUARDED_BY(mu_) = 0;
  // Open handles. Atomic, not under mu_: a reader attaches to (and leaves, unless it is the last
  // handle) a file whose upload holds mu_ without waiting for it (write_back shows a chunk while it
  // uploads). Changes that decide the file's end (the last release) happen under mu_.
  std::atomic<int> handles_{0};
  // Of them, the writers' (AttachWriter, Create, ReuseIdleTemp; left in Release(true) under mu_,
  // signalling writers_gone_).
  int writers_ GUARDED_BY(mu_) = 0;
  CondVar writers_gone_;
  std::optional<ObjectInfo> uploaded_ GUARDED_BY(mu_);  // kCommitted: the object
  // The CRC32C of the spool, folded from the writes as they come (uploads record it with the
  // object and the cache with the entry, without reading the spool again). Gives up on rewrites
  // and truncation; then the spool is read.
  CrcFold spool_crc_ GUARDED_BY(mu_){CrcFold::Overlap::kInvalidate, SliceCrcs::kMinSliceSize};
  // kCommitted: the object was created from these bytes (not another writer's of that name).
  bool created_object_ GUARDED_BY(mu_) = false;
  bool adopted_ GUARDED_BY(mu_) = false;  // the reader took the spool file over
  // Started from the object's bytes (Preload: opened O_RDWR), or written again after it created
  // the object: a changed version replaces the object instead of meeting the exists policy, and
  // is not sent while written.
  bool replaces_ GUARDED_BY(mu_) = false;
  // Opened for writing over an existing object (not created): if this version fails, the name
  // keeps showing that object.
  bool over_object_ GUARDED_BY(mu_) = false;
  // A temp file whose last close came from a dying process: discarded at its last Release.
  bool temp_orphaned_ GUARDED_BY(mu_) = false;
  // The kernel writes the spool (KernelWrites), and the spool's modification time last seen.
  bool kernel_written_ GUARDED_BY(mu_) = false;
  struct timespec seen_mtime_ GUARDED_BY(mu_) {};
  // OverObjectOf: the size of the object the name held when this version was opened.
  std::optional<uint64_t> over_size_ GUARDED_BY(mu_);
  // Renamed over while being written (Displace): another version owns the name, so this one's
  // close waits for the store's answer (EEXIST unless the same bytes) instead of being accepted.
  bool displaced_ GUARDED_BY(mu_) = false;
  // kQueued with its seal written (SpoolSeal), and the CRC32Cs computed for it (the seal holds
  // the whole's).
  bool sealed_ GUARDED_BY(mu_) = false;
  std::optional<WrittenCrc> sealed_crc_ GUARDED_BY(mu_);
  // Parts sent while the file is still being written; null when off or done.
  std::unique_ptr<EarlyUpload> early_ GUARDED_BY(mu_);
  UserXattrs xattrs_ GUARDED_BY(mu_);
  // A queued upload's bytes are on their way, mu_ let go (UploadQueuedLocked); transfer_done_
  // is signalled when it ends.
  bool uploading_ GUARDED_BY(mu_) = false;
  CondVar transfer_done_;
};

}  // namespace kvfs
