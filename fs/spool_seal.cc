#include "fs/spool_seal.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "base/crc32c.h"
#include "base/posix_io.h"
#include "cache/cache_dir.h"

namespace kvfs {
namespace {

constexpr std::string_view kMagic = "KVFSSEAL";
// Version 2 adds the chunk's user attributes; version 1 seals (kvfs before them) still read.
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1;
// Keys are at most 1,024 bytes (S3) and names as long; anything much larger is not a seal.
constexpr uint32_t kMaxText = 64 << 10;
constexpr size_t kMaxSeal = 2 * kMaxText + 64;

template <typename T>
void Put(std::string* out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads the fields in order; any read past the end leaves ok = false.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T Get() {
    T v = 0;
    if (bytes_.size() - pos_ < sizeof(T)) {
      ok = false;
      return v;
    }
    for (size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<T>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += sizeof(T);
    return v;
  }
  std::string Text() {
    const uint32_t n = Get<uint32_t>();
    if (!ok || n > kMaxText || bytes_.size() - pos_ < n) {
      ok = false;
      return {};
    }
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }
  bool ok = true;

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

Status SyncFd(int fd, const std::string& what) {
  if (fdatasync(fd) != 0) return Status::FromErrno(errno, "fdatasync " + what);
  return Status::OK();
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
}

}  // namespace

std::string SpoolSeal::PathOf(const std::string& spool_path) {
  return spool_path + std::string(kSpoolSealSuffix);  // cache/cache_dir.h: SpoolSealName
}

std::string SpoolSeal::Encode(const Record& r) {
  std::string out(kMagic);
  Put<uint32_t>(&out, kVersion);
  Put<uint64_t>(&out, r.size);
  Put<uint32_t>(&out, r.crc32c);
  Put<uint8_t>(&out, r.replaces ? 1 : 0);
  Put<uint32_t>(&out, static_cast<uint32_t>(r.key.size()));
  out += r.key;
  Put<uint32_t>(&out, static_cast<uint32_t>(r.display.size()));
  out += r.display;
  Put<uint32_t>(&out, static_cast<uint32_t>(r.user_xattrs.size()));
  out += r.user_xattrs;
  Put<uint32_t>(&out, Crc32c(0, out.data(), out.size()));
  return out;
}

Result<SpoolSeal::Record> SpoolSeal::Decode(const std::string& bytes, const std::string& what) {
  auto bad = [&](const std::string& why) { return Status::DataLoss(what + ": " + why); };
  if (bytes.size() < kMagic.size() || std::string_view(bytes).substr(0, kMagic.size()) != kMagic) {
    return bad("not a kvfs seal");
  }
  Reader in(std::string_view(bytes).substr(kMagic.size()));
  const uint32_t version = in.Get<uint32_t>();
  if (in.ok && (version < kOldestVersion || version > kVersion)) {
    return bad("seal version " + std::to_string(version) + " (this kvfs reads versions " +
               std::to_string(kOldestVersion) + " to " + std::to_string(kVersion) + ")");
  }
  Record r;
  r.size = in.Get<uint64_t>();
  r.crc32c = in.Get<uint32_t>();
  r.replaces = in.Get<uint8_t>() != 0;
  r.key = in.Text();
  r.display = in.Text();
  if (version >= 2) r.user_xattrs = in.Text();
  const size_t body = kMagic.size() + in.pos();
  const uint32_t crc = in.Get<uint32_t>();
  if (!in.ok || kMagic.size() + in.pos() != bytes.size()) return bad("truncated seal");
  if (Crc32c(0, bytes.data(), body) != crc) return bad("the seal's checksum does not match");
  if (r.key.empty()) return bad("the seal names no key");
  return r;
}

Status SpoolSeal::Write(const std::string& spool_path, int spool_fd, const Record& record,
                        bool sync) {
  const std::string seal = PathOf(spool_path);
  const std::string tmp = spool_path + std::string(kSpoolSealTempSuffix);
  if (sync) KVFS_RETURN_IF_ERROR(SyncFd(spool_fd, spool_path));
  const std::string bytes = Encode(record);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::FromErrno(errno, "creating seal " + tmp);
  Status st = WriteFull(fd, bytes.data(), bytes.size(), "seal " + tmp);
  if (st.ok() && sync) st = SyncFd(fd, tmp);
  close(fd);
  if (st.ok() && rename(tmp.c_str(), seal.c_str()) != 0) {
    st = Status::FromErrno(errno, "renaming seal " + tmp);
  }
  if (!st.ok()) {
    unlink(tmp.c_str());
    return st;
  }
  if (sync) {
    // The rename is in the directory: without this a power loss may forget the seal.
    const std::string dir = DirOf(seal);
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return Status::FromErrno(errno, "opening " + dir);
    st = fsync(dfd) == 0 ? Status::OK() : Status::FromErrno(errno, "fsync " + dir);
    close(dfd);
  }
  return st;
}

void SpoolSeal::Remove(const std::string& spool_path) { unlink(PathOf(spool_path).c_str()); }

Result<SpoolSeal::Record> SpoolSeal::Read(const std::string& seal_path) {
  int fd = open(seal_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Status::FromErrno(errno, "opening seal " + seal_path);
  std::string bytes(kMaxSeal + 1, '\0');
  Result<size_t> n = PreadFull(fd, bytes.data(), bytes.size(), 0, "seal " + seal_path);
  close(fd);
  if (!n.ok()) return n.status();
  if (*n > kMaxSeal) return Status::DataLoss("seal " + seal_path + ": too large to be a seal");
  bytes.resize(*n);
  return Decode(bytes, "seal " + seal_path);
}

std::vector<std::string> SpoolSeal::SealedIn(const std::string& dir) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d) return out;
  while (dirent* e = readdir(d.get())) {
    const std::string_view name = e->d_name;
    const size_t n = kSpoolSealSuffix.size();
    if (name.size() <= n || name.substr(name.size() - n) != kSpoolSealSuffix) continue;
    const std::string_view spool = name.substr(0, name.size() - n);
    if (IsSpoolFileName(spool)) out.push_back(dir + "/" + std::string(spool));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kvfs
