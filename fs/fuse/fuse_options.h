// The FUSE session's settings (FuseOptions) and the mount root's control attributes: what the
// daemon sets up and every request handler reads (fs/fuse/fuse_adapter.h runs the session with
// them, fs/fuse/fuse_request.h hands them to the handlers). A value type, read-only once the
// session starts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace kvfs {

struct FuseOptions {
  // Worker threads of the multithreaded session loop (fuse_threads; uploads block one worker
  // each).
  int max_threads = 16;
  // Let users other than the mounting one use the mount (needs user_allow_other for non-root).
  // Implies default_permissions: the kernel checks the reported owner and modes.
  bool allow_other = false;
  // Shown in /proc/mounts as the source ("kvfs" or e.g. "s3://bucket/prefix").
  std::string fsname = "kvfs";
  // Largest write request, and the kernel read-ahead window.
  uint32_t max_write = 1u << 20;
  uint32_t max_readahead = 1u << 20;
  // Largest read request (max_read). libfuse splices a cache hit only when header + data + 3 pages
  // fit in its pipe, and without CAP_SYS_RESOURCE a pipe cannot grow past
  // /proc/sys/fs/pipe-max-size (1 MiB by default): 1 MiB - 16 KiB keeps every read spliceable. 0:
  // the kernel's limit.
  uint32_t max_read = (1u << 20) - (16u << 10);
  // Requests the kernel keeps in flight in the background (read-ahead, async O_DIRECT pieces)
  // before it makes more wait; congested (readers throttled) at three quarters of it.
  uint32_t max_background = 64;
  // Extra "-o" options passed to libfuse as they are (e.g. "default_permissions").
  std::vector<std::string> extra_mount_options;
  bool debug = false;  // libfuse request tracing
  // Mounted read-only ("-o ro"; read_only).
  bool read_only = false;
  // Time limit of each request that may wait on the store (lookup, getattr, open, read, write,
  // flush, ...), retries included (blocking_timeout). 0: only the store's per-operation limits.
  int64_t blocking_timeout_ms = 30'000;
  // The daemon's statistics as text, served as the extended attribute "user.kvfs.stats" of the
  // mount root (getfattr -n user.kvfs.stats MOUNTPOINT, `kvfs stats`). Called on the FUSE worker
  // thread of each getxattr/listxattr of the root, so it must be thread-safe and quick. The
  // kernel caps an xattr value at 64 KiB (XATTR_SIZE_MAX). Unset: the root has no attributes.
  std::function<std::string()> stats_text;
  // Changes the daemon's log level while it runs: setxattr "user.kvfs.log_level" of the mount
  // root (`kvfs log-level MOUNTPOINT LEVEL`), allowed to root and the daemon's own user; a bad
  // level is EINVAL. getxattr reads the current level. Unset: the attribute does not exist.
  std::function<Status(const std::string&)> set_log_level;
  // Runs a step of the bounded tier's agent now and waits for it (its record, the removals it
  // learns, and a collector pass if this node holds the lease): setxattr "user.kvfs.tier_gc" of
  // the root (`kvfs gc MOUNTPOINT`), allowed to root and the daemon's own user. Unset (no bounded
  // tier): ENOTSUP.
  std::function<Status()> run_tier_gc;
  // Waits until every chunk accepted so far (write_back) is in the store, within blocking_timeout
  // (on a store-write thread): getxattr "user.kvfs.sync" of the root (`kvfs sync MOUNTPOINT`),
  // whose value lists those that are not, one "NAME<TAB>WHY" line each (empty: all stored).
  // Unset: the attribute does not exist.
  std::function<std::string()> sync_accepted;
};

// The extended attribute of the mount root that holds FuseOptions::stats_text.
inline constexpr char kStatsXattr[] = "user.kvfs.stats";
// The extended attribute of the mount root that reads and sets the log level.
inline constexpr char kLogLevelXattr[] = "user.kvfs.log_level";
// The extended attribute of the mount root whose reading waits for the accepted chunks
// (sync_accepted).
inline constexpr char kSyncXattr[] = "user.kvfs.sync";
// The extended attribute of the mount root whose setting runs a tier step (run_tier_gc).
inline constexpr char kTierGcXattr[] = "user.kvfs.tier_gc";

}  // namespace kvfs
