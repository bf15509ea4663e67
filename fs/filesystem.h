// Filesystem: the kvfs filesystem logic, independent of FUSE. Every operation is a plain method
// taking inode numbers / file handles and returning Status or Result; the FUSE adapter
// (fs/fuse/fuse_adapter.h) only translates, so all behaviour here is unit-testable.
//
// Semantics (see man/kvfs.8 for the user-facing list):
// - Files are objects under key_prefix, named by NameCodec; directories are implicit key prefixes
//   and "name/" marker objects: mkdir writes one (so a directory stays, on every node, after its
//   last file is removed, until rmdir deletes it). With hashed fan-out the namespace is flat.
// - Names matching temp_patterns are local only: never uploaded under that name, never looked up
//   in the store (docs/engines.md).
// - New files are written to a spool file and uploaded on the first flush/fsync/close (or by
//   renaming a temp-pattern file to a final name). Only whole chunks are accepted (EINVAL);
//   close returns 0 only when the object is durable; a failed upload is EIO and leaves nothing.
//   With write_back, close() and rename() return once the whole chunk is in the spool (shown on
//   this node) and the upload follows (WriteBack); fsync() and O_SYNC opens wait for it.
// - An existing name is never overwritten by an upload: conditional create plus ExistsPolicy.
//   Opening an existing file for writing (with or without O_TRUNC) starts a new, empty version;
//   if nothing is written the object is unchanged. Opened O_RDWR without O_TRUNC, the new
//   version starts with the object's bytes (so a shared mapping reads them; a changed object
//   then meets the exists policy at close).
// - Lookups that found a file or directory are cached for metadata_ttl_secs (MetaCache). After
//   that, a name whose chunk is in the local cache is still answered at once from it (chunks are
//   immutable) for cached_chunk_trust_secs, revalidated in the background (Revalidator).
// - A miss holds negative_ttl_ms, or, while the fleet feed covers it (fs/fleet_feed.h), until the
//   feed shows the name stored - at most feed_miss_ttl_secs (MissHolds). Directory listings answer
//   misses by the same rule (DirListingCache::Options::answers).
//
// errno behaviour (through fs/errno_map.cc):
//   close()/fsync() of a partial chunk (size not in chunk_sizes; empty file)   EINVAL
//   close()/fsync()/rename() when the upload failed (aborted, nothing left)   EIO
//   close() when the name exists and ExistsPolicy forbids it                  EEXIST
//   write()/truncate() past max_chunk_bytes                                   EFBIG
//   name > 255 bytes, key > 1024 bytes                                        ENAMETOOLONG
//   unlink() with unlink_policy deny                                          EPERM
//   lookup of a name unlinked here under unlink_policy local (the object
//   stays for other nodes; until it changes or this node publishes it again)  ENOENT
//   chmod/chown to other values, truncate of an uploaded file                 EPERM
//   open for writing (or creat) of a name whose inode has other names (link)  EPERM
//   symlink(), mknod() (fuse adapter)                                         EPERM
//   fallocate; setxattr/removexattr of names other than user.* (or of a
//   directory)                                                                EOPNOTSUPP
//   user.* xattrs of files (GetXattr and kin): kept with the chunk; setxattr
//   or removexattr once it is stored                                          EPERM
//   getxattr/removexattr of an attribute the file does not have               ENODATA
//   setxattr past 768 encoded bytes of a chunk's attributes                   ENOSPC
//   xattrs of the mount root: "user.kvfs.stats" reads the daemon's statistics
//   (text; fuse adapter); other names                                        ENODATA
//   setxattr/removexattr on the root                                          EOPNOTSUPP
//   mkdir with fan-out, rename of directories, RENAME_EXCHANGE, O_APPEND on
//   an uploaded file                                                          ENOTSUP
//   rmdir of a non-empty directory                                            EEXIST
//   an object changed under an open handle                                    ESTALE
//   shared mmap of a file read from the cache, page_cache false (the kernel)  ENODEV
//   utimes/touch/utimensat of an existing file: accepted, ignored (docs/engines.md)
//   open(O_TMPFILE) (the kernel: no tmpfile operation)                        EOPNOTSUPP
//
// Thread-safety: all methods may be called from many threads at once. Locks, in the order they
// may be taken: SpoolFile::mu_ (held across the upload of that one file) -> SpoolFiles::mu_ ->
// nothing; DirStream::mu_ (held across the LIST of that one handle's next page) -> InodeTable,
// MetaCache; HandleTable::mu_ (short: maps of handles and directory streams), InodeTable, LocalDirs
// and MetaCache internal mutexes are leaves, never held while another lock is taken. No lock is
// held across a store request except SpoolFile::mu_ and DirStream::mu_.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/user_xattrs.h"
#include "fs/chunk_size_learner.h"
#include "fs/dir_listing_cache.h"
#include "fs/dir_stream.h"
#include "fs/fleet_feed.h"
#include "fs/fs_options.h"
#include "fs/fs_types.h"
#include "fs/handle_table.h"
#include "fs/inode_table.h"
#include "fs/lookup_stats.h"
#include "fs/meta_cache.h"
#include "fs/name_codec.h"
#include "fs/read/chunk_reader.h"
#include "fs/revalidator.h"
#include "fs/scan_tracker.h"
#include "fs/spool_file.h"
#include "fs/spool_files.h"
#include "fs/unlinked_names.h"
#include "fs/uploader.h"
#include "fs/write_back.h"
#include "fs/write_stats.h"
#include "objstore/object_store.h"
#include "tier/node_tier.h"

