#include "cache/cache_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <unordered_map>

#include "src/base/posix_io.h"

namespace kvfs {
namespace {

// mkdir -p, then force mode 0700 on the last component: entries hold other users' data.
Status MakePrivateDir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Status::IoError("cannot create cache directory " + path + ": " + ec.message());
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (!S_ISDIR(st.st_mode))
    return Status::InvalidArgument("cache_dir " + path + " is not a directory");
  if ((st.st_mode & 07777) != 0700 && chmod(path.c_str(), 0700) != 0) {
    return Status::FromErrno(errno, "chmod 0700 " + path);
  }
  return Status::OK();
}

std::vector<std::string> ListNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  closedir(d);
  return names;
}

}  // namespace

void EmptyDirectory(const std::string& dir) {
  for (const std::string& n : ListNames(dir)) {
    std::error_code ec;
    std::filesystem::remove_all(dir + "/" + n, ec);
  }
}

Result<std::unique_ptr<CacheDir>> CacheDir::Open(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("cache_dir is empty");
  KVFS_RETURN_IF_ERROR(MakePrivateDir(dir));
  const std::string lock_path = dir + "/lock";
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "open lock file " + lock_path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char pid[32] = {0};
    Result<size_t> n = PreadFull(fd, pid, sizeof(pid) - 1, 0, lock_path);
    close(fd);
    if (err == EWOULDBLOCK) {
      std::string holder = n.ok() && *n > 0 ? std::string(pid, *n) : "?";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      return Status::AlreadyExists("cache_dir " + dir + " is in use by another kvfs process (pid " +
                                   holder + " holds " + lock_path +
                                   "); give each mount its own cache_dir");
    }
    return Status::FromErrno(err, "lock " + lock_path);
  }
  std::string pid = std::to_string(getpid()) + "\n";
  Status pid_st = ftruncate(fd, 0) == 0 ? PwriteFull(fd, pid.data(), pid.size(), 0, lock_path)
                                        : Status::FromErrno(errno, "truncate " + lock_path);
  if (!pid_st.ok()) spdlog::warn("cache: cannot record pid: {}", pid_st.message());
  std::unique_ptr<CacheDir> cd(new CacheDir(dir, fd));
  KVFS_RETURN_IF_ERROR(MakePrivateDir(cd->data_dir()));
  KVFS_RETURN_IF_ERROR(MakePrivateDir(cd->spool_dir()));
  EmptyDirectory(cd->spool_dir());  // spool files of a crashed run were never adopted
  return cd;
}

CacheDir::~CacheDir() {
  if (lock_fd_ >= 0) close(lock_fd_);  // closing the last fd releases the flock
}

ScanResult CacheDir::Scan() {
  ScanResult out;
  std::unordered_map<std::string, size_t> by_key;  // key -> index in out.entries
  auto drop = [&](const std::string& name, const std::string& why) {
    spdlog::info("cache: dropping {}/{}: {}", data_dir(), name, why);
    std::error_code ec;
    std::filesystem::remove_all(DataPath(name), ec);
    out.dropped++;
  };
  for (const std::string& name : ListNames(data_dir())) {
    ParsedName pn;
    if (!ParseEntryFileName(name, &pn)) {
      drop(name, "not a cache entry");
      continue;
    }
    if (pn.gen > out.max_gen) out.max_gen = pn.gen;
    if (pn.fill) {
      drop(name, "partial fill");
      continue;
    }
    int fd = open(DataPath(name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      drop(name, strerror(errno));
      continue;
    }
    struct stat st;
    Result<EntryMeta> meta = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                                 ? ReadTrailer(fd, static_cast<uint64_t>(st.st_size))
                                 : Result<EntryMeta>(Status::DataLoss("not a regular file"));
    close(fd);
    if (!meta.ok()) {
      drop(name, meta.status().message());
      continue;
    }
    if (KeyHash(meta->key) != pn.key_hash) {
      drop(name, "key does not match the file name");
      continue;
    }
    ScannedEntry se{std::move(meta).value(), name, pn.key_hash, pn.gen};
    auto it = by_key.find(se.meta.key);
    if (it == by_key.end()) {
      by_key[se.meta.key] = out.entries.size();
      out.entries.push_back(std::move(se));
    } else {
      ScannedEntry& old = out.entries[it->second];
      if (se.gen > old.gen) std::swap(se, old);
      drop(se.file_name, "older copy of key " + se.meta.key);
    }
  }
  return out;
}

}  // namespace kvfs
