#include "fs/process_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "base/posix_io.h"

namespace kvfs {

namespace {

constexpr unsigned long kPfExiting = 0x00000004;  // include/linux/sched.h

// Reads a small /proc file; nullopt with errno set when it cannot be opened (or read).
std::optional<std::string> ReadSmall(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  auto n = ReadFull(fd, buf, sizeof(buf), path);
  close(fd);
  if (!n.ok()) {
    errno = n.status().sys_errno();
    return std::nullopt;
  }
  return std::string(buf, *n);
}

}  // namespace

std::optional<bool> StatSaysExiting(std::string_view stat) {
  // "pid (comm) S ppid pgrp session tty_nr tpgid flags ...": comm may hold spaces and ')'.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string_view::npos) return std::nullopt;
  std::string rest(stat.substr(close_paren + 1));
  const char* p = rest.c_str();
  char* end = nullptr;
  while (*p == ' ') ++p;
  const char state = *p;
  if (state == '\0') return std::nullopt;
  if (state == 'Z' || state == 'X' || state == 'x') return true;
  ++p;
  for (int field = 4; field <= 8; ++field) {  // ppid, pgrp, session, tty_nr, tpgid
    std::strtol(p, &end, 10);
    if (end == p) return std::nullopt;
    p = end;
  }
  unsigned long flags = std::strtoul(p, &end, 10);
  if (end == p) return std::nullopt;
  return (flags & kPfExiting) != 0;
}

bool ProcessIsExiting(pid_t pid) {
  if (pid <= 0) return false;
  auto stat = ReadSmall("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return errno == ENOENT || errno == ESRCH;  // gone (reaped) by now
  return StatSaysExiting(*stat).value_or(false);
}

bool ProcMatchesOwnPid() {
  char buf[64];
  ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  return std::strtol(buf, nullptr, 10) == getpid();
}

}  // namespace kvfs