namespace kvfs {

class Filesystem {
 public:
  static constexpr uint64_t kRootIno = InodeTable::kRootIno;
  // Called after a file vanished in a way the kernel cannot know (a failed upload of a file it
  // saw created): the adapter tells the kernel to drop the entry.
  using InvalidateFn = std::function<void(uint64_t parent, const std::string& name)>;

  // Validates options, creates the spool directory and removes stale spool files in it.
  static Result<std::unique_ptr<Filesystem>> Create(std::shared_ptr<ObjectStore> store,
                                                    std::shared_ptr<ChunkReader> reader,
                                                    FsOptions options, SteadyClock clock = {});
  ~Filesystem();

  const FsOptions& options() const { return options_; }
  double entry_timeout_secs() const { return options_.metadata_ttl_secs; }
  void set_invalidate_fn(InvalidateFn fn) EXCLUDES(invalidate_mu_) {
    MutexLock l(&invalidate_mu_);
    invalidate_ = std::move(fn);
  }
  // The fleet feed (fs/fleet_feed.h): told of every chunk this node stores or deletes; while it
  // covers a cached miss, the miss holds past negative_ttl_ms. Set before the session starts.
  void set_feed(std::shared_ptr<FleetFeed> feed) { feed_ = std::move(feed); }
  // Another node stored or deleted a chunk (the feed's thread). Thread-safe.
  void ApplyFeed(const FeedEvent& event);
  // The bounded tier (tier/node_tier.h), when store_capacity or store_max_age is set: told of
  // each chunk opened for reading and each chunk published, asked for statvfs. Set before the
  // session starts.
  void set_tier(std::shared_ptr<NodeTier> tier) { tier_ = std::move(tier); }
  // A collector removed the chunk `key` from the store: this node stops answering for it from
  // its metadata and its cache (open handles keep what they already read). Thread-safe.
  void ForgetRemoved(const std::string& key);
  // What lookups cost so far: answered locally or sent, and the requests sent.
  LookupStats LookupStatsNow() const;
  WriteStats WriteStatsNow() const { return writes_.Snapshot(); }
  // How the write path sees the processes behind requests (fs/process_state.h by default; all
  // null when /proc does not show the daemon's pid namespace: then every close counts as a live
  // close by the writer). Tests replace it.
  struct ProcessProbe {
    std::function<bool(pid_t)> exiting;        // the thread is exiting, a zombie, or gone
    std::function<bool(pid_t)> killed;         // an exiting thread was killed by a signal
    std::function<pid_t(pid_t)> thread_group;  // thread -> its process; 0: unknown
    // Whether the process still holds a writable descriptor of (ino, name): HoldsWritableFd.
    std::function<bool(pid_t, uint64_t, const std::string&)> holds_writer;
    // A descendant that holds one (DescendantHoldingWritableFd), or 0.
    std::function<pid_t(pid_t, uint64_t, const std::string&)> child_holding;
  };
  void set_process_probe(ProcessProbe p) { probe_ = std::move(p); }
  using ExitingFn = std::function<bool(pid_t)>;
  void set_exiting_fn(ExitingFn fn) {
    probe_.exiting = std::move(fn);
    probe_.killed = [](pid_t) { return true; };
  }

