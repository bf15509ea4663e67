// PrivateDir: a directory that holds only kvfs's own files (the cache directory, its data/ and
// spool/), opened so that another local user cannot redirect what kvfs, often running as root,
// creates, truncates or deletes in it.
//
// Opening walks the path from "/" with openat(O_NOFOLLOW) one component at a time:
//  - the directories above it must belong to root or to the user kvfs runs as and must not be
//    writable by group or others unless sticky (/tmp, /dev/shm): otherwise someone else could
//    swap the directory later. Symlinks above it are resolved once, up front (realpath), and the
//    resolved path is what kvfs uses afterwards (path() below);
//  - the directory itself is never a symlink (O_NOFOLLOW), is created 0700 if missing, must be
//    owned by the user kvfs runs as and not writable by group or others (refused: someone else
//    could have planted files or symlinks in it); other bits for group/others are removed (0700).
// Everything under it is then reached relative to fd(): openat / mkdirat / unlinkat with
// O_NOFOLLOW or AT_SYMLINK_NOFOLLOW, so no symlink is followed anywhere under it.
// Refusals are kPermissionDenied (owner, mode) or kInvalidArgument (a symlink, not a directory),
// with a message naming the path, what is wrong and the fix.
//
// Thread-compatible: a PrivateDir owns its descriptor (move-only); its methods are const and
// only read it, so concurrent calls are fine once it is built.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace kvfs {

class PrivateDir {
 public:
  // Opens (creating it and missing parents if needed) the directory at `path`, checked as above.
  // `setting` names the setting the path comes from ("cache_dir"), for messages.
  static Result<PrivateDir> Open(const std::string& path, const std::string& setting);

  PrivateDir() = default;  // holds nothing: fd() is -1
  PrivateDir(PrivateDir&& o) noexcept;
  PrivateDir& operator=(PrivateDir&& o) noexcept;
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  ~PrivateDir();

  int fd() const { return fd_; }
  // The absolute path with symlinks above it resolved: use it, not the configured spelling.
  const std::string& path() const { return path_; }

  // The subdirectory `name` (a single component), created 0700 if missing, checked like Open.
  Result<PrivateDir> OpenSubdir(const std::string& name) const;

  // Opens or creates the regular file `name` (O_NOFOLLOW, mode 0600 when created) for reading
  // and writing. Refuses a symlink, anything but a regular file, a file owned by another user
  // and a file with more than one link (a hard link could point anywhere). Returns the fd.
  Result<int> OpenOwnFile(const std::string& name) const;

  // Names in the directory, without "." and "..".
  std::vector<std::string> List() const;

  // Unlinks the entries whose name `is_own` accepts and that are regular files (not followed,
  // not directories); leaves everything else and says so once in the log, naming the first.
  // Returns how many were removed.
  size_t RemoveOwnFiles(const std::function<bool(std::string_view)>& is_own) const;

 private:
  PrivateDir(int fd, std::string path, std::string setting)
      : fd_(fd), path_(std::move(path)), setting_(std::move(setting)) {}
  int fd_ = -1;
  std::string path_;
  std::string setting_;  // for messages: "cache_dir", "spool_dir"
};

}  // namespace kvfs
