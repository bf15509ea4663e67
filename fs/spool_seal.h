// SpoolSeal: the record that makes a spool file a chunk kvfs has acknowledged. With write-back, a
// close() or rename() of a whole chunk returns before the upload; before it returns, a seal is
// written beside the spool file naming what the bytes are (the key, the name shown, the size, the
// CRC32C of the bytes). The seal is removed once the object is in the store (or the chunk was
// unlinked, rewritten or refused). A daemon killed in between (kill -9, an OOM kill, a node reboot
// with the cache on a persistent disk) leaves spool file and seal; the next mount reads the seal,
// checks the spool's size and CRC32C against it and uploads the chunk while it serves. A spool
// file without a seal is a write never acknowledged: removed at start (cache/cache_dir.h), never
// published.
//
// The seal is written as "<seal>.tmp" and renamed over "<seal>": a crash leaves either no seal or
// a whole one, never a torn one (its own CRC32C catches anything else, e.g. a disk that lost
// it). Without `sync` nothing is forced to the disk: the page cache outlives the daemon, not
// the machine (docs/write-path.md, "After a crash").
//
// Layout (little-endian): "KVFSSEAL" | u32 version (2) | u64 size | u32 crc32c | u8 replaces |
// u32 key length | key | u32 display length | display | u32 attributes length | attributes (not
// in version 1) | u32 CRC32C of everything before.
//
// Thread-safety: stateless functions; the caller serializes the calls for one spool file (the
// SpoolFile's lock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kvfs {

class SpoolSeal {
 public:
  // What the spool file holds.
  struct Record {
    std::string key;      // the object key the chunk is uploaded as
    std::string display;  // its path under the mount, for messages
    uint64_t size = 0;
    uint32_t crc32c = 0;  // of bytes [0, size)
    // A file opened for reading and writing and changed: it replaces the object
    // (Uploader::Replace).
    bool replaces = false;
    std::string user_xattrs;  // the chunk's attributes (UserXattrs::Encode)
  };

  // The seal's path for the spool file at `spool_path`.
  static std::string PathOf(const std::string& spool_path);
  // Writes (or replaces) the seal of `spool_path`; with `sync`, spool file, seal and directory
  // are forced to the disk first (fdatasync), so that the chunk survives a power loss too.
  static Status Write(const std::string& spool_path, int spool_fd, const Record& record, bool sync);
  // Removes the seal (nothing if there is none).
  static void Remove(const std::string& spool_path);
  // Reads and checks the seal at `seal_path`: kDataLoss for one that is not whole.
  static Result<Record> Read(const std::string& seal_path);
  // The spool files of `dir` that have a seal (full paths), in name order.
  static std::vector<std::string> SealedIn(const std::string& dir);

  static std::string Encode(const Record& record);
  static Result<Record> Decode(const std::string& bytes, const std::string& what);
};

}  // namespace kvfs
