#include "fs/process_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/posix_io.h"

namespace kvfs {

namespace {

// Reads a whole /proc file; nullopt with errno set when it cannot be opened (or read). Whole, not
// a fixed buffer: /proc/PID/status is ~1.5 KB for most tasks, but its Groups: line (before the Vm*
// lines StatusSaysExiting looks for) holds every supplementary group - up to 65,536 of them, about
// 720 KB - and a task's /proc/PID/task/TID/children lists all its children.
std::optional<std::string> ReadSmall(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  constexpr size_t kStep = 4096;
  std::string out;
  for (;;) {
    const size_t have = out.size();
    out.resize(have + kStep);
    auto n = ReadFull(fd, out.data() + have, kStep, path);
    if (!n.ok()) {
      close(fd);
      errno = n.status().sys_errno();
      return std::nullopt;
    }
    out.resize(have + *n);
    if (*n < kStep) break;  // ReadFull stops short only at the end of the file
  }
  close(fd);
  return out;
}

}  // namespace

std::optional<bool> StatusSaysExiting(std::string_view status) {
  size_t at = status.find("State:");
  if (at == std::string_view::npos) return std::nullopt;
  at += 6;
  while (at < status.size() && (status[at] == ' ' || status[at] == '\t')) ++at;
  if (at >= status.size()) return std::nullopt;
  const char state = status[at];
  if (state == 'Z' || state == 'X' || state == 'x') return true;
  // do_exit() drops the task's memory (exit_mm) before it closes its files (exit_files): a
  // user task without an mm is past the point of no return. /proc/PID/status shows the Vm*
  // lines only while there is an mm.
  return status.find("\nVmSize:") == std::string_view::npos;
}

bool ProcessIsExiting(pid_t pid) {
  if (pid <= 0) return false;
  // /proc/PID/status, not /proc/PID/stat: reading stat waits for a task that is in the middle of
  // an exec, and a task closes its O_CLOEXEC descriptors (FLUSH) in the middle of its exec:
  // the daemon would wait for the task, the task for the daemon's answer.
  auto status = ReadSmall("/proc/" + std::to_string(pid) + "/status");
  if (!status) return errno == ENOENT || errno == ESRCH;  // gone (reaped) by now
  return StatusSaysExiting(*status).value_or(false);
}

std::optional<bool> StatSaysKilled(std::string_view stat) {
  // "pid (comm) S ppid ...": comm may hold spaces and ')'. exit_code is field 52.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string_view::npos) return std::nullopt;
  std::string rest(stat.substr(close_paren + 1));
  const char* p = rest.c_str();
  long long value = 0;
  for (int field = 3; field <= 52; ++field) {
    while (*p == ' ') ++p;
    if (*p == '\0' || *p == '\n') return std::nullopt;
    if (field == 52) {
      char* end = nullptr;
      value = std::strtoll(p, &end, 10);
      if (end == p) return std::nullopt;
      break;
    }
    while (*p != ' ' && *p != '\0') ++p;
  }
  // The wait status: the low 7 bits are the signal that ended the task (0: it exited).
  return (value & 0x7f) != 0;
}

bool KilledBySignal(pid_t pid) {
  if (pid <= 0) return true;
  auto stat = ReadSmall("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  return StatSaysKilled(*stat).value_or(true);
}

std::optional<pid_t> StatusSaysTgid(std::string_view status) {
  size_t at = status.find("\nTgid:");
  if (at == std::string_view::npos) return std::nullopt;
  std::string rest(status.substr(at + 6, 32));
  char* end = nullptr;
  long v = std::strtol(rest.c_str(), &end, 10);
  if (end == rest.c_str() || v <= 0) return std::nullopt;
  return static_cast<pid_t>(v);
}

pid_t ThreadGroupOf(pid_t pid) {
  if (pid <= 0) return 0;
  auto status = ReadSmall("/proc/" + std::to_string(pid) + "/status");
  if (!status) return 0;
  return StatusSaysTgid(*status).value_or(0);
}

bool HoldsWritableFd(pid_t tgid, uint64_t ino, std::string_view name) {
  if (tgid <= 0) return false;
  const std::string fd_dir = "/proc/" + std::to_string(tgid) + "/fd";
  DIR* d = opendir(fd_dir.c_str());
  if (d == nullptr) return false;
  // readlink first (one system call per descriptor); only a descriptor whose path ends in the
  // file's name has its fdinfo read for the inode number and the access mode.
  const std::string suffix = "/" + std::string(name);
  bool found = false;
  char target[4096];
  while (!found) {
    struct dirent* e = readdir(d);
    if (e == nullptr) break;
    if (e->d_name[0] == '.') continue;
    ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof(target));
    if (n <= 0 || static_cast<size_t>(n) < suffix.size() || n == sizeof(target)) continue;
    std::string_view t(target, static_cast<size_t>(n));
    if (t.substr(t.size() - suffix.size()) != suffix) continue;
    auto info = ReadSmall("/proc/" + std::to_string(tgid) + "/fdinfo/" + e->d_name);
    if (!info) continue;
    size_t at = info->find("\nino:");
    size_t fl = info->find("flags:");
    if (at == std::string::npos || fl == std::string::npos) continue;
    const uint64_t fd_ino = std::strtoull(info->c_str() + at + 5, nullptr, 10);
    const unsigned long flags = std::strtoul(info->c_str() + fl + 6, nullptr, 8);
    found = fd_ino == ino && (flags & O_ACCMODE) != O_RDONLY;
  }
  closedir(d);
  return found;
}

pid_t DescendantHoldingWritableFd(pid_t tgid, uint64_t ino, std::string_view name) {
  if (tgid <= 0) return 0;
  // Breadth first from the process's children (of every thread: a child belongs to the thread
  // that forked it), at most kMaxVisited processes: engines fork few, and this runs once per
  // publishing close of a file the kernel wrote.
  constexpr size_t kMaxVisited = 64;
  std::vector<pid_t> queue{tgid};
  for (size_t next = 0; next < queue.size() && queue.size() <= kMaxVisited; ++next) {
    const std::string task_dir = "/proc/" + std::to_string(queue[next]) + "/task";
    DIR* d = opendir(task_dir.c_str());
    if (d == nullptr) continue;
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      auto kids = ReadSmall(task_dir + "/" + e->d_name + "/children");
      if (!kids) continue;
      const char* p = kids->c_str();
      char* end = nullptr;
      for (long c = std::strtol(p, &end, 10); end != p; c = std::strtol(p, &end, 10)) {
        p = end;
        if (c > 0) queue.push_back(static_cast<pid_t>(c));
      }
    }
    closedir(d);
  }
  for (size_t i = 1; i < queue.size() && i <= kMaxVisited; ++i) {
    if (HoldsWritableFd(queue[i], ino, name)) return queue[i];
  }
  return 0;
}

bool ProcMatchesOwnPid() {
  char buf[64];
  ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  return std::strtol(buf, nullptr, 10) == getpid();
}

}  // namespace kvfs
