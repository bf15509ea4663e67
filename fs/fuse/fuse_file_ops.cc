// Open files and directories over FUSE: each handler translates, calls Filesystem, translates
// back (errors through fs/fuse/fuse_request.h).
#include "fs/fuse/fuse_file_ops.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace kvfs::fuse_internal {
namespace {

// How the kernel serves an open of `ino` (fs/fuse/passthrough_table.h): its page cache, none
// (FOPEN_DIRECT_IO), or the cache file itself (passthrough). False: the open must be refused
// (EBUSY), and nothing was recorded.
bool SetOpenMode(fuse_req_t req, fuse_ino_t ino, const OpenResult& r, fuse_file_info* fi) {
  PassthroughTable::Mode m = CtxOf(req).passthrough.Open(ino, r.fh, r.passthrough_fd, r.version,
                                                         r.direct_io, [req](int fd) -> int32_t {
#ifdef FUSE_CAP_PASSTHROUGH
                                                           return fuse_passthrough_open(req, fd);
#else
        (void)req;
        (void)fd;
        return 0;
#endif
                                                         });
  if (m.busy) return false;
  fi->direct_io = m.direct_io;
#ifdef FUSE_CAP_PASSTHROUGH
  fi->backing_id = m.backing_id;
#endif
  if (m.backing_id > 0) {
    fi->keep_cache = 0;  // the kernel takes no other open flag with FOPEN_PASSTHROUGH
    FsOf(req).NotePassthrough(r.fh);
  }
  return true;
}

// The inode is open for passthrough reads of another file: the kernel would fail this open with
// EIO after the reply. The daemon's handle goes (a write handle without a flush stores nothing).
Status BusyCause() {
  return Status::Unavailable(
      "open on this node as a cache hit read by the kernel (passthrough) until those opens are "
      "closed");
}

void ReplyBusy(fuse_req_t req, const char* op, fuse_ino_t ino, uint64_t fh) {
  FsOf(req).Release(fh);
  ReplyErrno(req, op, Ino(ino), EBUSY, BusyCause());
}

// The open `fh` is gone (released, or its reply failed): the inode's backing file goes with its
// last passthrough open.
void ForgetOpen(fuse_req_t req, uint64_t fh) {
  const int32_t drop = CtxOf(req).passthrough.Release(fh);
#ifdef FUSE_CAP_PASSTHROUGH
  if (drop > 0) fuse_passthrough_close(req, drop);
#else
  (void)drop;
#endif
}

void ReplyOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, const Result<OpenResult>& r) {
  if (!r.ok()) return ReplyErr(req, "open", Ino(ino), r.status());
  fi->fh = r->fh;
  fi->keep_cache = r->keep_cache;
  if (!SetOpenMode(req, ino, *r, fi)) return ReplyBusy(req, "open", ino, r->fh);
  if (fuse_reply_open(req, fi) == -ENOENT) {  // the caller went away
    ForgetOpen(req, r->fh);
    FsOf(req).Release(r->fh);
  }
}

void ServeRead(fuse_req_t req, fuse_ino_t ino, uint64_t fh, size_t size, off_t off) {
  Filesystem& fs = FsOf(req);
  // Cache hits and downloaded parts: reply with the cache file's fd so libfuse splices it into
  // /dev/fuse (no copy through user space). keep_alive holds the handle, and with it the fd,
  // until fuse_reply_data has returned.
  std::shared_ptr<const void> keep_alive;
  auto fr = fs.ReadFd(fh, static_cast<uint64_t>(off), size, &keep_alive);
  if (fr.ok()) {
    if (fr->length == 0) {
      fuse_reply_buf(req, nullptr, 0);
      return;
    }
    fuse_bufvec bv = FUSE_BUFVEC_INIT(fr->length);
    bv.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    bv.buf[0].fd = fr->fd;
    bv.buf[0].pos = static_cast<off_t>(fr->offset);
    // No FUSE_BUF_SPLICE_MOVE: the pages belong to the cache file and must stay there.
    fuse_reply_data(req, &bv, static_cast<fuse_buf_copy_flags>(0));
    return;
  }
  if (fr.status().code() != StatusCode::kNotSupported) {
    return ReplyErr(req, "read", Ino(ino), fr.status());
  }
  std::unique_ptr<char[]> buf(new char[size]);
  auto r = fs.Read(fh, static_cast<uint64_t>(off), size, buf.get());
  if (!r.ok()) return ReplyErr(req, "read", Ino(ino), r.status());
  fuse_reply_buf(req, buf.get(), *r);
}

}  // namespace

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  if ((fi->flags & O_ACCMODE) != O_RDONLY && CtxOf(req).passthrough.Busy(ino)) {
    // Refused before a new version is started: nothing is written, committed or dropped.
    return ReplyErrno(req, "open", Ino(ino), EBUSY, BusyCause());
  }
  bool needs_store = false;
  const pid_t pid = fuse_req_ctx(req)->pid;
  auto r = FsOf(req).Open(ino, fi->flags, &needs_store, pid);
  if (!needs_store) return ReplyOpen(req, ino, fi, r);
  // libfuse reads only the fields of *fi when replying: a copy serves from another thread.
  WaitOnStore(
      req,
      [req, ino, pid, info = *fi]() mutable {
        ReplyOpen(req, ino, &info, FsOf(req).Open(ino, info.flags, nullptr, pid));
      },
      LateReply(req, "open", Ino(ino)));
}

