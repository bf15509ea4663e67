#include "objstore/dir/dir_file_util.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>
#include <vector>

#include "base/posix_io.h"
#include "base/user_xattrs.h"

namespace kvfs::dirstore {

FdCloser::~FdCloser() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// Copies through a bounded buffer: the body fd may be a pipe-like or a file on another fs.
Status CopyByPread(int src, uint64_t src_off, int dst, uint64_t length, const std::string& what) {
  std::vector<char> buf(std::min<uint64_t>(length, 1 << 20));
  while (length > 0) {
    uint64_t n = std::min<uint64_t>(length, buf.size());
    KVFS_RETURN_IF_ERROR(PreadExact(src, buf.data(), n, src_off, "read source of " + what));
    KVFS_RETURN_IF_ERROR(WriteFull(dst, buf.data(), n, "write " + what));
    src_off += n;
    length -= n;
  }
  return Status::OK();
}

}  // namespace

Status WriteBody(int fd, const Body& body, const std::string& what) {
  if (body.length == 0) return Status::OK();
  if (body.fd >= 0) return CopyByPread(body.fd, body.offset, fd, body.length, what);
  if (body.data == nullptr) return Status::InvalidArgument("body without data for " + what);
  return WriteFull(fd, body.data, body.length, "write " + what);
}

Status CopyFile(int src, int dst, uint64_t length, const std::string& what) {
  loff_t src_off = 0;
  uint64_t left = length;
  while (left > 0) {
    ssize_t n = ::copy_file_range(src, &src_off, dst, nullptr, left, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
        return CopyByPread(src, static_cast<uint64_t>(src_off), dst, left, what);
      }
      return Status::FromErrno(errno, "copy " + what);
    }
    if (n == 0) return Status::DataLoss("source of " + what + " ended early");
    left -= static_cast<uint64_t>(n);
  }
  return Status::OK();
}

Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open directory " + dir);
  FdCloser closer(fd);
  if (::fsync(fd) != 0) return Status::FromErrno(errno, "fsync directory " + dir);
  return Status::OK();
}

std::string StatEtag(const struct stat& st) {
  char buf[80];
  uint64_t ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                static_cast<uint64_t>(st.st_mtim.tv_nsec);
  std::snprintf(buf, sizeof(buf), "%llx-%llx-%llx", static_cast<unsigned long long>(st.st_ino),
                static_cast<unsigned long long>(ns), static_cast<unsigned long long>(st.st_size));
  return buf;
}

ObjectInfo InfoFromStat(const std::string& key, const struct stat& st) {
  ObjectInfo info;
  info.key = key;
  info.size = static_cast<uint64_t>(st.st_size);
  info.etag = StatEtag(st);
  info.mtime_sec = st.st_mtim.tv_sec;
  return info;
}

namespace {
constexpr char kChecksumXattr[] = "user.kvfs.crc32c";
constexpr char kSliceChecksumXattr[] = "user.kvfs.crc32c-slices";
constexpr char kWriterXattr[] = "user.kvfs.writer";
constexpr char kUserXattrsXattr[] = "user.kvfs.xattrs";

// What getxattr gave for user.kvfs.xattrs: "" when absent (or xattrs unsupported: none set).
std::optional<std::string> UserXattrsRead(ssize_t n, const char* buf) {
  if (n >= 0) return std::string(buf, static_cast<size_t>(n));
  if (errno == ENODATA || errno == ENOTSUP) return std::string();
  return std::nullopt;
}
}  // namespace

Status SetUserXattrs(int fd, const std::string& encoded, const std::string& what) {
  if (encoded.empty()) return Status::OK();
  if (::fsetxattr(fd, kUserXattrsXattr, encoded.data(), encoded.size(), 0) != 0) {
    return Status::FromErrno(
        errno, "keep the extended attributes of " + what + " (the xattr " + kUserXattrsXattr + ")");
  }
  return Status::OK();
}

std::optional<std::string> UserXattrsOf(int fd) {
  char buf[UserXattrs::kMaxEncodedBytes];
  return UserXattrsRead(::fgetxattr(fd, kUserXattrsXattr, buf, sizeof(buf)), buf);
}

std::optional<std::string> UserXattrsOf(const std::string& path) {
  char buf[UserXattrs::kMaxEncodedBytes];
  return UserXattrsRead(::getxattr(path.c_str(), kUserXattrsXattr, buf, sizeof(buf)), buf);
}

void SetWriterXattr(int fd) {
  (void)::fsetxattr(fd, kWriterXattr, kWriterMetaValue, sizeof(kWriterMetaValue) - 1, 0);
}

bool HasWriterMark(const std::string& path) {
  char buf[16];
  const ssize_t n = ::getxattr(path.c_str(), kWriterXattr, buf, sizeof(buf));
  if (n > 0) return std::string_view(buf, static_cast<size_t>(n)) == kWriterMetaValue;
  if (errno == ENOTSUP) return true;  // no user xattrs here: no object can carry the mark
  // An object kvfs wrote before the mark with a checksum is kvfs's too.
  return ::getxattr(path.c_str(), kChecksumXattr, buf, sizeof(buf)) > 0;
}

void SetChecksumXattr(int fd, std::optional<uint32_t> crc) {
  if (!crc) return;
  const std::string hex = FormatCrc32c(*crc);
  (void)::fsetxattr(fd, kChecksumXattr, hex.data(), hex.size(), 0);
}

std::optional<uint32_t> ChecksumXattr(int fd) {
  char buf[16];
  const ssize_t n = ::fgetxattr(fd, kChecksumXattr, buf, sizeof(buf));
  if (n <= 0) return std::nullopt;
  return ParseCrc32c(std::string(buf, static_cast<size_t>(n)));
}

std::optional<uint32_t> ChecksumXattr(const std::string& path) {
  char buf[16];
  const ssize_t n = ::getxattr(path.c_str(), kChecksumXattr, buf, sizeof(buf));
  if (n <= 0) return std::nullopt;
  return ParseCrc32c(std::string(buf, static_cast<size_t>(n)));
}

void SetSliceChecksumXattr(int fd, const std::optional<SliceCrcs>& slices) {
  if (!slices) return;
  const std::string text = slices->Format();
  (void)::fsetxattr(fd, kSliceChecksumXattr, text.data(), text.size(), 0);
}

namespace {

std::optional<SliceCrcs> ParseSlices(const char* buf, ssize_t n, uint64_t size) {
  if (n <= 0) return std::nullopt;
  std::optional<SliceCrcs> s = SliceCrcs::Parse(std::string_view(buf, static_cast<size_t>(n)));
  if (s && !s->Fits(size)) s.reset();
  return s;
}

}  // namespace

std::optional<SliceCrcs> SliceChecksumXattr(int fd, uint64_t size) {
  char buf[2048];
  return ParseSlices(buf, ::fgetxattr(fd, kSliceChecksumXattr, buf, sizeof(buf)), size);
}

std::optional<SliceCrcs> SliceChecksumXattr(const std::string& path, uint64_t size) {
  char buf[2048];
  return ParseSlices(buf, ::getxattr(path.c_str(), kSliceChecksumXattr, buf, sizeof(buf)), size);
}

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // cannot happen on Linux >= 3.17 for small requests; fall through with zeros
    }
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += {kHex[c >> 4], kHex[c & 15]};
  return out;
}

}  // namespace kvfs::dirstore
