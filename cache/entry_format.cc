#include "cache/entry_format.h"

#include <sys/xattr.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/crc32c.h"
#include "base/posix_io.h"

namespace kvfs {
namespace {

static_assert(std::endian::native == std::endian::little, "trailer fields are little-endian");

constexpr char kHeadMagic[8] = {'K', 'V', 'F', 'S', 'E', 'N', 'T', '1'};
constexpr char kTailMagic[8] = {'K', 'V', 'F', 'S', 'T', 'A', 'I', 'L'};
// head magic, size, crc, key_len, etag_len, reserved, fill_time
constexpr size_t kFixedHead = 8 + 8 + 4 + 4 + 4 + 4 + 8;
// trailer crc, trailer length, tail magic
constexpr size_t kTail = 4 + 4 + 8;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
template <typename T>
T Get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

constexpr char kTrailerXattr[] = "user.kvfs.entry";

Status PreadAll(int fd, char* buf, size_t n, uint64_t off) {
  return PreadExact(fd, buf, n, off, "read of cache entry");
}

// Checks and decodes a trailer of `len` bytes at p, for content of `data_size` bytes.
Result<EntryMeta> DecodeTrailer(const char* p, uint32_t len, uint64_t data_size) {
  if (std::memcmp(p, kHeadMagic, sizeof(kHeadMagic)) != 0 ||
      std::memcmp(p + len - sizeof(kTailMagic), kTailMagic, sizeof(kTailMagic)) != 0 ||
      Get<uint32_t>(p + len - kTail + 4) != len ||
      Crc32c(0, p, len - kTail) != Get<uint32_t>(p + len - kTail)) {
    return Status::DataLoss("cache entry trailer is corrupt");
  }
  EntryMeta m;
  m.size = Get<uint64_t>(p + 8);
  m.crc = Get<uint32_t>(p + 16);
  const uint32_t key_len = Get<uint32_t>(p + 20);
  const uint32_t etag_len = Get<uint32_t>(p + 24);
  m.fill_time_sec = Get<int64_t>(p + 32);
  if (uint64_t{kFixedHead} + key_len + etag_len + kTail != len) {
    return Status::DataLoss("cache entry trailer fields do not add up");
  }
  if (m.size != data_size) {
    return Status::DataLoss("cache entry size " + std::to_string(data_size) +
                            " differs from its recorded size " + std::to_string(m.size));
  }
  m.key.assign(p + kFixedHead, key_len);
  m.etag.assign(p + kFixedHead + key_len, etag_len);
  return m;
}

constexpr uint32_t kMaxTrailer = kFixedHead + kTail + kMaxEntryKeyLen + kMaxEntryEtagLen;

}  // namespace

std::string EncodeTrailer(const EntryMeta& meta) {
  std::string out;
  out.append(kHeadMagic, sizeof(kHeadMagic));
  Put<uint64_t>(&out, meta.size);
  Put<uint32_t>(&out, meta.crc);
  Put<uint32_t>(&out, static_cast<uint32_t>(meta.key.size()));
  Put<uint32_t>(&out, static_cast<uint32_t>(meta.etag.size()));
  Put<uint32_t>(&out, 0);
  Put<int64_t>(&out, meta.fill_time_sec);
  out += meta.key;
  out += meta.etag;
  uint32_t crc = Crc32c(0, out.data(), out.size());
  Put<uint32_t>(&out, crc);
  Put<uint32_t>(&out, static_cast<uint32_t>(out.size() + 4 + sizeof(kTailMagic)));
  out.append(kTailMagic, sizeof(kTailMagic));
  return out;
}

Status WriteTrailer(int fd, const EntryMeta& meta, const std::string& path) {
  const std::string t = EncodeTrailer(meta);
  // Any refusal (no user xattrs, a value over the filesystem's limit) falls back to appending.
  if (fsetxattr(fd, kTrailerXattr, t.data(), t.size(), 0) == 0) return Status::OK();
  return PwriteFull(fd, t.data(), t.size(), meta.size, "write of cache entry trailer to " + path);
}

Result<EntryMeta> ReadTrailer(int fd, uint64_t file_size) {
  std::vector<char> buf(kMaxTrailer);
  const ssize_t n = fgetxattr(fd, kTrailerXattr, buf.data(), buf.size());
  if (n >= 0) {
    if (static_cast<size_t>(n) < kFixedHead + kTail) {
      return Status::DataLoss("cache entry trailer attribute too short");
    }
    return DecodeTrailer(buf.data(), static_cast<uint32_t>(n), file_size);
  }
  if (file_size < kFixedHead + kTail)
    return Status::DataLoss("cache entry too short for a trailer");
  char tail[kTail];
  KVFS_RETURN_IF_ERROR(PreadAll(fd, tail, kTail, file_size - kTail));
  if (std::memcmp(tail + 8, kTailMagic, sizeof(kTailMagic)) != 0) {
    return Status::DataLoss("cache entry has no trailer (truncated or partial)");
  }
  const uint32_t len = Get<uint32_t>(tail + 4);
  if (len < kFixedHead + kTail || len > kMaxTrailer || len > file_size) {
    return Status::DataLoss("cache entry trailer has a bad length");
  }
  buf.resize(len);
  KVFS_RETURN_IF_ERROR(PreadAll(fd, buf.data(), len, file_size - len));
  return DecodeTrailer(buf.data(), len, file_size - len);
}

Result<uint32_t> ChecksumFile(int fd, uint64_t size) {
  constexpr size_t kBuf = 1 << 20;
  std::vector<char> buf(kBuf);
  uint32_t crc = 0;
  uint64_t off = 0;
  while (off < size) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kBuf, size - off));
    KVFS_RETURN_IF_ERROR(PreadAll(fd, buf.data(), n, off));
    crc = Crc32c(crc, buf.data(), n);
    off += n;
  }
  return crc;
}

uint64_t KeyHash(const std::string& key) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

static std::string MakeName(uint64_t key_hash, uint64_t gen, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64 "-%016" PRIx64 "%s", key_hash, gen, suffix);
  return buf;
}

std::string EntryFileName(uint64_t key_hash, uint64_t gen) {
  return MakeName(key_hash, gen, ".kvc");
}
std::string FillFileName(uint64_t key_hash, uint64_t gen) {
  return MakeName(key_hash, gen, ".fill");
}

bool ParseEntryFileName(const std::string& name, ParsedName* out) {
  auto hex = [](const std::string& s, size_t pos, uint64_t* v) {
    *v = 0;
    for (size_t i = pos; i < pos + 16; i++) {
      char c = s[i];
      int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      *v = (*v << 4) | static_cast<uint64_t>(d);
    }
    return true;
  };
  if (name.size() < 33 || name[16] != '-') return false;
  std::string suffix = name.substr(33);
  if (suffix != ".kvc" && suffix != ".fill") return false;
  if (!hex(name, 0, &out->key_hash) || !hex(name, 17, &out->gen)) return false;
  out->fill = suffix == ".fill";
  return true;
}

}  // namespace kvfs
