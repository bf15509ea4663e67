// CacheDir: the cache directory on disk. Creates it private (0700), locks it so that a second
// daemon cannot use it at the same time, and scans it at start (restart recovery).
//
// Layout:  <dir>/lock    flock'ed by the owning process (holds its pid, for the error message)
//          <dir>/data/   entry files (see entry_format.h)
//          <dir>/spool/  scratch space for the filesystem's write spool, on the same filesystem
//                        as data/ so a finished spool file can be renamed into the cache; the
//                        unsealed spool files of an earlier run are removed at start, sealed
//                        ones (accepted for write-back, not yet uploaded) kept for the mount
//
// kvfs often runs as root in a directory such as /dev/shm/kvfs that any user could have created
// first, so the directory is opened as a PrivateDir (private_dir.h): no symlink is followed
// anywhere under it, one owned by another user or writable by group/others is refused with a
// message naming it and the fix, and `lock` is opened with O_NOFOLLOW and checked before it is
// truncated. kvfs deletes only what it created: regular files named like its entries in data/
// (see entry_format.h) and like its spool files in spool/; anything else is left and logged.
//
// Thread-compatible: Open and Scan run before the cache is shared. The entry-file functions
// (OpenEntry, UnlinkEntry, RenameEntry, RenameIntoData) are thread-safe: they only read the
// descriptor of data/, which lives as long as the CacheDir.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/entry_format.h"
#include "cache/private_dir.h"

namespace kvfs {

struct ScannedEntry {
  EntryMeta meta;
  std::string file_name;
  uint64_t key_hash = 0;
  uint64_t gen = 0;
};

struct ScanResult {
  std::vector<ScannedEntry> entries;  // valid trailers, one per key (the newest generation)
  uint64_t dropped = 0;               // partial fills, orphans, truncated or duplicate entries
  uint64_t foreign = 0;               // names kvfs did not create: left in place
  uint64_t unreadable = 0;            // entries that could not be opened now (EMFILE...): left
  uint64_t max_gen = 0;
};

class CacheDir {
 public:
  // Creates / fixes the directory and takes the lock. kAlreadyExists names the directory if
  // another process holds it; kPermissionDenied / kInvalidArgument for a directory kvfs does not
  // trust (see PrivateDir) or a `lock` that is a symlink or not kvfs's own regular file.
  static Result<std::unique_ptr<CacheDir>> Open(const std::string& dir);
  ~CacheDir();  // releases the lock

  const std::string& dir() const { return dir_; }
  std::string data_dir() const { return dir_ + "/data"; }
  std::string spool_dir() const { return dir_ + "/spool"; }
  // For messages only: entry files are reached through the functions below.
  std::string DataPath(const std::string& name) const { return dir_ + "/data/" + name; }

  // The entry file `name` (a single component) in data/, reached relative to data/'s descriptor
  // and never through a symlink (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW), as for everything under the
  // cache directory: a path walked from "/" again could be redirected. Like the system calls
  // they wrap: a descriptor or 0, else -1 with errno set. O_CLOEXEC is added.
  int OpenEntry(const std::string& name, int flags, mode_t mode = 0) const;
  int UnlinkEntry(const std::string& name) const;
  int RenameEntry(const std::string& from, const std::string& to) const;
  // Moves `path` (a file elsewhere on the same filesystem, e.g. a spool file) to data/`to`.
  int RenameIntoData(const std::string& path, const std::string& to) const;

  // Reads every file in data/: keeps entries whose trailer is intact and whose size matches it;
  // unlinks the rest of kvfs's own files (partial fills, truncated entries, older generations of
  // a key). Names that are not entry names and anything but regular files are left in place.
  // Does not read the content: checksums are checked later (see ChunkCache).
  ScanResult Scan();

 private:
  CacheDir(PrivateDir root, int lock_fd)
      : root_(std::move(root)), dir_(root_.path()), lock_fd_(lock_fd) {}
  PrivateDir root_;
  PrivateDir data_;  // data/, opened by Open
  std::string dir_;  // root_.path(): symlinks above it resolved
  int lock_fd_;
};

// True for the names the filesystem's write spool gives its files ("spool-<pid>-<n>", see
// fs/spool_file.cc): with their seals, the only names kvfs removes from a spool directory.
bool IsSpoolFileName(std::string_view name);

// A spool file accepted for write-back has a seal beside it ("spool-<pid>-<n>.seal", written as
// "<seal>.tmp" and renamed: fs/spool_seal.h): a sealed spool file outlives the daemon and is
// uploaded by the next mount; an unsealed one is removed at start.
inline constexpr std::string_view kSpoolSealSuffix = ".seal";
inline constexpr std::string_view kSpoolSealTempSuffix = ".seal.tmp";
std::string SpoolSealName(std::string_view spool_name);

// Opens (creating it private if missing) a write-spool directory, checked like the cache
// directory (PrivateDir), and removes the unsealed spool files an earlier run left there. `setting`
// names the setting in messages ("spool_dir").
Status PrepareSpoolDir(const std::string& dir, const std::string& setting);

}  // namespace kvfs