void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  auto r = FsOf(req).CreateFile(parent, name, fi->flags, fuse_req_ctx(req)->pid);
  if (!r.ok()) return ReplyErr(req, "create", Named(parent, name), r.status());
  fi->fh = r->second.fh;
  fi->keep_cache = 0;
  if (!SetOpenMode(req, r->first.attr.ino, r->second, fi)) {
    return ReplyBusy(req, "create", r->first.attr.ino, r->second.fh);
  }
  fuse_entry_param e;
  std::memset(&e, 0, sizeof(e));
  e.ino = r->first.attr.ino;
  e.attr_timeout = e.entry_timeout = r->first.uncached() ? 0 : FsOf(req).entry_timeout_secs();
  FillStat(r->first.attr, &e.attr);
  if (fuse_reply_create(req, &e, fi) == -ENOENT) {
    ForgetOpen(req, r->second.fh);
    FsOf(req).Release(r->second.fh);
  }
}

void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  // Bytes still on their way from the store (a download, a streamed read) are waited for on a
  // store-wait thread, so reads of cached chunks always find a free FUSE worker.
  if (!FsOf(req).ReadWouldWait(fi->fh, static_cast<uint64_t>(off), size)) {
    return ServeRead(req, ino, fi->fh, size, off);
  }
  WaitOnStore(
      req, [req, ino, fh = fi->fh, size, off] { ServeRead(req, ino, fh, size, off); },
      LateReply(req, "read", Ino(ino)));
}

void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* data, size_t size, off_t off,
             fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  // A shared mapping's pages are written back by the kernel (writepage): not the writer's pid.
  const pid_t pid = fi->writepage ? 0 : fuse_req_ctx(req)->pid;
  auto r = FsOf(req).Write(fi->fh, static_cast<uint64_t>(off), data, size, pid);
  if (!r.ok()) return ReplyErr(req, "write", Ino(ino), r.status());
  fuse_reply_write(req, *r);
}

// Closes, fsyncs and releases of a file written here wait for its upload (or for the chunk's
// acceptance): on the store-write threads. Those of chunks opened for reading answer here, so a
// cached chunk's close never waits behind stuck uploads.
void OpFlush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  // The closing task's pid tells an explicit close from a dying process's implicit one.
  const pid_t pid = fuse_req_ctx(req)->pid;
  if (!FsOf(req).MayWaitOnStore(fi->fh)) {
    return ReplyStatus(req, "flush", Ino(ino), FsOf(req).Flush(fi->fh, pid));
  }
  WaitOnStoreWrite(
      req,
      [req, ino, pid, fh = fi->fh] {
        ReplyStatus(req, "flush", Ino(ino), FsOf(req).Flush(fh, pid));
      },
      LateReply(req, "flush", Ino(ino)));
}

void OpFsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  if (!FsOf(req).MayWaitOnStore(fi->fh)) {
    return ReplyStatus(req, "fsync", Ino(ino), FsOf(req).Fsync(fi->fh));
  }
  WaitOnStoreWrite(
      req, [req, ino, fh = fi->fh] { ReplyStatus(req, "fsync", Ino(ino), FsOf(req).Fsync(fh)); },
      LateReply(req, "fsync", Ino(ino)));
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  ForgetOpen(req, fi->fh);
  if (!FsOf(req).MayWaitOnStore(fi->fh)) {
    return ReplyStatus(req, "release", Ino(ino), FsOf(req).Release(fi->fh));
  }
  // Past its deadline in the queue the release still runs: the handle must go, and the kernel
  // does not wait for this reply (close() has returned).
  auto run = [req, ino, fh = fi->fh] {
    ReplyStatus(req, "release", Ino(ino), FsOf(req).Release(fh));
  };
  WaitOnStoreWrite(req, run, run);
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  auto r = FsOf(req).OpenDir(ino, fuse_req_ctx(req)->pid);
  if (!r.ok()) return ReplyErr(req, "opendir", Ino(ino), r.status());
  fi->fh = *r;
  if (fuse_reply_open(req, fi) == -ENOENT) FsOf(req).ReleaseDir(*r);
}

namespace {

void ServeReaddir(fuse_req_t req, fuse_ino_t ino, uint64_t fh, size_t size, off_t off) {
  std::unique_ptr<char[]> buf(new char[size]);
  size_t used = 0;
  Status st = FsOf(req).ReadDir(
      fh, static_cast<uint64_t>(off),
      [&](const DirEntry& e, uint64_t next_offset) {
        struct stat st;
        std::memset(&st, 0, sizeof(st));
        st.st_ino = e.ino;
        st.st_mode = e.is_dir ? S_IFDIR : S_IFREG;
        // The offset stored with an entry is where the next readdir continues.
        size_t n = fuse_add_direntry(req, buf.get() + used, size - used, e.name.c_str(), &st,
                                     static_cast<off_t>(next_offset));
        if (n > size - used) return false;
        used += n;
        return true;
      },
      ino, fuse_req_ctx(req)->pid);
  // Entries already gathered go out; the failure shows at the next readdir, which starts there.
  if (!st.ok() && used == 0) return ReplyErr(req, "readdir", Ino(ino), st);
  fuse_reply_buf(req, buf.get(), used);
}

}  // namespace

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  const ScopedDeadline deadline = RequestDeadline(req);
  // A page of a listing may have to come from the store: waited for on a store-wait thread,
  // within blocking_timeout (ETIMEDOUT past it).
  WaitOnStore(
      req, [req, ino, fh = fi->fh, size, off] { ServeReaddir(req, ino, fh, size, off); },
      LateReply(req, "readdir", Ino(ino)));
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  FsOf(req).ReleaseDir(fi->fh);
  fuse_reply_err(req, 0);
}

}  // namespace kvfs::fuse_internal
