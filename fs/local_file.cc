#include "fs/local_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>

namespace kvfs {

Result<std::shared_ptr<LocalFile>> LocalFile::Create(const std::string& spool_dir, std::string key,
                                                     std::string display_name, bool temp) {
  static std::atomic<uint64_t> counter{0};
  std::string path =
      spool_dir + "/spool-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1));
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "creating spool file " + path);
  std::shared_ptr<LocalFile> f(new LocalFile(fd, std::move(path)));
  std::lock_guard<std::mutex> l(f->mu);
  f->key = std::move(key);
  f->display_name = std::move(display_name);
  f->SetTempLocked(temp);
  return f;
}

LocalFile::LocalFile(int fd, std::string spool_path)
    : fd_(fd), spool_path_(std::move(spool_path)), mtime_sec_(time(nullptr)) {}

LocalFile::~LocalFile() {
  early.reset();  // waits for parts still reading the spool fd, and aborts an unused upload
  close(fd_);
  // No lock needed: no one else holds a reference any more.
  if (!adopted) unlink(spool_path_.c_str());
}

Status LocalFile::WriteLocked(uint64_t offset, const char* data, uint64_t n) {
  uint64_t done = 0;
  while (done < n) {
    ssize_t w = pwrite(fd_, data + done, n - done, static_cast<off_t>(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Status::FromErrno(errno, "writing spool file for '" + display_name + "'");
    done += static_cast<uint64_t>(w);
  }
  if (offset + n > size) SetSizeLocked(offset + n);
  return Status::OK();
}

Status LocalFile::TruncateLocked(uint64_t new_size) {
  if (early) early->Invalidate();  // bytes already sent may change
  if (ftruncate(fd_, static_cast<off_t>(new_size)) != 0) {
    return Status::FromErrno(errno, "truncating spool file for '" + display_name + "'");
  }
  SetSizeLocked(new_size);
  return Status::OK();
}

Result<uint64_t> LocalFile::Read(uint64_t offset, uint64_t n, char* buf) const {
  uint64_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd_, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::FromErrno(errno, "reading spool file " + spool_path_);
    if (r == 0) break;
    done += static_cast<uint64_t>(r);
  }
  return done;
}

}  // namespace kvfs
