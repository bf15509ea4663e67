#include "base/fd_reserve.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace kvfs {
namespace {

constexpr int kReserve = 32;

// The soft limit now (the daemon raises it at start-up; it is read at each call, one cheap
// system call, so that a later change counts). INT_MAX: no limit.
int SoftLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return INT_MAX;
  return static_cast<int>(std::min<rlim_t>(rl.rlim_cur, INT_MAX));
}

}  // namespace

int FdReserve() { return std::min(kReserve, SoftLimit() / 4); }

int KeepFdReserve(int fd) {
  if (fd < 0) return fd;
  const int limit = SoftLimit();
  if (limit == INT_MAX || fd < limit - std::min(kReserve, limit / 4)) return fd;
  close(fd);
  errno = EMFILE;
  return -1;
}

}  // namespace kvfs
