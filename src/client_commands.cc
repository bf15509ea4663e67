#include "src/client_commands.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "src/base/mutex.h"
#include "src/base/posix_io.h"

namespace kvfs {
namespace {

constexpr const char* kStatsXattr = "user.kvfs.stats";

// Reads a whole file and discards it; the read pulls it into the daemon's cache.
bool ReadThrough(const std::string& path, uint64_t* bytes, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return false;
  }
  std::vector<char> buf(4u << 20);
  for (;;) {
    Result<size_t> n = ReadFull(fd, buf.data(), buf.size(), path);
    if (!n.ok()) {
      *error = std::strerror(n.status().sys_errno());
      close(fd);
      return false;
    }
    *bytes += *n;
    if (*n < buf.size()) break;  // end of file
  }
  close(fd);
  return true;
}

}  // namespace

int RunStats(const CommandLine& cmd) {
  std::vector<char> buf(64 << 10);
  ssize_t n = getxattr(cmd.mountpoint.c_str(), kStatsXattr, buf.data(), buf.size());
  if (n < 0) {
    int err = errno;
    std::fprintf(stderr, "kvfs stats: %s: %s\n", cmd.mountpoint.c_str(),
                 err == ENODATA || err == ENOTSUP ? "not a kvfs mount point" : std::strerror(err));
    return 1;
  }
  std::fwrite(buf.data(), 1, static_cast<size_t>(n), stdout);
  return 0;
}

int RunWarm(const CommandLine& cmd) {
  std::vector<std::string> names;
  for (const auto& n : cmd.names) {
    if (n == "-") {
      std::string line;
      while (std::getline(std::cin, line)) {
        if (!line.empty()) names.push_back(line);
      }
    } else {
      names.push_back(n);
    }
  }
  const size_t total = names.size();
  std::atomic<size_t> next{0}, done{0}, failed{0};
  std::atomic<uint64_t> bytes{0};
  Mutex out_mu;  // serialises the progress line and error messages
  const bool tty = isatty(STDERR_FILENO) != 0;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < total;) {
      uint64_t got = 0;
      std::string error;
      bool ok = ReadThrough(cmd.mountpoint + "/" + names[i], &got, &error);
      bytes += got;
      MutexLock l(&out_mu);
      if (!ok) {
        ++failed;
        std::fprintf(stderr, "%skvfs warm: %s: %s\n", tty ? "\r\033[K" : "", names[i].c_str(),
                     error.c_str());
      }
      size_t d = ++done;
      if (tty) {
        std::fprintf(stderr, "\r[%-30s] %zu/%zu chunks, %.1f MiB",
                     std::string(total ? 30 * d / total : 30, '#').c_str(), d, total,
                     static_cast<double>(bytes.load()) / (1 << 20));
      }
    }
  };
  // A few chunks at once: each read already fans out into parallel ranged GETs in the daemon.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (tty) std::fputc('\n', stderr);
  std::printf("kvfs warm: %zu of %zu chunks in the cache (%.1f MiB read), %zu failed\n",
              total - failed.load(), total, static_cast<double>(bytes.load()) / (1 << 20),
              failed.load());
  return failed.load() == 0 ? 0 : 1;
}

}  // namespace kvfs
