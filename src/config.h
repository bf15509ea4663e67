// The daemon's configuration: one struct with every setting, and the functions that fill it from
// a YAML file (kvfs's own keys and LMCache's S3 backend keys), from "key=value" pairs (-o mount
// options, KVFS_* environment variables) and that print it with secrets redacted.
//
// The YAML layer (src/config_file.cc) is the only user of yaml-cpp; its exceptions never leave
// it. Error messages name the source (file path, "command line", "environment KVFS_X"), the key
// and the reason, and never contain a secret value. Settings are applied in layers onto one
// KvfsConfig - defaults, then the environment, then the file, then the command line - so a later
// layer overrides an earlier one (see ResolveConfig in src/cli.h).
//
// Thread-safety: all functions are reentrant; a KvfsConfig is a plain value (thread-compatible).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cache/chunk_cache.h"      // ChunkCacheOptions: the cache keys' defaults
#include "fs/fs_options.h"          // UnlinkPolicy, ExistsPolicy, the filesystem keys' defaults
#include "fs/read/cached_reader.h"  // CachedReaderOptions: the reader keys' defaults
#include "objstore/s3/s3_options.h"

namespace kvfs {

enum class SourceKind { kNone, kS3, kDir };

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// The defaults of the keys that configure the filesystem are FsOptions' (fs/fs_options.h), those
// of the reader and the cache CachedReaderOptions' and ChunkCacheOptions', so each is written once;
// their ranges are in the key table (src/config_keys.cc), with the filesystem's own limits taken
// from fs/ too (kMaxFanoutHexChars).
struct KvfsConfig {
  // --- Where the chunks live (SOURCE, `source`, LMCache `remote_url`) ---
  SourceKind source_kind = SourceKind::kNone;
  std::string source;      // the URL as given, for messages ("s3://bucket/p", "file:///dir")
  std::string dir_root;    // kDir: absolute directory
  std::string key_prefix;  // prepended to every object key; normalised to "" or "a/b/"
  S3Options s3;            // bucket, endpoint, region, TLS, credentials, limits, timeouts
  // `addressing`/`path_style` given (or implied by the source's form): else AWS endpoints get
  // virtual-hosted addressing (store_factory.h).
  bool addressing_set = false;
  // `region` given (setting, AWS_REGION, or implied by an AWS host in the source): else kvfs asks
  // the bucket for its region at mount (S3Options::discover_region).
  bool region_set = false;

  // --- Transfer sizes (read path / upload path) ---
  uint64_t get_part_size = CachedReaderOptions{}.part_size;  // ranged GET size on a miss
  // At or above: multipart upload.
  uint64_t multipart_threshold = DefaultFsOptions().multipart_threshold;
  uint64_t multipart_part_size = DefaultFsOptions().multipart_part_size;  // 5 MiB .. 5 GiB

  // --- Local chunk cache ---
  std::string cache_dir;            // empty: DefaultCacheDir()
  uint64_t cache_size = 16 * kGiB;  // capacity in bytes
  // Start evicting above this fraction of cache_size, then free this fraction of it.
  double cache_high_watermark = ChunkCacheOptions{}.high_watermark;
  double cache_evict_ratio = ChunkCacheOptions{}.evict_ratio;
  // Check downloads against the checksum their writer recorded before serving them ("auto");
  // false: "off".
  bool verify = CachedReaderOptions{}.verify;

  // --- Chunk files and names ---
  std::vector<uint64_t> chunk_sizes;  // allowed whole-chunk sizes; empty: any non-empty size
  // FsOptions::learn_chunk_sizes; LMCache save_unfull_chunk: false
  bool learn_chunk_sizes = DefaultFsOptions().learn_chunk_sizes;
  // A write past this size fails with EFBIG.
  uint64_t max_chunk_bytes = DefaultFsOptions().max_chunk_bytes;
  std::vector<std::string> temp_patterns = DefaultFsOptions().temp_patterns;  // fnmatch, kept local
  UnlinkPolicy unlink_policy = DefaultFsOptions().unlink_policy;
  ExistsPolicy exists_policy = DefaultFsOptions().exists_policy;
  // Lookups that found a file or directory; also the kernel timeouts.
  int metadata_cache_ttl_secs = static_cast<int>(DefaultFsOptions().metadata_ttl_secs);
  // Lookups that found nothing (FsOptions::negative_ttl_ms): the fleet's visibility bound.
  int negative_cache_ttl_ms = static_cast<int>(DefaultFsOptions().negative_ttl_ms);
  // The fleet feed (fs/fleet_feed.h): nodes announce the chunks they store through the store.
  bool fleet_feed = DefaultFsOptions().fleet_feed;
  int feed_interval_ms = static_cast<int>(DefaultFsOptions().feed_interval_ms);
  // With the feed, a miss holds at most this long: the bound for writers that are not kvfs.
  int feed_miss_ttl_secs = static_cast<int>(DefaultFsOptions().feed_miss_ttl_secs);
  // At mount, multipart uploads under the prefix begun longer ago than this are aborted (left by
  // writers or daemons that died mid-upload). 0: never.
  int stale_upload_age_secs = 3600;
  // Abort stale uploads also when mounted at a bucket's root (src/recovery.h: the rule).
  bool stale_upload_gc_at_root = false;
  // Leave the daemon dumpable (core dumps, ptrace): for debugging a crash; the dump then holds
  // the credentials in memory. Off: PR_SET_DUMPABLE 0 (src/process_setup.h).
  bool core_dumps = false;
  // A name whose chunk is in the local cache is answered from it without waiting on the store
  // for this long after the store last confirmed it (revalidated in the background); 0: off.
  int cached_chunk_trust_secs = static_cast<int>(DefaultFsOptions().cached_chunk_trust_secs);
  // Each FUSE request that waits on the store ends within this, retries included (ETIMEDOUT);
  // LMCache's blocking_timeout_secs. 0: only operation_timeout_ms.
  int blocking_timeout = 30;
  // 0: off; else hex chars of the hashed prefix (1..kMaxFanoutHexChars).
  int fanout = DefaultFsOptions().fanout_hex_chars;
  // Subdirectories (mkdir, keys with '/'). false: a flat chunk directory, where a missed lookup
  // costs one HEAD instead of a HEAD and a one-key LIST.
  bool subdirectories = DefaultFsOptions().subdirectories;
  // Send whole parts of a chunk while it is being written (multipart, completed at close).
  bool upload_while_writing = DefaultFsOptions().upload_while_writing;
  // FsOptions::write_back: close() returns once the chunk is whole in the spool.
  bool write_back = DefaultFsOptions().write_back;
  int write_back_uploads = DefaultFsOptions().write_back_uploads;
  uint64_t write_back_bytes = DefaultFsOptions().write_back_bytes;

