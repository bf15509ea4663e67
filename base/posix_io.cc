#include "base/posix_io.h"

#include <unistd.h>

#include <cerrno>

namespace kvfs {
namespace {

// One loop for the four calls: `op(p, left, done)` performs the system call for the remaining
// bytes. Stops at n, at end of file (a read returning 0) or at an error.
template <typename Op>
Result<size_t> Loop(size_t n, const std::string& what, Op op) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = op(done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, what);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

Status WriteResult(Result<size_t> r, size_t n, const std::string& what) {
  if (!r.ok()) return r.status();
  if (*r < n) {
    return Status::IoError(what + ": write made no progress after " + std::to_string(*r) + " of " +
                           std::to_string(n) + " bytes");
  }
  return Status::OK();
}

}  // namespace

Result<size_t> PreadFull(int fd, void* buf, size_t n, uint64_t offset, const std::string& what) {
  char* p = static_cast<char*>(buf);
  return Loop(n, what, [&](size_t done) {
    return ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
  });
}

Status PreadExact(int fd, void* buf, size_t n, uint64_t offset, const std::string& what) {
  KVFS_ASSIGN_OR_RETURN(size_t got, PreadFull(fd, buf, n, offset, what));
  if (got == n) return Status::OK();
  return Status::DataLoss(what + ": file shorter than expected: " + std::to_string(n) +
                          " bytes wanted at offset " + std::to_string(offset) + ", " +
                          std::to_string(got) + " there");
}

Result<size_t> ReadFull(int fd, void* buf, size_t n, const std::string& what) {
  char* p = static_cast<char*>(buf);
  return Loop(n, what, [&](size_t done) { return ::read(fd, p + done, n - done); });
}

Status PwriteFull(int fd, const void* buf, size_t n, uint64_t offset, const std::string& what) {
  const char* p = static_cast<const char*>(buf);
  return WriteResult(Loop(n, what,
                          [&](size_t done) {
                            return ::pwrite(fd, p + done, n - done,
                                            static_cast<off_t>(offset + done));
                          }),
                     n, what);
}

Status WriteFull(int fd, const void* buf, size_t n, const std::string& what) {
  const char* p = static_cast<const char*>(buf);
  return WriteResult(Loop(n, what, [&](size_t done) { return ::write(fd, p + done, n - done); }), n,
                     what);
}

}  // namespace kvfs
