// FsOptions: everything the filesystem logic is configured with. The daemon fills it from the
// command line and the YAML config; tests fill it directly.
//
// One default and one range per setting: the daemon's keys bind to these fields (KvfsConfig::fs,
// src/config_keys.cc), so the defaults below are the keys' defaults, and a range the filesystem
// checks is a constant here that the key table uses too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kvfs {

// What unlink() of an uploaded file does.
// Engines delete chunks for their own reasons (their local LRU, a read they did not like, clear());
// on a tier shared by a fleet that must not destroy what other nodes use unless the operator asks
// (docs/engines.md, "Deletes").
enum class UnlinkPolicy {
  kRemote,  // delete the object, for every node
  kLocal,   // default: the name goes on this node only (UnlinkedNames) with its cached copy; the
            // object stays in the bucket for the other nodes
  kDeny,    // EPERM
};

// What closing a new file does when its name already exists in the store.
enum class ExistsPolicy {
  kSameSizeOk,  // same size: success without overwriting (chunk names are content-derived)
  kEexist,      // always EEXIST
};

// Temporary names of the engines' disk tiers (docs/engines.md): "<final>.tmp" (LMCache MP fs and
// fs_native, llm-d "<target>_<random>.tmp"), "<final>.tmp.<pid>.<tid>.<uuid>" (SGLang HiCacheFile),
// "<final>.tmp<8 hex>" (LMCache GDS data and .metadata files).
inline const std::vector<std::string>& DefaultTempPatterns() {
  static const std::vector<std::string> patterns = {"*.tmp", "*.tmp.*", "*.tmp[0-9a-f]*"};
  return patterns;
}

// The largest fan-out (hex characters of the hashed key prefix): the range of the `fanout` key and
// of FsOptions::Validate. NameCodec itself takes up to 16.
inline constexpr int kMaxFanoutHexChars = 8;

