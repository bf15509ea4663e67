#include "src/daemonize.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/posix_io.h"

namespace kvfs {
namespace {

// Protocol on the pipe: one byte 'R' (ready) or 'F' followed by the failure message.
void ParentWait(int rfd, pid_t child) {
  // The child writes a short message, then closes its end: read to end of file.
  std::string msg(64 << 10, '\0');
  Result<size_t> n = ReadFull(rfd, msg.data(), msg.size(), "daemon start-up pipe");
  msg.resize(n.ok() ? *n : 0);
  if (!msg.empty() && msg[0] == 'R') _exit(0);
  if (!msg.empty() && msg[0] == 'F') {
    std::fprintf(stderr, "%s\n", msg.c_str() + 1);
  } else {
    // The child died without a word (crash, kill): say so rather than exit silently.
    int status = 0;
    waitpid(child, &status, 0);
    std::fprintf(stderr, "kvfs: the daemon exited before the mount was ready (%s %d)\n",
                 WIFSIGNALED(status) ? "signal" : "status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
  _exit(1);
}

}  // namespace

void Daemonizer::Start() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("kvfs: pipe");
    std::exit(1);
  }
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("kvfs: fork");
    std::exit(1);
  }
  if (pid > 0) {
    close(fds[1]);
    ParentWait(fds[0], pid);
  }
  close(fds[0]);
  fd_ = fds[1];
  setsid();
  if (chdir("/") != 0) {
    // Harmless: the daemon uses absolute paths only.
  }
}

void Daemonizer::ReportReady() {
  if (fd_ < 0) return;
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    dup2(devnull, STDIN_FILENO);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    if (devnull > STDERR_FILENO) close(devnull);
  }
  ssize_t unused = write(fd_, "R", 1);
  (void)unused;
  close(fd_);
  fd_ = -1;
}

void Daemonizer::ReportFailure(const std::string& message) {
  if (fd_ < 0) return;
  std::string m = "F" + message;
  ssize_t unused = write(fd_, m.data(), m.size());
  (void)unused;
  close(fd_);
  fd_ = -1;
}

}  // namespace kvfs
