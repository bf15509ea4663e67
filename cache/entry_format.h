// On-disk format of one cache entry: the object's bytes, and a small trailer (key, size, ETag,
// CRC32C of the content, fill time) kept in the file's extended attribute "user.kvfs.entry" where
// the cache's filesystem takes one (tmpfs since Linux 6.6, ext4, xfs), else appended to the bytes.
// In the attribute, the file is exactly the object, so the kernel can read it for the engine
// (FUSE passthrough reads to the end of the backing file). Entry files live in <cache_dir>/data/
// and are named
// "<key hash>-<generation>.kvc" (hex); a fill in progress is "<...>.fill".
//
// Why a trailer instead of a separate metadata file: one rename of the fill file publishes data and
// metadata together, so there is never a data file without metadata or the reverse; the content
// starts at offset 0, so a reader splices [0, size) straight from the file. Why a generation in the
// name: every fill gets a fresh name, so an entry's file can be unlinked outside the cache mutex
// without ever hitting a newer entry of the same key.
//
// The content is not fsync'ed: this is a cache. A torn entry after a power loss fails its size or
// checksum check at recovery and is dropped.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace kvfs {

struct EntryMeta {
  std::string key;
  uint64_t size = 0;
  std::string etag;
  uint32_t crc = 0;  // CRC32C of the content
  int64_t fill_time_sec = 0;
};

// Longest key / ETag a trailer holds (S3 keys are at most 1024 bytes).
constexpr uint32_t kMaxEntryKeyLen = 64 * 1024;
constexpr uint32_t kMaxEntryEtagLen = 1024;

// The trailer bytes to write at offset meta.size of the entry file.
std::string EncodeTrailer(const EntryMeta& meta);

// Records the trailer of the entry file `fd` whose content is complete: in its extended attribute,
// else (the filesystem refuses it) at offset meta.size. `path` names the file in errors.
Status WriteTrailer(int fd, const EntryMeta& meta, const std::string& path);

// Reads and checks the trailer of an entry file of `file_size` bytes: magic, trailer checksum, and
// size (+ trailer length when appended) == file_size. kDataLoss if anything is off (a truncated
// or foreign file).
Result<EntryMeta> ReadTrailer(int fd, uint64_t file_size);

// CRC32C of the first `size` bytes of fd, read with pread. kDataLoss if the file is shorter.
Result<uint32_t> ChecksumFile(int fd, uint64_t size);

// 64-bit FNV-1a of the key: spreads names; uniqueness comes from the generation.
uint64_t KeyHash(const std::string& key);

std::string EntryFileName(uint64_t key_hash, uint64_t gen);  // "<16 hex>-<16 hex>.kvc"
std::string FillFileName(uint64_t key_hash, uint64_t gen);   // "<16 hex>-<16 hex>.fill"

// Parses a name made by the two functions above. False for anything else.
struct ParsedName {
  uint64_t key_hash = 0;
  uint64_t gen = 0;
  bool fill = false;
};
bool ParseEntryFileName(const std::string& name, ParsedName* out);

// Whether two ETags name the same version of an object. An empty ETag is unknown (e.g. RGW's
// multipart completion sends none); chunk names are content-derived, so size alone decides then.
inline bool EtagsMatch(const std::string& a, const std::string& b) {
  return a.empty() || b.empty() || a == b;
}

}  // namespace kvfs
