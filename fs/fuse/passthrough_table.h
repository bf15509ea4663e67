// PassthroughTable: which open files the kernel reads itself (FUSE passthrough, kernel 6.9+,
// libfuse 3.16+), and the kernel's rules that decide it.
//
// A hit - a complete, pinned cache entry - can be handed to the kernel as the open's backing file:
// the engine's reads then go straight to the cache file, with no request, copy or thread of the
// daemon. The kernel allows that only in a consistent state per inode (fs/fuse/iomode.c, 6.9+):
// while an inode has a passthrough open, every open of it must be a passthrough open of the same
// backing file, and a passthrough open is refused while the inode has an open using the kernel's
// page cache ("cached io mode": neither FOPEN_DIRECT_IO nor passthrough); an open that breaks
// either rule fails with EIO in the caller's open(2), after the daemon has replied. So the daemon
// keeps per inode the backing file it registered and how many opens use each mode, and decides
// every open of a regular file here:
//  - a hit with no page-cache open of its inode becomes a passthrough open of the inode's backing
//    file (registered at its first such open, dropped after its last release);
//  - another read of the same object version shares that backing file, even when it could not
//    open the cache entry itself (short of descriptors);
//  - any other open of an inode with passthrough opens - a write, or a newer version of the
//    chunk - is refused with EBUSY by the daemon (clearly, instead of the kernel's EIO) until
//    those opens are closed; a hit beside page-cache opens is served by the daemon.
// The kernel drops its state at close(2), before the release reaches the daemon, so the daemon's
// view is never less strict than the kernel's.
//
// Pure bookkeeping: the kernel calls (register / drop a backing file) are the caller's, so the
// rules are unit-tested without a mount. Thread-safe: one mutex, held across the registration
// ioctl (a quick call) so that two opens of an inode decide one after the other.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "base/mutex.h"
#include "fs/fs_types.h"

namespace kvfs {

class PassthroughTable {
 public:
  // Off until the kernel grants passthrough to the session (FUSE_CAP_PASSTHROUGH at INIT).
  void Enable() EXCLUDES(mu_);

  struct Mode {
    int32_t backing_id = 0;  // > 0: FOPEN_PASSTHROUGH with this backing file
    bool direct_io = false;  // FOPEN_DIRECT_IO
    bool busy = false;       // refuse the open (EBUSY): the inode is open for passthrough
  };
  // Registers a file with the kernel as a backing file: its id (> 0), or 0 when refused (errno).
  using RegisterFn = std::function<int32_t(int fd)>;

  // Decides the open `fh` of inode `ino`. `fd`: a file whose bytes are the open's for its whole
  // life (a pinned cache entry), or -1; `version`: the object version it reads (empty: a write or
  // a local file); `direct_io`: what the filesystem asked for. A refused registration turns
  // passthrough off for the session (logged once).
  Mode Open(uint64_t ino, uint64_t fh, int fd, const std::string& version, bool direct_io,
            const RegisterFn& register_fd) EXCLUDES(mu_);
  // The open `fh` is released (or its open reply failed). Returns the backing id to drop
  // (FUSE_DEV_IOC_BACKING_CLOSE) when this was the inode's last passthrough open, else 0.
  int32_t Release(uint64_t fh) EXCLUDES(mu_);

  // Whether `ino` has passthrough opens of a cache entry: an open for writing is refused (EBUSY)
  // before the filesystem starts a new version of it. Opens of a spool being written by the kernel
  // (versions starting with kSpoolVersionPrefix, fs/fs_types.h) are not: a writer may join them.
  bool Busy(uint64_t ino) const EXCLUDES(mu_);

  bool enabled() const EXCLUDES(mu_);

 private:
  struct Inode {
    int32_t backing_id = 0;
    std::string version;       // of the object the backing file holds
    uint64_t passthrough = 0;  // opens using backing_id
    uint64_t cached = 0;       // opens in the kernel's cached io mode
  };
  struct Opened {
    uint64_t ino = 0;
    bool passthrough = false;
    bool cached = false;
  };

  mutable Mutex mu_;
  bool enabled_ GUARDED_BY(mu_) = false;
  std::unordered_map<uint64_t, Inode> inodes_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Opened> opens_ GUARDED_BY(mu_);  // by fh
};

}  // namespace kvfs
