// A small tmpfs mounted on a fresh directory, to make a real "disk full" (ENOSPC) for the spool or
// the cache directory. Needs CAP_SYS_ADMIN: ok() is false otherwise and the test skips. The mount
// is private to the test (a fresh directory under /tmp) and undone (lazily) at destruction.
#pragma once

#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace kvfs::testing {

class SmallTmpfs {
 public:
  explicit SmallTmpfs(uint64_t bytes) {
    char tmpl[] = "/tmp/kvfs-small-tmpfs-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return;
    path_ = tmpl;
    const std::string opts = "size=" + std::to_string(bytes) + ",mode=0700";
    mounted_ = mount("tmpfs", path_.c_str(), "tmpfs", 0, opts.c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
    if (!path_.empty()) rmdir(path_.c_str());
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool ok() const { return mounted_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool mounted_ = false;
};

}  // namespace kvfs::testing