struct FsOptions {
  // Key prefix under which the filesystem lives: "" or "dir/" (a missing trailing '/' is added).
  std::string key_prefix;
  // Sizes a whole chunk may have. Empty: every non-empty file is whole.
  std::vector<uint64_t> chunk_sizes;
  // With chunk_sizes empty: a chunk smaller than the largest object in the store whose name has
  // the same pattern is partial (ChunkSizeLearner). For engines that save full chunks only.
  bool learn_chunk_sizes = false;
  // Largest file that may be written; writes or truncates past it fail with EFBIG.
  uint64_t max_chunk_bytes = 256ull << 20;
  // Files of at least this size are uploaded as multipart, in parts of multipart_part_size.
  uint64_t multipart_threshold = 64ull << 20;
  uint64_t multipart_part_size = 16ull << 20;
  // Parts of one multipart upload in flight at once.
  int upload_parallelism = 4;
  // Send whole parts of a chunk while it is still being written (see EarlyUpload): the upload
  // overlaps the write. Files reaching one multipart_part_size are then stored as multipart
  // uploads even below multipart_threshold.
  bool upload_while_writing = true;
  // What close() (and rename() to a final name) waits for. true (write-back, the default: no
  // engine's disk tier calls fsync(), and the engines' own S3 clients do not wait for a PUT
  // either): the chunk is whole in the spool - readable by every process on this node at once,
  // by other nodes once its upload ends - and the upload follows on
  // write_back_uploads threads; fsync(), a descriptor opened O_SYNC/O_DSYNC and unmount wait for
  // it. At most write_back_bytes wait or upload at once; a close past it waits for room. A
  // background upload the store refuses (EEXIST) drops the name (logged, kvfs_write_back_failed);
  // one that fails otherwise (an outage) is tried again with backoff. An accepted chunk
  // is sealed in the spool (SpoolSeal) before its close returns: a crash of the daemon before its
  // upload leaves it sealed and the next mount uploads it. false: the object is durable in the
  // store when close() returns.
  bool write_back = true;
  int write_back_uploads = 16;
  uint64_t write_back_bytes = 1ull << 30;
  // Force a write-back chunk and its seal to the spool's disk (fdatasync) before its close
  // returns: it then survives a power loss too (with the cache on a persistent disk), at the
  // cost measured in bench/RESULTS-write-back.md. Off: it survives a crash of the daemon.
  bool write_back_fdatasync = false;
  // How long unmount and SIGTERM wait for the write-back uploads; what is not stored by then
  // stays sealed and the next mount of this cache uploads it. 0: wait until all have ended.
  int64_t write_back_drain_timeout_ms = 60'000;
  // While the oldest chunk accepted and not yet stored is older than this (a store outage), a
  // close or rename that would accept another waits, within blocking_timeout, then fails with
  // ETIMEDOUT: the spool does not fill behind a store that takes nothing. 0: no limit.
  int64_t write_back_max_age_ms = 300'000;
  // Whether the kernel may keep the pages of uploaded files in its page cache. false: buffered
  // opens of files served from the local cache (hits, and downloads into it) bypass it
  // (FOPEN_DIRECT_IO): their bytes go from the cache file straight into the reader's buffer, one
  // copy less - cold whole-chunk reads 1.07-1.21x, hits with a cold page cache 1.6-1.8x faster
  // (bench/ANALYSIS.md) - and are held in memory once, in the cache directory, not twice.
  // Shared mmap(2) of such files then fails with ENODEV (private mappings work). true: the page
  // cache is used and kept across opens (a chunk read again at once comes from memory).
  bool page_cache = false;
  // Offer cache hits to the kernel as passthrough opens (FUSE passthrough: kernel 6.9+, a libfuse
  // built with it, and CAP_SYS_ADMIN; otherwise nothing changes): the engine's reads of a hit then
  // go to the cache file directly, without the daemon (fs/fuse/passthrough_table.h).
  bool passthrough = true;
  // Also let the kernel write new chunks into their spool files (FUSE passthrough writes): the
  // engine's write()s, O_DIRECT or not, go to the spool without a request, copy or thread of the
  // daemon, which sees the open, flush and release and takes the size from the spool. The daemon
  // then cannot see a write the kernel failed (ENOSPC, EIO of the spool disk), nor which process
  // wrote, nor send parts while the chunk is written (docs/write-path.md, "Passthrough writes",
  // says what each becomes). Off by default: with the cache on a disk file system the kernel's
  // copies into and out of the spool cost several times the daemon's (bench/ANALYSIS.md).
  bool passthrough_writes = false;
  // fnmatch(3) patterns of names kept local (never uploaded under that name, and never looked up
  // in the store: a lookup of such a name with no local file is a miss without a request);
  // renaming such a file to a non-matching name uploads it under the new name.
  std::vector<std::string> temp_patterns = DefaultTempPatterns();
  UnlinkPolicy unlink_policy = UnlinkPolicy::kLocal;
  ExistsPolicy exists_policy = ExistsPolicy::kSameSizeOk;
  // Lifetime of cached lookups that found a file or a directory, also handed to the kernel. 0: no
  // caching (misses included).
  uint32_t metadata_ttl_secs = 30;
  // Lifetime of a cached miss, here and in the kernel (negative dentries): a chunk another node
  // (or any other writer) stores under a name this node has missed is found here within this, so
  // a fleet sees a new chunk within about half a second. Each lookup of a name missed longer ago
  // asks the store again (one HEAD), as the engines' own S3 clients do on every lookup. 0: misses
  // are never cached. At most metadata_ttl_secs.
  uint32_t negative_ttl_ms = 500;
  // The fleet feed (fs/fleet_feed.h): every node lists the chunks it stores and deletes under
  // key_prefix + "~kvfs-feed/" and reads the others' every feed_interval_ms, so a cached miss or
  // directory listing holds while the feed shows the name was not stored since - up to
  // feed_miss_ttl_secs, the bound for writers that are not kvfs mounts of this prefix (an engine's
  // own S3 client, aws s3 cp). false: misses hold negative_ttl_ms, listings are not made.
  bool fleet_feed = true;
  uint32_t feed_interval_ms = 400;
  uint32_t feed_miss_ttl_secs = 10;
  // A name whose chunk is in the local cache is answered from it at once, without waiting on the
  // store, for this long after the store last confirmed it (its metadata, else the cache fill);
  // it is revalidated in the background, and a 404 or another ETag drops it. 0: off (after
  // metadata_ttl_secs every lookup waits on the store).
  uint32_t cached_chunk_trust_secs = 3600;
  // Time limit of one background revalidation (blocking_timeout; 0: the store's own limits).
  int64_t revalidate_timeout_ms = 30'000;
  // Bound on the metadata cache's memory (MetaCache: least recently used entries go first). An
  // entry is charged its key, its ETag and MetaCache::kEntryOverhead - ~470 bytes for a 60-byte
  // key, within 2 % of the RSS it adds (bench/RESULTS-memory.md) - so the default holds ~140,000
  // names.
  size_t metadata_cache_max_bytes = 64 << 20;
  // Hashed fan-out: keys are prefix + first N hex chars of a hash of the name + "/" + name.
  // 0 = off; at most kMaxFanoutHexChars. With fan-out on, the filesystem is flat (mkdir returns
  // ENOTSUP).
  int fanout_hex_chars = 0;
  // Subdirectories (mkdir, "/" in names of other tools' keys). Off: the namespace is flat, a
  // missed lookup costs one HEAD instead of a HEAD and a one-key LIST, and mkdir is ENOTSUP.
  bool subdirectories = true;
  // Keys one lookup's LIST may bring (with subdirectories; filesystem.cc, Lookups): those under the
  // name looked up answer the lookups of the levels below it. Not a config key.
  int lookup_list_max_keys = 1000;
  // Private directory for write spool files (created if missing). Required.
  std::string spool_dir;
  // statfs: total size reported (statfs_size; the store has no fixed capacity). 0: the cache's
  // capacity (BuildMountStack fills it in), else 1 TiB.
  uint64_t statfs_total_bytes = 0;
  // Owner and permission bits reported for every file and directory (uid, gid; umask sets both
  // modes: 0666 & ~umask and 0777 & ~umask). uid/gid (uid_t)-1: the daemon's own.
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  uint32_t file_mode = 0644;
  uint32_t dir_mode = 0755;

  // Checks values and normalizes key_prefix. Errors name the offending setting.
  Status Validate();
};

// FsOptions as default-constructed: the defaults of the daemon's keys that configure the
// filesystem.
const FsOptions& DefaultFsOptions();

}  // namespace kvfs
