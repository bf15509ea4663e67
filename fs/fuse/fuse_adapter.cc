#define FUSE_USE_VERSION 312
#include "fs/fuse/fuse_adapter.h"

#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "base/deadline.h"
#include "base/log.h"
#include "fs/errno_map.h"
#include "fs/fuse/entry_invalidator.h"
#include "fs/fuse/fuse_file_ops.h"
#include "fs/fuse/fuse_request.h"
#include "fs/fuse/fuse_xattr.h"
#include "fs/fuse/signal_unmount.h"

namespace kvfs {
namespace fuse_internal {
namespace {

// --- Operations: each translates, calls Filesystem, translates back ---

void OpInit(void* userdata, fuse_conn_info* conn) {
  auto* ctx = static_cast<Context*>(userdata);
  // O_TRUNC arrives with open() instead of as a separate truncate (a truncate of an uploaded
  // object is refused).
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  // Lookups in the one big chunk directory run in parallel.
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  // Large O_DIRECT reads are split into requests the kernel sends in parallel.
  if (conn->capable & FUSE_CAP_ASYNC_DIO) conn->want |= FUSE_CAP_ASYNC_DIO;
  // Reads served from cache files are spliced (fuse_reply_data with an fd). libfuse falls back to
  // a copy when the reply does not fit its per-thread pipe (see FuseOptions::max_read).
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  // Writes must reach the filesystem at once (close() reports upload errors).
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
#ifdef FUSE_CAP_PASSTHROUGH
  // Hits read by the kernel from the cache file (fs/fuse/passthrough_table.h). Built only with a
  // libfuse that has it (3.16+); the kernel offers it from 6.9.
  if (ctx->fs->options().passthrough && (conn->capable & FUSE_CAP_PASSTHROUGH)) {
    conn->want |= FUSE_CAP_PASSTHROUGH;
    ctx->passthrough.Enable();
  }
#endif
  conn->max_write = ctx->options.max_write;
  // Also passed as -o max_read (libfuse requires both); 0 leaves the kernel's limit.
  if (ctx->options.max_read > 0) conn->max_read = ctx->options.max_read;
  conn->max_readahead = ctx->options.max_readahead;
  conn->max_background = ctx->options.max_background;
  conn->congestion_threshold = std::max(1u, ctx->options.max_background * 3 / 4);
}

void ReplyLookup(fuse_req_t req, fuse_ino_t parent, const std::string& name,
                 const Result<FsEntry>& r) {
  if (r.ok() && r->attr.ino == 0) {
    // Hidden from this caller (a chunk another process is writing): a miss the kernel must not
    // keep, or the writer itself would find its own file missing.
    fuse_reply_err(req, ENOENT);
    return;
  }
  if (r.ok()) return ReplyEntry(req, r->attr, r->ttl_secs);
  if (r.status().code() == StatusCode::kNotFound) {
    // Negative entry with a timeout: the kernel itself caches the miss, for what is left of the
    // daemon's own TTL for it.
    fuse_entry_param e;
    std::memset(&e, 0, sizeof(e));
    e.ino = 0;
    e.entry_timeout = FsOf(req).MissTtlSecs(parent, name);
    fuse_reply_entry(req, &e);
    return;
  }
  ReplyErr(req, "lookup", Named(parent, name.c_str()), r.status());
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  const ScopedDeadline deadline = RequestDeadline(req);
  bool needs_store = false;
  const pid_t pid = fuse_req_ctx(req)->pid;
  auto r = FsOf(req).Lookup(parent, name, &needs_store, pid);
  if (!needs_store) return ReplyLookup(req, parent, name, r);
  WaitOnStore(
      req,
      [req, parent, pid, n = std::string(name)] {
        ReplyLookup(req, parent, n, FsOf(req).Lookup(parent, n, nullptr, pid));
      },
      LateReply(req, "lookup", Named(parent, name)));
}

void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  FsOf(req).Forget(ino, nlookup);
  fuse_reply_none(req);
}

void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) FsOf(req).Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void ReplyAttr(fuse_req_t req, fuse_ino_t ino, const Result<FileAttr>& r) {
  if (!r.ok()) return ReplyErr(req, "getattr", Ino(ino), r.status());
  struct stat st;
  FillStat(*r, &st);
  fuse_reply_attr(req, &st, FsOf(req).entry_timeout_secs());
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  const std::optional<uint64_t> fh = fi ? std::optional<uint64_t>(fi->fh) : std::nullopt;
  bool needs_store = false;
  auto r = FsOf(req).GetAttr(ino, fh, &needs_store);
  if (!needs_store) return ReplyAttr(req, ino, r);
  WaitOnStore(
      req, [req, ino, fh] { ReplyAttr(req, ino, FsOf(req).GetAttr(ino, fh)); },
      LateReply(req, "getattr", Ino(ino)));
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  SetAttrRequest sr;
  if (to_set & FUSE_SET_ATTR_MODE) sr.mode = attr->st_mode;
  if (to_set & FUSE_SET_ATTR_UID) sr.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) sr.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) sr.size = static_cast<uint64_t>(attr->st_size);
  auto r = FsOf(req).SetAttr(ino, sr, fi ? std::optional<uint64_t>(fi->fh) : std::nullopt);
  if (!r.ok()) return ReplyErr(req, "setattr", Ino(ino), r.status());
  struct stat st;
  FillStat(*r, &st);
  fuse_reply_attr(req, &st, FsOf(req).entry_timeout_secs());
}

