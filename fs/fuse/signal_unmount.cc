#include "fs/fuse/signal_unmount.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/log.h"

namespace kvfs {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr char kStop = 'q';  // the destructor: no signal came

// A signal handler sees only globals; SignalUnmount is one per process.
int g_write_fd = -1;
struct sigaction g_previous[NSIG];

void OnSignal(int sig) {
  const int saved = errno;
  const char c = static_cast<char>(sig);
  ssize_t n = write(g_write_fd, &c, 1);  // async-signal-safe; the pipe never fills (one byte)
  (void)n;
  errno = saved;
  const struct sigaction& prev = g_previous[sig];
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) prev.sa_handler(sig);
}

}  // namespace

SignalUnmount::SignalUnmount(std::string mountpoint) : mountpoint_(std::move(mountpoint)) {
  // The parent's real path, not the mount's own: resolving the mount root would ask this
  // daemon, whose session loop has not started yet.
  const size_t slash = mountpoint_.find_last_not_of('/') == std::string::npos
                           ? std::string::npos
                           : mountpoint_.rfind('/', mountpoint_.find_last_not_of('/'));
  const std::string parent = slash == std::string::npos ? "." : mountpoint_.substr(0, slash + 1);
  std::string base = mountpoint_.substr(slash == std::string::npos ? 0 : slash + 1);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (char* real = realpath(parent.c_str(), nullptr)) {
    canonical_ = std::string(real) + (std::string(real) == "/" ? "" : "/") + base;
    free(real);
  }
  if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    LogWarn("kvfs: no early unmount on SIGTERM (pipe: {})", std::strerror(errno));
    return;
  }
  // The reading end blocks; the handler's end must not.
  fcntl(pipe_[0], F_SETFL, fcntl(pipe_[0], F_GETFL) & ~O_NONBLOCK);
  g_write_fd = pipe_[1];
  for (int sig : kSignals) {
    struct sigaction sa = {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, &g_previous[sig]);
  }
  thread_ = std::thread([this] { Run(); });
}

SignalUnmount::~SignalUnmount() { Stop(); }

void SignalUnmount::Stop() {
  if (!thread_.joinable()) return;
  for (int sig : kSignals) sigaction(sig, &g_previous[sig], nullptr);
  const char c = kStop;
  ssize_t n = write(pipe_[1], &c, 1);
  (void)n;
  thread_.join();
  g_write_fd = -1;
  close(pipe_[0]);
  close(pipe_[1]);
}

bool SignalUnmount::SessionMayUnmount() const {
  if (!detached_.load()) return true;
  if (canonical_.empty()) return false;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string f[5];
    for (auto& x : f) fields >> x;
    if (f[4] == canonical_) return false;  // (a path with spaces shows escaped: not matched)
  }
  return true;  // nothing there: the session's unmount fails harmlessly and frees its state
}

void SignalUnmount::Run() {
  char c = 0;
  while (true) {
    const ssize_t n = read(pipe_[0], &c, 1);
    if (n == 1) break;
    if (n < 0 && errno == EINTR) continue;
    return;
  }
  if (c == kStop) return;
  LogInfo("kvfs: signal {}: {} detached now; requests already running still complete",
          static_cast<int>(c), mountpoint_);
  int rc = -1;
  if (geteuid() == 0) {
    rc = umount2(mountpoint_.c_str(), MNT_DETACH);
  } else {
    const char* argv[] = {"fusermount3", "-u", "-z", "-q", mountpoint_.c_str(), nullptr};
    pid_t pid;
    if (posix_spawnp(&pid, "fusermount3", nullptr, nullptr, const_cast<char* const*>(argv),
                     environ) == 0) {
      int st = 0;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      rc = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
    }
  }
  if (rc == 0) {
    detached_.store(true);
  } else {
    LogWarn("kvfs: could not detach {} at once ({}): it goes when running requests end",
            mountpoint_, std::strerror(errno));
  }
}

}  // namespace kvfs
