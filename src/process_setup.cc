#include "src/process_setup.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/log.h"

namespace kvfs {
namespace {

Status MakeAbsolute(const std::string& what, std::string* path) {
  if (path->empty() || (*path)[0] == '/') return Status::OK();
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(*path, ec);
  if (ec) {
    return Status::InvalidArgument(
        what + " " + *path + " is relative and the current directory is unknown: " + ec.message() +
        "; give an absolute path");
  }
  *path = abs.lexically_normal().string();
  // "mnt/" would become ".../mnt/": the same directory, spelt as the user would.
  while (path->size() > 1 && path->back() == '/') path->pop_back();
  return Status::OK();
}

}  // namespace

Status MakePathsAbsolute(CommandLine* cmd, KvfsConfig* config) {
  KVFS_RETURN_IF_ERROR(MakeAbsolute("mount point", &cmd->mountpoint));
  KVFS_RETURN_IF_ERROR(MakeAbsolute("cache_dir", &config->cache.dir));
  return MakeAbsolute("ca_bundle", &config->s3.ca_bundle);
}

uint64_t RaiseFileLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    LogWarn("kvfs: cannot read the open-file limit: {}", strerror(errno));
    return 0;
  }
  if (rl.rlim_cur < rl.rlim_max) {
    const rlim_t before = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
      LogWarn("kvfs: cannot raise the open-file limit from {} to {}: {}", before, rl.rlim_max,
              strerror(errno));
      rl.rlim_cur = before;
    }
  }
  LogDebug("kvfs: open-file limit {} (hard {})", rl.rlim_cur, rl.rlim_max);
  return rl.rlim_cur;
}

void ProtectMemory(bool core_dumps) {
  if (core_dumps) return;
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    LogWarn("kvfs: cannot turn off core dumps (PR_SET_DUMPABLE): {}", strerror(errno));
  }
}

}  // namespace kvfs
