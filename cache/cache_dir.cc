#include "cache/cache_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "base/fd_reserve.h"
#include "base/log.h"
#include "base/posix_io.h"

namespace kvfs {

bool IsSpoolFileName(std::string_view name) {
  constexpr std::string_view kPrefix = "spool-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  // <pid>-<n>: two runs of digits around one '-'.
  const size_t dash = name.find('-');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return dash != std::string_view::npos && digits(name.substr(0, dash)) &&
         digits(name.substr(dash + 1));
}

std::string SpoolSealName(std::string_view spool_name) {
  return std::string(spool_name) + std::string(kSpoolSealSuffix);
}

namespace {

// What an earlier run left in a spool directory that nobody will use: a spool file without its
// seal (a write never acknowledged, or one whose upload ended), a seal without its spool file
// (removed after the upload, the crash came in between) and a seal half written. A sealed spool
// file and its seal stay for the filesystem's recovery (fs/spool_seal.h).
size_t RemoveUnsealedSpoolFiles(const PrivateDir& spool) {
  const std::vector<std::string> listed = spool.List();
  const std::unordered_set<std::string> names(listed.begin(), listed.end());
  const size_t suffix = kSpoolSealSuffix.size();
  return spool.RemoveOwnFiles([&](std::string_view name) {
    if (IsSpoolFileName(name)) return names.count(SpoolSealName(name)) == 0;
    const size_t tmp = name.rfind(kSpoolSealTempSuffix);
    if (tmp != std::string_view::npos && tmp + kSpoolSealTempSuffix.size() == name.size()) {
      return IsSpoolFileName(name.substr(0, tmp));
    }
    if (name.size() > suffix && name.substr(name.size() - suffix) == kSpoolSealSuffix) {
      const std::string_view of = name.substr(0, name.size() - suffix);
      return IsSpoolFileName(of) && names.count(std::string(of)) == 0;
    }
    return false;
  });
}

}  // namespace

Status PrepareSpoolDir(const std::string& dir, const std::string& setting) {
  KVFS_ASSIGN_OR_RETURN(PrivateDir spool, PrivateDir::Open(dir, setting));
  RemoveUnsealedSpoolFiles(spool);
  return Status::OK();
}

Result<std::unique_ptr<CacheDir>> CacheDir::Open(const std::string& dir) {
  KVFS_ASSIGN_OR_RETURN(PrivateDir root, PrivateDir::Open(dir, "cache_dir"));
  KVFS_ASSIGN_OR_RETURN(int fd, root.OpenOwnFile("lock"));
  const std::string lock_path = root.path() + "/lock";
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
  // Safe to truncate: fd is kvfs's own regular file with one link (OpenOwnFile), not a symlink.
  std::string pid = std::to_string(getpid()) + "\n";
  Status pid_st = ftruncate(fd, 0) == 0 ? PwriteFull(fd, pid.data(), pid.size(), 0, lock_path)
                                        : Status::FromErrno(errno, "truncate " + lock_path);
  if (!pid_st.ok()) LogWarn("cache: cannot record pid: {}", pid_st.message());
  std::unique_ptr<CacheDir> cd(new CacheDir(std::move(root), fd));  // closes fd on every return
  KVFS_ASSIGN_OR_RETURN(cd->data_, cd->root_.OpenSubdir("data"));
  KVFS_ASSIGN_OR_RETURN(PrivateDir spool, cd->root_.OpenSubdir("spool"));
  RemoveUnsealedSpoolFiles(spool);  // unsealed spool files of a crashed run were never acknowledged
  return cd;
}

int CacheDir::OpenEntry(const std::string& name, int flags, mode_t mode) const {
  // Readers decide how many entries are open at once: never the daemon's last descriptors.
  return KeepFdReserve(openat(data_.fd(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode));
}

int CacheDir::UnlinkEntry(const std::string& name) const {
  return unlinkat(data_.fd(), name.c_str(), 0);  // removes the name, never what a link names
}

int CacheDir::RenameEntry(const std::string& from, const std::string& to) const {
  return renameat(data_.fd(), from.c_str(), data_.fd(), to.c_str());
}

int CacheDir::RenameIntoData(const std::string& path, const std::string& to) const {
  return renameat(AT_FDCWD, path.c_str(), data_.fd(), to.c_str());
}

CacheDir::~CacheDir() {
  if (lock_fd_ >= 0) close(lock_fd_);  // closing the last fd releases the flock
}

ScanResult CacheDir::Scan() {
  ScanResult out;
  std::unordered_map<std::string, size_t> by_key;  // key -> index in out.entries
  const int dfd = data_.fd();
  // Only kvfs's own names reach here, and unlinkat removes a name, never what a link points to.
  auto drop = [&](const std::string& name, const std::string& why) {
    LogInfo("cache: dropping {}/{}: {}", data_dir(), name, why);
    if (unlinkat(dfd, name.c_str(), 0) != 0 && errno != ENOENT) {
      LogWarn("cache: cannot remove {}: {}", DataPath(name), strerror(errno));
    }
    out.dropped++;
  };
  std::string first_foreign;
  for (const std::string& name : data_.List()) {
    ParsedName pn;
    struct stat st;
    if (!ParseEntryFileName(name, &pn) ||
        fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      if (out.foreign++ == 0) first_foreign = name;
      continue;
    }
    if (pn.gen > out.max_gen) out.max_gen = pn.gen;
    if (pn.fill) {
      drop(name, "partial fill");
      continue;
    }
    int fd = openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT) {
      // Out of descriptors or memory, or no permission: nothing is wrong with the entry. It is
      // left in place (not indexed this run; the next start takes it back).
      LogWarn("cache: cannot open {} (kept, not recovered): {}", DataPath(name), strerror(errno));
      out.unreadable++;
      continue;
    }
    if (fd < 0) {
      drop(name, strerror(errno));
      continue;
    }
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
  if (out.foreign > 0) {
    LogWarn(
        "cache: left {} entr{} in {} that kvfs did not create in place (e.g. '{}'); "
        "kvfs only removes its own files",
        out.foreign, out.foreign == 1 ? "y" : "ies", data_dir(), first_foreign);
  }
  return out;
}

}  // namespace kvfs