// The name operations may wait on the store (a rename publishes with a PUT, an unlink or rmdir
// may DELETE, a link COPYs): on the store-write threads, the name arguments copied first.
void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  const ScopedDeadline deadline = RequestDeadline(req);
  WaitOnStoreWrite(
      req,
      [req, parent, n = std::string(name)] {
        auto r = FsOf(req).Mkdir(parent, n);
        if (!r.ok()) return ReplyErr(req, "mkdir", Named(parent, n.c_str()), r.status());
        ReplyEntry(req, r->attr);
      },
      LateReply(req, "mkdir", Named(parent, name)));
}

void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  const ScopedDeadline deadline = RequestDeadline(req);
  WaitOnStoreWrite(
      req,
      [req, parent, n = std::string(name)] {
        ReplyStatus(req, "rmdir", Named(parent, n.c_str()), FsOf(req).Rmdir(parent, n));
      },
      LateReply(req, "rmdir", Named(parent, name)));
}

void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  const ScopedDeadline deadline = RequestDeadline(req);
  WaitOnStoreWrite(
      req,
      [req, parent, n = std::string(name)] {
        ReplyStatus(req, "unlink", Named(parent, n.c_str()), FsOf(req).Unlink(parent, n));
      },
      LateReply(req, "unlink", Named(parent, name)));
}

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int flags) {
  const ScopedDeadline deadline = RequestDeadline(req);
  std::string what = Named(parent, name) + " to " + Named(newparent, newname);
  WaitOnStoreWrite(
      req,
      [req, parent, newparent, flags, what, n = std::string(name), nn = std::string(newname)] {
        ReplyStatus(req, "rename", what, FsOf(req).Rename(parent, n, newparent, nn, flags));
      },
      LateReply(req, "rename", what));
}

void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char* name) {
  const ScopedDeadline deadline = RequestDeadline(req);
  WaitOnStoreWrite(
      req,
      [req, ino, parent, n = std::string(name)] {
        auto r = FsOf(req).Link(ino, parent, n);
        if (!r.ok()) return ReplyErr(req, "link", Named(parent, n.c_str()), r.status());
        ReplyEntry(req, r->attr);
      },
      LateReply(req, "link", Named(parent, name)));
}

// Symlinks and special files have no object form: EPERM, as for filesystems that do not support
// them (symlink(2), mknod(2)).
void OpSymlink(fuse_req_t req, const char*, fuse_ino_t parent, const char* name) {
  ReplyErrno(req, "symlink", Named(parent, name), EPERM);
}
void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t, dev_t) {
  ReplyErrno(req, "mknod", Named(parent, name), EPERM);
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  FsStat s = FsOf(req).StatFs();
  struct statvfs v;
  std::memset(&v, 0, sizeof(v));
  v.f_bsize = s.bsize;
  v.f_frsize = s.frsize;
  v.f_blocks = s.blocks;
  v.f_bfree = s.bfree;
  v.f_bavail = s.bavail;
  v.f_files = s.files;
  v.f_ffree = s.ffree;
  v.f_favail = s.ffree;
  v.f_namemax = s.namemax;
  fuse_reply_statfs(req, &v);
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof(ops));
  ops.init = OpInit;
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.forget_multi = OpForgetMulti;
  ops.getattr = OpGetattr;
  ops.setattr = OpSetattr;
  ops.mkdir = OpMkdir;
  ops.rmdir = OpRmdir;
  ops.unlink = OpUnlink;
  ops.rename = OpRename;
  ops.link = OpLink;
  ops.symlink = OpSymlink;
  ops.mknod = OpMknod;
  ops.open = OpOpen;
  ops.create = OpCreate;
  ops.read = OpRead;
  ops.write = OpWrite;
  ops.flush = OpFlush;
  ops.fsync = OpFsync;
  ops.release = OpRelease;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.releasedir = OpReleasedir;
  ops.statfs = OpStatfs;
  ops.getxattr = OpGetxattr;
  ops.listxattr = OpListxattr;
  ops.setxattr = OpSetxattr;
  ops.removexattr = OpRemovexattr;
  // Not set, so libfuse answers ENOSYS once and the kernel stops asking: fallocate (EOPNOTSUPP
  // to callers), locks (handled locally by the kernel), access (every access allowed; permission
  // bits are fixed), readlink (no symlinks exist).
  return ops;
}

}  // namespace
}  // namespace fuse_internal

