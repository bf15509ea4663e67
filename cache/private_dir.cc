#include "cache/private_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "base/log.h"

namespace kvfs {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string ModeText(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// "uid 1000 (alice)": the number is what chown takes, the name what the reader recognises.
std::string UserText(uid_t uid) {
  std::string out = "uid " + std::to_string(uid);
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[1024];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found != nullptr) {
    out += std::string(" (") + found->pw_name + ")";
  }
  return out;
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The directory `dir` with every symlink in its existing part resolved; components that do not
// exist yet are appended as they are (they will be created, not followed).
Result<std::string> ResolveExistingPart(const std::filesystem::path& dir) {
  std::filesystem::path existing = dir;
  std::vector<std::string> missing;
  char* real = nullptr;
  while ((real = realpath(existing.c_str(), nullptr)) == nullptr) {
    if (errno != ENOENT || existing == existing.root_path()) {
      return Status::FromErrno(errno, "cannot resolve " + existing.string());
    }
    missing.push_back(existing.filename().string());
    existing = existing.parent_path();
  }
  std::filesystem::path out = real;
  free(real);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) out /= *it;
  return out.string();
}

// openat(O_NOFOLLOW) of a directory, made with `mode` first if missing. Says plainly when the
// name is a symlink or not a directory.
Result<int> OpenOrMakeDir(int at, const std::string& name, mode_t mode,
                          const std::string& display) {
  int fd = openat(at, name.c_str(), kDirFlags);
  if (fd < 0 && errno == ENOENT) {
    if (mkdirat(at, name.c_str(), mode) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "cannot create directory " + display);
    }
    fd = openat(at, name.c_str(), kDirFlags);
  }
  if (fd >= 0) return fd;
  const int err = errno;
  struct stat st;
  if ((err == ELOOP || err == ENOTDIR) &&
      fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return Status::InvalidArgument(
          display +
          " is a symbolic link: kvfs does not follow symlinks there (another user could point "
          "it anywhere); remove the link or give the real directory");
    }
    if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(display + " is not a directory");
  }
  return Status::FromErrno(err, "cannot open directory " + display);
}

// A directory above the private one: whoever can write to it can rename the private directory
// away and put their own in its place, so it must belong to root or to us and be writable only
// by its owner, unless sticky (then others cannot rename what is ours).
Status CheckAbove(int fd, const std::string& display, const std::string& target,
                  const std::string& setting) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + display);
  const std::string prefix = setting + " " + target + ": " + display + " (a directory above it) ";
  if (st.st_uid != 0 && st.st_uid != geteuid()) {
    return Status::PermissionDenied(prefix + "belongs to " + UserText(st.st_uid) +
                                    ", who could replace the " + setting + "; use a " + setting +
                                    " whose parent directories belong to root or to " +
                                    UserText(geteuid()));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return Status::PermissionDenied(
        prefix + "is writable by group or others without the sticky bit (mode " +
        ModeText(st.st_mode) + "), so another user could replace the " + setting +
        "; run 'chmod go-w " + display + "' or use another " + setting);
  }
  return Status::OK();
}

// The private directory itself: ours, and nobody else could have put anything in it.
Status CheckOwnDir(int fd, const std::string& display, const std::string& setting) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + display);
  if (st.st_uid != geteuid()) {
    return Status::PermissionDenied(
        setting + " " + display + " belongs to " + UserText(st.st_uid) + ", not to " +
        UserText(geteuid()) +
        " that kvfs runs as, so another user controls what is in it; remove it (kvfs then "
        "creates it) or choose another " +
        setting);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Status::PermissionDenied(
        setting + " " + display + " is writable by group or others (mode " + ModeText(st.st_mode) +
        "), so another user could have planted files or symlinks in it; remove it (kvfs then "
        "creates it), or check its content and run 'chmod 0700 " +
        display + "'");
  }
  // Entries hold other users' data: nobody else reads them either.
  if ((st.st_mode & 077) != 0 && fchmod(fd, 0700) != 0) {
    return Status::FromErrno(errno, "chmod 0700 " + display);
  }
  return Status::OK();
}

}  // namespace