  // --- The bounded shared tier (tier/, docs/bounded-tier.md); both 0: unbounded ---
  uint64_t store_capacity = 0;      // chunk bytes under the prefix, kept by all nodes together
  int store_max_age_secs = 0;       // a chunk unused for this long is removed
  int store_gc_interval_secs = 30;  // use records, status reads and collector passes

  // --- FUSE ---
  // Let the kernel cache chunk pages too (FsOptions::page_cache).
  bool page_cache = DefaultFsOptions().page_cache;
  // Cache hits read by the kernel from the cache file (FsOptions::passthrough).
  bool passthrough = DefaultFsOptions().passthrough;
  uint64_t statfs_size = 0;  // size statfs reports; 0: cache_size
  bool allow_other = false;  // also turns on default_permissions: the kernel checks the modes
  // Owner and permission bits of every chunk file and directory (no per-file ownership is kept):
  // uid/gid -1 = the user/group kvfs runs as; files 0666 & ~umask, directories 0777 & ~umask.
  int64_t uid = -1;
  int64_t gid = -1;
  uint32_t umask = 022;
  bool read_only = false;
  int fuse_threads = 16;  // max threads of the multithreaded session loop
  uint64_t max_read = 0;  // max bytes per read request; 0: the kernel's/libfuse's default
  std::string log_level = "info";
  // "HOST:PORT" of the Prometheus endpoint (/metrics); empty: none.
  std::string metrics_listen;

  // Config files that were read, in order (for messages and --dump-config).
  std::vector<std::string> config_files;
  // Settings found unsafe while resolving (a secret on the command line, in a config file others
  // can read): logged once when the mount starts. They name settings and files, never values.
  std::vector<std::string> warnings;
};

// Where the cache lives when cache_dir is empty: /var/cache/kvfs for root, else
// $XDG_CACHE_HOME/kvfs or ~/.cache/kvfs.
std::string DefaultCacheDir();

// Reads `path` and applies it onto the defaults. Errors: kNotFound / kIoError (unreadable file),
// kInvalidArgument (bad YAML or value), each message starting with the path.
Result<KvfsConfig> LoadConfigFile(const std::string& path);

// Parses YAML text onto the defaults; `source_name` prefixes messages (normally the file path).
Result<KvfsConfig> ParseConfig(const std::string& yaml_text, const std::string& source_name);

// Layered forms of the above: apply onto an existing config. Keys absent from the text keep
// their current values. Unknown keys are logged (spdlog warn) and otherwise ignored.
Status ApplyConfigFile(const std::string& path, KvfsConfig* config);
Status ApplyConfigYaml(const std::string& yaml_text, const std::string& source_name,
                       KvfsConfig* config);

// Applies one kvfs key given as text ("cache_size", "64GiB"). Lists are comma or colon separated.
// kNotFound if `key` is not a kvfs key (callers decide whether that is an error).
Status ApplyConfigValue(const std::string& key, const std::string& value,
                        const std::string& source_name, KvfsConfig* config);

// Sets the source from a URL: s3://bucket[/prefix], s3://host:port/bucket[/prefix],
// s3://bucket.host (LMCache's virtual-hosted form, when `lmcache_form`), or file:///abs/dir.
Status ApplySourceUrl(const std::string& url, bool lmcache_form, KvfsConfig* config);

// Applies KVFS_<KEY> variables (e.g. KVFS_CACHE_SIZE) for every kvfs key, and AWS_REGION /
// AWS_DEFAULT_REGION for the region. Other AWS_* variables are read by the S3 layer itself when
// the config leaves the setting empty. `getenv` is injectable for tests.
using EnvLookup = std::function<const char*(const char* name)>;
Status ApplyEnvironment(const EnvLookup& getenv, KvfsConfig* config);

// Checks settings that depend on each other (chunk sizes vs max_chunk_bytes, part sizes...).
Status ValidateConfig(const KvfsConfig& config);

// The effective configuration as YAML, every kvfs key, secrets shown as "<redacted>".
std::string DumpConfig(const KvfsConfig& config);

// Names of every kvfs key, in documentation order (for --help, tests and the man page check).
std::vector<std::string> ConfigKeyNames();
// True if `key` is a boolean kvfs key (usable as a bare -o flag: "-o allow_other").
bool IsBooleanConfigKey(const std::string& key);

}  // namespace kvfs