  // --- Names (lookup adds one kernel reference to the returned inode) ---
  // needs_store (optional): a call that would have to wait on the store does not; it returns at
  // once with *needs_store set (its result then means nothing), so the adapter can run it again
  // on a thread where waiting does not hold up other requests (WaitOnStore,
  // fs/fuse/fuse_request.h). pid: the calling thread (0: unknown). A chunk still being written is
  // visible only to the process writing it (docs/write-path.md); others get ino 0 (ENOENT, not
  // cached).
  Result<FsEntry> Lookup(uint64_t parent, const std::string& name, bool* needs_store = nullptr,
                         pid_t pid = 0);
  void Forget(uint64_t ino, uint64_t nlookup);
  // After Lookup said kNotFound: how long the kernel may keep that miss (what is left of the
  // metadata cache's TTL for it), so that kernel and daemon together keep it at most one TTL.
  double MissTtlSecs(uint64_t parent, const std::string& name);
  // fh (when the kernel passes one) lets fstat work on unlinked open files.
  Result<FileAttr> GetAttr(uint64_t ino, std::optional<uint64_t> fh = std::nullopt,
                           bool* needs_store = nullptr);
  Result<FileAttr> SetAttr(uint64_t ino, const SetAttrRequest& req,
                           std::optional<uint64_t> fh = std::nullopt);

  // --- Extended attributes of files: user.* ones (UserXattrs), published with the chunk ---
  // getxattr: from the file being written here, else from what this node knows of the object,
  // asking the store (HEAD) when that is nothing yet. kNoData when the file has no such attribute.
  Result<std::string> GetXattr(uint64_t ino, const std::string& name);
  // listxattr (names, each followed by a NUL): never asks the store - `ls -l` lists every file's -
  // so an object this node has only seen listed in a directory lists none until it is looked up,
  // read or asked for by getxattr.
  Result<std::string> ListXattrs(uint64_t ino);
  // setxattr / removexattr: only while the file is being written here, or is a temp file not yet
  // renamed; on a published chunk kPermissionDenied (its attributes are those it was stored with).
  Status SetXattr(uint64_t ino, const std::string& name, std::string value,
                  UserXattrs::SetMode mode);
  Status RemoveXattr(uint64_t ino, const std::string& name);

  // --- Directories ---
  // pid: as for Lookup (chunks other processes are writing are not listed). The thread's
  // lookups in the directory from now on are a scan's: they start no download (ScanTracker).
  Result<uint64_t> OpenDir(uint64_t ino, pid_t pid = 0);
  // Visits the entries from `offset` on (".", "..", then the names; see DirStream for offsets)
  // until `add` returns false or the directory ends. The handle holds one listing page at a time:
  // O(page) memory, not O(directory), until ReleaseDir frees it.
  // `ino`, `pid`: the directory and the reading thread, when known (ScanTracker).
  Status ReadDir(uint64_t dir_fh, uint64_t offset, const DirStream::Visitor& add, uint64_t ino = 0,
                 pid_t pid = 0);
  void ReleaseDir(uint64_t dir_fh);
  // Memory held by open directory handles (tests; the memory bound in docs/tuning.md).
  size_t DirHandleBytes() const;
  Result<FsEntry> Mkdir(uint64_t parent, const std::string& name);
  Status Rmdir(uint64_t parent, const std::string& name);

