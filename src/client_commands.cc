#include "src/client_commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/posix_io.h"
#include "fs/fuse/fuse_options.h"

namespace kvfs {
namespace {

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    u++;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string HumanDuration(double secs) {
  char buf[32];
  const long s = static_cast<long>(secs + 0.5);
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%ldh%02ldm", s / 3600, s / 60 % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%ldm%02lds", s / 60, s % 60);
  }
  return buf;
}

std::string LocalTime(time_t t) {
  char buf[32];
  struct tm tm;
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

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

int RunSync(const CommandLine& cmd) {
  // The daemon answers with the chunks it could not store, one "NAME<TAB>WHY" line each.
  std::vector<char> buf(64 << 10);
  const ssize_t n = getxattr(cmd.mountpoint.c_str(), kSyncXattr, buf.data(), buf.size());
  if (n < 0) {
    const int err = errno;
    std::fprintf(stderr, "kvfs sync: %s: %s\n", cmd.mountpoint.c_str(),
                 err == ENODATA || err == ENOTSUP ? "not a kvfs mount point" : std::strerror(err));
    return 1;
  }
  if (n == 0) return 0;
  std::istringstream lines(std::string(buf.data(), static_cast<size_t>(n)));
  for (std::string line; std::getline(lines, line);) {
    const size_t tab = line.find('\t');
    std::fprintf(stderr, "kvfs sync: %s: '%s' is not in the store: %s\n", cmd.mountpoint.c_str(),
                 line.substr(0, tab).c_str(),
                 tab == std::string::npos ? "" : line.substr(tab + 1).c_str());
  }
  return 1;
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
  // The bar is for people watching a terminal; scripts (stderr redirected) get errors and the
  // summary only.
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto start = std::chrono::steady_clock::now();
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
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double b = static_cast<double>(bytes.load());
        // ETA from chunks: engines' chunks of one model have one size.
        const double eta = d ? secs * static_cast<double>(total - d) / static_cast<double>(d) : 0;
        std::fprintf(stderr, "\r\033[K[%-30s] %zu/%zu chunks, %s, %s/s, ETA %s",
                     std::string(total ? 30 * d / total : 30, '#').c_str(), d, total,
                     HumanBytes(b).c_str(), HumanBytes(secs > 0 ? b / secs : 0).c_str(),
                     HumanDuration(eta).c_str());
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

int RunLogLevel(const CommandLine& cmd) {
  const char* path = cmd.mountpoint.c_str();
  if (!cmd.names.empty()) {
    const std::string& level = cmd.names[0];
    if (setxattr(path, kLogLevelXattr, level.data(), level.size(), 0) != 0) {
      const int err = errno;
      std::fprintf(stderr, "kvfs log-level: %s: %s\n", path,
                   err == EINVAL ? ("'" + level +
                                    "' is not one of: trace, debug, info, warn, error, critical, "
                                    "off")
                                       .c_str()
                   : err == ENOTSUP ? "not a kvfs mount point"
                   : err == EPERM   ? "only root and the daemon's user may change its log level"
                                    : std::strerror(err));
      return 1;
    }
  }
  char buf[64];
  const ssize_t n = getxattr(path, kLogLevelXattr, buf, sizeof(buf));
  if (n < 0) {
    const int err = errno;
    std::fprintf(stderr, "kvfs log-level: %s: %s\n", path,
                 err == ENODATA || err == ENOTSUP ? "not a kvfs mount point" : std::strerror(err));
    return 1;
  }
  std::printf("%.*s\n", static_cast<int>(n), buf);
  return 0;
}

namespace {

struct DuTotals {
  uint64_t files = 0;
  uint64_t bytes = 0;
  time_t oldest = 0;
  time_t newest = 0;
  void Add(const struct stat& st) {
    files++;
    bytes += static_cast<uint64_t>(st.st_size);
    oldest = files == 1 ? st.st_mtime : std::min(oldest, st.st_mtime);
    newest = std::max(newest, st.st_mtime);
  }
  void Add(const DuTotals& o) {
    if (o.files == 0) return;
    oldest = files == 0 ? o.oldest : std::min(oldest, o.oldest);
    newest = std::max(newest, o.newest);
    files += o.files;
    bytes += o.bytes;
  }
};

// A name as it may be shown on a terminal: names come from the store, which anyone with write
// access fills, and an escape sequence in one would drive the terminal. Control characters
// (and backslash, so the form is unambiguous) become \xHH.
std::string TerminalSafe(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Sums the regular files under `dir` (recursively); errors name the path.
bool SumTree(const std::filesystem::path& dir, DuTotals* t) {
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    struct stat st;
    if (lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) t->Add(st);
  }
  if (ec) {
    std::fprintf(stderr, "kvfs du: %s: %s\n", TerminalSafe(dir).c_str(), ec.message().c_str());
    return false;
  }
  return true;
}

void PrintDuRow(const std::string& name, const DuTotals& t) {
  std::printf("%-32s %10llu %12s %20s %20s\n", TerminalSafe(name).c_str(),
              static_cast<unsigned long long>(t.files), HumanBytes(t.bytes).c_str(),
              t.files ? LocalTime(t.oldest).c_str() : "-",
              t.files ? LocalTime(t.newest).c_str() : "-");
}

}  // namespace

// With a bounded tier: the tier's bytes against its capacity, as the collector last counted them
// (every node's chunks, not only those under the listed directories).
static void PrintTierLine(const std::string& mountpoint) {
  std::vector<char> buf(64 << 10);
  const ssize_t n = getxattr(mountpoint.c_str(), kStatsXattr, buf.data(), buf.size());
  if (n <= 0) return;
  std::map<std::string, std::string> v;
  std::istringstream in(std::string(buf.data(), static_cast<size_t>(n)));
  std::string name, value;
  while (in >> name >> value) v[name] = value;
  if (!v.contains("kvfs_tier_capacity_bytes")) return;
  const double bytes = std::stod(v["kvfs_tier_bytes"]);
  const double cap = std::stod(v["kvfs_tier_capacity_bytes"]);
  std::printf("tier: %s bytes in %s chunks", v["kvfs_tier_bytes"].c_str(),
              v["kvfs_tier_chunks"].c_str());
  if (cap > 0)
    std::printf(" of capacity %s (%.1f%%)", v["kvfs_tier_capacity_bytes"].c_str(),
                100 * bytes / cap);
  std::printf("; collector: %s (lease epoch %s)\n",
              v["kvfs_tier_is_collector"] == "1" ? "this node" : "another node",
              v["kvfs_tier_lease_epoch"].c_str());
}

int RunDu(const CommandLine& cmd) {
  namespace fs = std::filesystem;
  const fs::path root(cmd.mountpoint);
  // Without DIRs: one row per top-level directory (engines keep one per model or layer group)
  // and one for the chunks at the top.
  std::vector<std::string> dirs = cmd.names;
  DuTotals top;
  bool ok = true;
  if (dirs.empty()) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      struct stat st;
      if (lstat(it->path().c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) dirs.push_back(it->path().filename());
      if (S_ISREG(st.st_mode)) top.Add(st);
    }
    if (ec) {
      std::fprintf(stderr, "kvfs du: %s: %s\n", root.c_str(), ec.message().c_str());
      return 1;
    }
    std::sort(dirs.begin(), dirs.end());
  }
  std::printf("%-32s %10s %12s %20s %20s\n", "DIR", "FILES", "BYTES", "OLDEST", "NEWEST");
  DuTotals all = top;
  if (cmd.names.empty() && top.files > 0) PrintDuRow(".", top);
  for (const std::string& d : dirs) {
    DuTotals t;
    ok = SumTree(root / d, &t) && ok;
    PrintDuRow(d, t);
    all.Add(t);
  }
  PrintDuRow("total", all);
  PrintTierLine(cmd.mountpoint);
  return ok ? 0 : 1;
}

}  // namespace kvfs
