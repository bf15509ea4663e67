#include "fs/fuse/passthrough_table.h"

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace kvfs {

PassthroughTable::Mode PassthroughTable::Open(uint64_t ino, uint64_t fh, int fd,
                                              const std::string& version, bool direct_io,
                                              const RegisterFn& register_fd) {
  MutexLock l(&mu_);
  Inode& in = inodes_[ino];
  if (in.passthrough > 0 && (version.empty() || version != in.version)) {
    return Mode{0, direct_io, /*busy=*/true};  // nothing recorded: the open is not made
  }
  Opened& op = opens_[fh];
  op.ino = ino;
  if (enabled_ && fd >= 0 && !version.empty() && in.cached == 0 && in.backing_id == 0) {
    errno = 0;
    const int32_t id = register_fd(fd);
    if (id > 0) {
      in.backing_id = id;
      in.version = version;
    } else {
      enabled_ = false;
      const int err = errno != 0 ? errno : EINVAL;
      // The two refusals a container meets: EPERM without CAP_SYS_ADMIN, which the kernel asks
      // of backing files; ELOOP for a backing file on a stacked file system (overlayfs: a
      // container's own root), one level too deep under FUSE.
      const char* why = err == EPERM   ? " (the daemon lacks CAP_SYS_ADMIN)"
                        : err == ELOOP ? " (the cache directory is on a stacked file system such "
                                         "as overlayfs, e.g. a container's root: put cache_dir "
                                         "on a host directory or tmpfs)"
                                       : "";
      LogWarn(
          "kvfs: FUSE passthrough refused by the kernel ({}){}: cache hits are served by the "
          "daemon from now on",
          std::strerror(err), why);
    }
  }
  // The inode's backing file holds this open's bytes (the version was checked above).
  if (in.backing_id > 0) {
    in.passthrough++;
    op.passthrough = true;
    return Mode{in.backing_id, false};
  }
  if (!direct_io) {
    in.cached++;
    op.cached = true;
  }
  return Mode{0, direct_io};
}

int32_t PassthroughTable::Release(uint64_t fh) {
  MutexLock l(&mu_);
  auto it = opens_.find(fh);
  if (it == opens_.end()) return 0;
  const Opened op = it->second;
  opens_.erase(it);
  auto in = inodes_.find(op.ino);
  if (in == inodes_.end()) return 0;
  int32_t drop = 0;
  if (op.cached) in->second.cached--;
  if (op.passthrough && --in->second.passthrough == 0) {
    drop = in->second.backing_id;
    in->second.backing_id = 0;
    in->second.version.clear();
  }
  if (in->second.passthrough == 0 && in->second.cached == 0) inodes_.erase(in);
  return drop;
}

void PassthroughTable::Enable() {
  MutexLock l(&mu_);
  enabled_ = true;
}

bool PassthroughTable::Busy(uint64_t ino) const {
  MutexLock l(&mu_);
  auto it = inodes_.find(ino);
  // A spool's opens (passthrough_writes) may be joined by a writer of that spool: the filesystem
  // refuses a new version itself (EBUSY), and Open() any other backing.
  return it != inodes_.end() && it->second.passthrough > 0 &&
         it->second.version.rfind(kSpoolVersionPrefix, 0) != 0;
}

bool PassthroughTable::enabled() const {
  MutexLock l(&mu_);
  return enabled_;
}

}  // namespace kvfs