  // --- Files ---
  // pid: the creating thread; its process is the file's writer until another process writes.
  Result<std::pair<FsEntry, OpenResult>> CreateFile(uint64_t parent, const std::string& name,
                                                    int flags, pid_t pid = 0);
  // needs_store: as for Lookup (read-only opens whose metadata must come from the store).
  Result<OpenResult> Open(uint64_t ino, int flags, bool* needs_store = nullptr, pid_t pid = 0);
  Result<uint64_t> Read(uint64_t fh, uint64_t offset, uint64_t size, char* buf);
  // Where the bytes of [offset, offset+size) lie in a local file (a cache entry, or a completed
  // part of a download: waits for those parts like Read), clipped to the end of the object, so
  // the adapter can reply with the fd and the kernel splices instead of copying. kNotSupported
  // for files open for writing, local (temp or unfinished) files and readers without file-backed
  // reads: the caller then uses Read. The fd stays open while the handle lives (until Release);
  // *keep_alive, when given, is set to a reference that keeps it open even past Release, until
  // the caller drops it.
  Result<FdRange> ReadFd(uint64_t fh, uint64_t offset, uint64_t size,
                         std::shared_ptr<const void>* keep_alive = nullptr);
  // Whether Read/ReadFd of [offset, offset+size) would wait on the store (bytes not yet
  // downloaded, or streamed): the adapter then runs it off the FUSE worker threads. False for
  // cache hits, parts already downloaded, failed downloads and local files.
  bool ReadWouldWait(uint64_t fh, uint64_t offset, uint64_t size);
  // The kernel reads open `fh` from its OpenResult::passthrough_fd itself (counted).
  void NotePassthrough(uint64_t fh);
  // pid: the writing thread (0: unknown, or the kernel writing back a shared mapping); its
  // process becomes the file's writer.
  Result<uint64_t> Write(uint64_t fh, uint64_t offset, const char* data, uint64_t size,
                         pid_t pid = 0);
  // close() of one descriptor, by thread `pid` (0: unknown). Only the writer's own last close
  // publishes (docs/write-path.md, "Who may publish"): a close by another process (a child's copy
  // of the descriptor, closed at exec or exit; a shell's) publishes nothing, nor does one while
  // the writer still holds another descriptor of the file (dup2 + close), nor the implicit close
  // of a dying writer (SpoolFile::Abandon).
  Status Flush(uint64_t fh, pid_t pid = 0);
  // Waits for the upload of a chunk accepted at an earlier close or rename (write_back), on any
  // descriptor of it, and reports its failure (EIO). A chunk still being written is not published
  // (an O_SYNC writer's kernel sends an fsync after every write) unless its writer is unknown.
  Status Fsync(uint64_t fh);
  Status Release(uint64_t fh);
  // Whether Flush, Fsync or Release of `fh` may wait on the store: its file is written on this
  // node (an upload, or a chunk accepted and not yet uploaded). False for chunks opened for
  // reading, whose closes the adapter answers on the FUSE worker itself.
  bool MayWaitOnStore(uint64_t fh) const;
  Status Unlink(uint64_t parent, const std::string& name);
  // link(2): a second name for a file. Of a file written here (NIXL: link(tmp, final) then
  // unlink(tmp)) it publishes the bytes under the new name, atomically, as a rename would; of an
  // uploaded object it is a server-side copy. Never replaces: EEXIST when the name exists. On
  // this node the new name is the same inode (st_nlink counts the names; a linked chunk is not
  // opened for writing: EPERM); in the store and on other nodes, an object of its own.
  Result<FsEntry> Link(uint64_t ino, uint64_t new_parent, const std::string& new_name);
  // flags: 0 or RENAME_NOREPLACE (RENAME_EXCHANGE: kNotSupported).
  Status Rename(uint64_t parent, const std::string& name, uint64_t new_parent,
                const std::string& new_name, unsigned int flags);
  FsStat StatFs() const;

  // Local files (pending writes and temp files) currently held; for tests and shutdown logs.
  size_t LocalFileCount() const;
  // Waits until every chunk accepted by write_back is uploaded (or refused), at most
  // write_back_drain_timeout: before unmount. What is left then stays sealed for the next mount.
  void DrainWriteBack();
  // `kvfs sync`: stores every chunk accepted so far and not yet stored (write_back), on this
  // thread if its upload has not begun (each attempt within this thread's deadline), and returns
  // those that are not stored now, one "NAME<TAB>WHY" line each (empty: all are).
  std::string SyncAccepted();
  // Queues the upload of the chunks an earlier run of this cache's spool accepted and sealed but
  // did not upload (a crash, a kill -9, a reboot with the spool on a persistent disk), on a
  // write-back thread while the mount serves: each is checked against its seal and shown on this
  // node until its upload ends (SpoolFile::Recover). Called once the mount is up.
  void RecoverSealed();
  WriteBackStats WriteBackStatsNow() const {
    return write_back_ ? write_back_->Stats() : WriteBackStats{};
  }

 private:
  using Handle = FileHandle;
  struct Node {  // what a name refers to
    MetaEntry::Kind kind = MetaEntry::kMissing;
    double ttl_secs = -1;  // from the metadata cache: the rest of its TTL (FsEntry::ttl_secs)
    ObjectInfo info;
    std::shared_ptr<SpoolFile> spool;  // a file written here (or a temp file)
    bool written_here = false;         // a local file of this name exists (shown or not: `spool`)
  };

  Filesystem(std::shared_ptr<ObjectStore> store, std::shared_ptr<ChunkReader> reader,
             FsOptions options, SteadyClock clock);

  // Paths and keys.
  Result<std::vector<std::string>> PathOf(uint64_t ino) const;
  Result<std::vector<std::string>> ChildPath(uint64_t parent, const std::string& name) const;
  bool IsTempName(const std::string& name) const;
  static std::string Display(const std::vector<std::string>& path);