std::string FuseLibraryText() {
#ifdef FUSE_CAP_PASSTHROUGH
  const char* passthrough = ", passthrough";
#else
  const char* passthrough = ", no passthrough (built with libfuse before 3.16)";
#endif
  return std::string("libfuse ") + fuse_pkgversion() + passthrough;
}

int RunFuseSession(Filesystem& fs, const std::string& mountpoint, const FuseOptions& options,
                   std::function<void()> on_mounted) {
  std::string opts = "fsname=" + options.fsname + ",subtype=kvfs";
  if (options.allow_other) {
    // kvfs makes no access checks of its own: with other users on the mount, the kernel must
    // check the modes and owner it reports (FsOptions uid, gid, file_mode, dir_mode).
    opts += ",allow_other";
    if (std::find(options.extra_mount_options.begin(), options.extra_mount_options.end(),
                  "default_permissions") == options.extra_mount_options.end()) {
      opts += ",default_permissions";
    }
  }
  if (options.max_read > 0) opts += ",max_read=" + std::to_string(options.max_read);
  if (options.read_only) opts += ",ro";
  for (const auto& o : options.extra_mount_options) opts += "," + o;
  std::vector<std::string> argv_s = {"kvfs", "-o", opts};
  if (options.debug) argv_s.push_back("-d");
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());

  // As many threads as FUSE workers: lookups waiting on the store never hold a FUSE worker, and
  // those queued behind them end at their deadline.
  auto store_waits = std::make_unique<Executor>(options.max_threads);
  auto store_writes = std::make_unique<Executor>(options.max_threads);
  fuse_internal::Context ctx{&fs, options, store_waits.get(), store_writes.get()};
  fuse_lowlevel_ops ops = fuse_internal::MakeOps();
  fuse_session* se = fuse_session_new(&args, &ops, sizeof(ops), &ctx);
  if (se == nullptr) {
    LogError("kvfs: cannot create FUSE session (bad mount options '{}'?)", opts);
    return 1;
  }
  int rc = 1;
  if (fuse_set_signal_handlers(se) != 0) {
    LogError("kvfs: cannot install signal handlers");
  } else {
    if (fuse_session_mount(se, mountpoint.c_str()) != 0) {
      LogError("kvfs: cannot mount at {} (does it exist, and is /dev/fuse usable?)", mountpoint);
    } else {
      bool may_unmount = true;
      {
        EntryInvalidator invalidator(se);
        SignalUnmount signal_unmount(mountpoint);
        fs.set_invalidate_fn([&invalidator](uint64_t parent, const std::string& name) {
          invalidator.Push(parent, name);
        });
        if (on_mounted) on_mounted();
        fuse_loop_config* cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(cfg, static_cast<unsigned>(options.max_threads));
        fuse_loop_cfg_set_idle_threads(cfg,
                                       static_cast<unsigned>(std::max(1, options.max_threads / 2)));
        // Returns after unmount or a signal; requests already running complete first.
        rc = fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
        // Answer what is queued while the session can still take replies.
        store_writes.reset();
        store_waits.reset();
        fs.set_invalidate_fn(nullptr);
        signal_unmount.Stop();
        may_unmount = signal_unmount.SessionMayUnmount();
      }
      if (may_unmount) fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  fuse_opt_free_args(&args);
  // A positive result is the signal that ended the loop: a requested, clean shutdown.
  return rc < 0 ? 1 : 0;
}

}  // namespace kvfs