Result<PrivateDir> PrivateDir::Open(const std::string& path, const std::string& setting) {
  if (path.empty()) return Status::InvalidArgument(setting + " is empty");
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return Status::InvalidArgument(setting + " " + path + ": " + ec.message());
  if (!abs.has_filename()) abs = abs.parent_path();  // "/a/b/" -> "/a/b"
  if (abs == abs.root_path()) {
    return Status::InvalidArgument(setting + " " + path + ": cannot be the root directory");
  }
  KVFS_ASSIGN_OR_RETURN(std::string above, ResolveExistingPart(abs.parent_path()));

  int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open /");
  PrivateDir walk(fd, "/", setting);  // closes whatever it holds on every return
  KVFS_RETURN_IF_ERROR(CheckAbove(walk.fd_, "/", path, setting));
  for (const auto& part : std::filesystem::path(above).relative_path()) {
    const std::string display = Join(walk.path_, part.string());
    KVFS_ASSIGN_OR_RETURN(int next, OpenOrMakeDir(walk.fd_, part.string(), 0755, display));
    walk = PrivateDir(next, display, setting);
    KVFS_RETURN_IF_ERROR(CheckAbove(walk.fd_, display, path, setting));
  }
  return walk.OpenSubdir(abs.filename().string());
}

PrivateDir::PrivateDir(PrivateDir&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), setting_(std::move(o.setting_)) {}

PrivateDir& PrivateDir::operator=(PrivateDir&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
    setting_ = std::move(o.setting_);
  }
  return *this;
}

PrivateDir::~PrivateDir() {
  if (fd_ >= 0) close(fd_);
}

Result<PrivateDir> PrivateDir::OpenSubdir(const std::string& name) const {
  const std::string display = Join(path_, name);
  KVFS_ASSIGN_OR_RETURN(int fd, OpenOrMakeDir(fd_, name, 0700, setting_ + " " + display));
  PrivateDir sub(fd, display, setting_);
  KVFS_RETURN_IF_ERROR(CheckOwnDir(sub.fd_, display, setting_));
  return sub;
}

Result<int> PrivateDir::OpenOwnFile(const std::string& name) const {
  const std::string display = Join(path_, name);
  // O_NONBLOCK: opening a planted FIFO or device must not hang or act; it is refused below.
  int fd = openat(fd_, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0 && errno == ELOOP) {
    return Status::InvalidArgument(display +
                                   " is a symbolic link (kvfs never makes one there): kvfs does "
                                   "not follow it; remove it");
  }
  if (fd < 0) return Status::FromErrno(errno, "cannot open " + display);
  struct stat st;
  std::string problem;
  if (fstat(fd, &st) != 0) {
    problem = std::string("cannot be examined: ") + strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "is not a regular file";
  } else if (st.st_uid != geteuid()) {
    problem = "belongs to " + UserText(st.st_uid) + ", not to " + UserText(geteuid());
  } else if (st.st_nlink != 1) {
    problem = "has " + std::to_string(st.st_nlink) +
              " hard links (kvfs never makes one; it may be another file)";
  }
  if (problem.empty()) return fd;
  close(fd);
  return Status::InvalidArgument(display + " " + problem + "; remove it");
}

std::vector<std::string> PrivateDir::List() const {
  std::vector<std::string> names;
  // A separate open file description: readdir's position is not shared with fd_.
  int fd = openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return names;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return names;
  }
  while (struct dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  closedir(d);
  return names;
}

size_t PrivateDir::RemoveOwnFiles(const std::function<bool(std::string_view)>& is_own) const {
  size_t removed = 0;
  size_t left = 0;
  std::string first_left;
  for (const std::string& name : List()) {
    struct stat st;
    if (is_own(name) && fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode)) {
      if (unlinkat(fd_, name.c_str(), 0) == 0) {
        removed++;
      } else {
        LogWarn("cannot remove {}: {}", Join(path_, name), strerror(errno));
      }
      continue;
    }
    if (left++ == 0) first_left = name;
  }
  if (left > 0) {
    LogWarn(
        "{}: left {} entr{} that kvfs did not create in place (e.g. '{}'); kvfs only "
        "removes its own files",
        path_, left, left == 1 ? "y" : "ies", first_left);
  }
  return removed;
}

}  // namespace kvfs