  // What `key` is: a local file, a cached entry, or (on a miss) one store request.
  // needs_store: as in Lookup.
  Result<Node> Resolve(const std::string& key, bool* needs_store = nullptr);
  // The store's view only (metadata cache, else one HEAD, or with directories one LIST).
  Result<Node> ResolveRemote(const std::string& key, bool* needs_store = nullptr);
  // With directories: file, directory or missing from one LIST of the keys starting with `key`,
  // whose keys under "key/" also answer the lookups of the levels below (filesystem.cc, Lookups).
  Result<Node> ResolveByListing(const std::string& key);
  // A file the store showed under `key` (HEAD or LIST): cached, unless this node unlinked it.
  Result<Node> FoundFile(ObjectInfo info);
  // The store has nothing under `key` (HEAD or LIST): the miss is cached and counted; NotFound.
  Status StoreMissed(const std::string& key);
  // Stale-while-revalidate: when the reader holds a complete local copy of key that the store
  // confirmed within cached_chunk_trust_secs, that answer at once (a revalidation is queued).
  std::optional<Node> ServeLocalCopy(const std::string& key);
  FileAttr AttrOf(uint64_t ino, const Node& node) const;
  // A read found the object changed (kPreconditionFailed): drop what is cached about it.
  void ForgetChanged(uint64_t ino);
  FileAttr DirAttr(uint64_t ino) const;
  // The attributes of an open file whose inode lost its name (unlinked while open): POSIX keeps
  // the file until its last close.
  std::optional<FileAttr> AttrOfOpen(uint64_t ino) const;
  // Before the object behind `ino` is deleted: its open read handles keep their bytes here.
  void KeepOpenLocal(uint64_t ino);
  // The process of thread `pid` (0: unknown).
  pid_t ProcessOf(pid_t pid) const;
  // Whether a file being written may be shown to thread `pid`'s process.
  bool VisibleTo(const SpoolFile& lf, pid_t pid) const;

  // Write path (filesystem.cc). The life of a written file is SpoolFile's (fs/spool_file.h); these
  // only find the file, ask it for a transition and record what the transition did.
  // EPERM for a file with more than one name (link()): see Link.
  Status RefuseLinked(uint64_t ino, const std::vector<std::string>& path) const;
  // passthrough_writes (and passthrough) on: opens of files being written may be offered to the
  // kernel with their spool as the backing file (OfferSpool), if the spool may be written by it.
  bool KernelWritesOn() const;
  void OfferSpool(const SpoolFile& lf, OpenResult* r) const;
  // EBUSY for an open that would start a new version of a name the kernel is writing (its
  // inode's opens all share that spool).
  Status RefuseNewVersion(const SpoolFile& lf, const std::vector<std::string>& path);
  Result<OpenResult> OpenForWrite(uint64_t ino, const std::vector<std::string>& path,
                                  const std::string& key, int flags, pid_t pid);
  // The write-back task of one accepted chunk: uploads it, and while the store fails in a way it
  // may get over, tries again with backoff; the chunk stays sealed meanwhile (nothing dropped).
  // rule_ino: see Apply - first, while the writer holds another descriptor of it, it waits.
  WriteBack::Ending UploadAccepted(SpoolFile& lf, uint64_t rule_ino = 0);
  // What every SpoolFile of this filesystem uses.
  SpoolFile::Deps SpoolDeps();
  // RecoverSealed's work for one sealed spool file: queued, refused (removed) or left sealed.
  void RecoverOne(const std::string& spool);
  // Whether an open for writing with `flags` bypasses the kernel's page cache (FOPEN_DIRECT_IO).
  static bool WritesBypassPageCache(int flags);
  Result<std::shared_ptr<SpoolFile>> NewLocal(const std::vector<std::string>& path,
                                              const std::string& key, uint64_t parent,
                                              bool created);
  // DirStream's NextPage for the directory `ino` with listing prefix `prefix`; names in `local`
  // are already in the stream's head.
  Status NextDirPage(uint64_t ino, const std::string& prefix,
                     const std::unordered_set<std::string>& local, DirStream::Cursor* cursor,
                     std::vector<DirEntry>* out);
  // Metadata cache, inodes and the kernel's view after a transition; a kQueued outcome queues
  // the upload of `lf` (write_back) in the `reserved` bytes of room WriteBack::Reserve gave it.
  // Publications and drops come from the file itself (SpoolFile::Deps::record, under its lock);
  // rename and link record their own outcomes.
  // `rule_ino` (not 0): the close that accepted it left the publication rule to the upload,
  // which waits for the writer's other descriptors of inode rule_ino first (UploadAccepted).
  void Apply(const SpoolFile::Outcome& out, const std::shared_ptr<SpoolFile>& lf = nullptr,
             uint64_t reserved = 0, uint64_t rule_ino = 0);
  // Stores now (as fsync() would) the version of `key` this node accepted and has not stored yet,
  // unless it is `except`: a rename onto that name, or a close of a version renamed over by it,
  // then gets the store's answer (the exists rule) at once.
  void StoreAcceptedVersion(const std::string& key, const SpoolFile* except);
  // The publication rule's /proc walk: whether the writing process (lf's owner) still holds
  // another writable descriptor of inode `ino` (or, for a kernel-written spool, a descendant
  // does: it becomes the owner). Counted in kvfs_write_publication_walks.
  bool WriterHoldsAnother(SpoolFile& lf, uint64_t ino);
  // close() (or fsync()) of a writer's descriptor; `wait`: until the object is durable.
  Status Commit(uint64_t fh, pid_t pid, bool wait);
  // An object now exists under `info.key` (an upload, a rename): cached, and the local
  // directories above it now exist in the store.
  void Published(const ObjectInfo& info);
  // What unlink does to the stored chunk `gone` (gone.key its key) under unlink_policy, after
  // the name was dropped from the local files: local hides it on this node; remote deletes it
  // (If-Match its ETag) and tells the fleet. `orphan`: an object a queued upload made after the
  // unlink returned (SpoolFile kOrphaned), whose delete runs on a write-back thread.
  Status ForgetUnlinked(const ObjectInfo& gone, bool orphan);

