#include "fs/fuse/fuse_request.h"

#include <cstring>

#include "fs/errno_map.h"

namespace kvfs::fuse_internal {

void FillStat(const FileAttr& a, struct stat* st) {
  std::memset(st, 0, sizeof(*st));
  st->st_ino = a.ino;
  st->st_mode = a.mode;
  st->st_nlink = a.nlink;
  st->st_uid = a.uid;
  st->st_gid = a.gid;
  st->st_size = static_cast<off_t>(a.size);
  st->st_blksize = 4096;
  st->st_blocks = static_cast<blkcnt_t>((a.size + 511) / 512);
  st->st_mtim.tv_sec = st->st_ctim.tv_sec = st->st_atim.tv_sec = a.mtime_sec;
}

void ReplyEntry(fuse_req_t req, const FileAttr& attr, double ttl_secs) {
  fuse_entry_param e;
  std::memset(&e, 0, sizeof(e));
  e.ino = attr.ino;
  e.generation = 0;
  e.attr_timeout = e.entry_timeout = ttl_secs < 0 ? FsOf(req).entry_timeout_secs() : ttl_secs;
  FillStat(attr, &e.attr);
  fuse_reply_entry(req, &e);
}

std::string Ino(fuse_ino_t ino) { return "inode " + std::to_string(ino); }
std::string Named(fuse_ino_t parent, const char* name) {
  return "'" + std::string(name) + "' in inode " + std::to_string(parent);
}

void ReplyErrno(fuse_req_t req, const char* op, const std::string& target, int err,
                const Status& cause) {
  LogFailedReply(&CtxOf(req).reply_log, op, target, err, cause);
  fuse_reply_err(req, err);
}

void ReplyErr(fuse_req_t req, const char* op, const std::string& target, const Status& st) {
  ReplyErrno(req, op, target, ToErrno(st), st);
}

void ReplyStatus(fuse_req_t req, const char* op, const std::string& target, const Status& st) {
  if (st.ok()) {
    fuse_reply_err(req, 0);
  } else {
    ReplyErr(req, op, target, st);
  }
}

ScopedDeadline RequestDeadline(fuse_req_t req) {
  const int64_t ms = static_cast<Context*>(fuse_req_userdata(req))->options.blocking_timeout_ms;
  return ScopedDeadline(ms, "blocking_timeout=" + (ms % 1000 == 0 ? std::to_string(ms / 1000) + "s"
                                                                  : std::to_string(ms) + "ms"));
}

std::function<void()> LateReply(fuse_req_t req, const char* op, std::string target) {
  return [req, op, target = std::move(target), source = ThreadDeadlineSource()] {
    ReplyErr(req, op, target,
             Status::DeadlineExceeded("waited for a thread longer than " + source));
  };
}

}  // namespace kvfs::fuse_internal