  const std::shared_ptr<ObjectStore> store_;
  const std::shared_ptr<ChunkReader> reader_;
  const FsOptions options_;
  const NameCodec codec_;
  Uploader uploader_;
  InodeTable inodes_;
  MetaCache meta_;
  ChunkSizeLearner learnt_sizes_;  // whole-chunk sizes from the store (learn_chunk_sizes)
  LookupCounters lookups_;         // what resolutions cost (fs/lookup_stats.h)
  ScanTracker scans_;              // lookups of a directory scan do not prefetch
  WriteCounters writes_;           // fs/write_stats.h
  DirListingCache listings_;       // negative lookups from a recent directory listing
  Revalidator revalidator_;        // background checks of names answered from local copies
  // Tells the fleet feed (when there is one) that this node stored or deleted `key`.
  void Announce(FeedEvent::Kind kind, const std::string& key, const std::string& etag = "");
  // Tells the kernel to drop its entry of `name` in `parent` (a no-op outside a session).
  void Invalidate(uint64_t parent, const std::string& name) EXCLUDES(invalidate_mu_);
  // The same for the name of the chunk `key`, when the kernel knows its directory.
  void InvalidateKey(const std::string& key);
  // Whether a miss recorded `age` ago still holds: within negative_ttl_ms, or while the fleet
  // feed covers it (up to feed_miss_ttl_secs, the metadata cache's bound for misses).
  bool MissHolds(std::chrono::steady_clock::duration age) const;
  // The user attributes of file `ino`: the writer's here, else the object's (`fetch`: from the
  // store when not known yet). A directory has none.
  Result<UserXattrs> XattrsOf(uint64_t ino, bool fetch);
  // The file being written here whose attributes may change; kPermissionDenied for a published
  // chunk, kNotSupported for a directory.
  Result<std::shared_ptr<SpoolFile>> XattrWriterOf(uint64_t ino, const std::string& name);

  Mutex invalidate_mu_;  // a leaf lock: the adapter's invalidator only queues
  InvalidateFn invalidate_ GUARDED_BY(invalidate_mu_);  // set while a session runs
  std::shared_ptr<FleetFeed> feed_;  // set before the session starts; null: no feed
  std::shared_ptr<NodeTier> tier_;   // set before the session starts; null: unbounded tier
  ProcessProbe probe_;               // set before the session starts
  SpoolFiles local_files_;           // what each key being written shows
  UnlinkedNames unlinked_;           // names unlinked here under unlink_policy local
  HandleTable handles_;              // open files and directories
  // Uploads after close() returned; null unless write_back (its threads cost memory). Last:
  // destroyed first, so that the uploads it drains still find everything they record into.
  const std::unique_ptr<WriteBack> write_back_;
};

}  // namespace kvfs
