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
#include "cache/chunk_cache.h"      // ChunkCacheOptions
#include "fs/fs_options.h"          // FsOptions
#include "fs/fuse/fuse_options.h"   // FuseOptions
#include "fs/read/cached_reader.h"  // CachedReaderOptions
#include "objstore/s3/s3_options.h"
#include "tier/tier_options.h"

namespace kvfs {

enum class SourceKind { kNone, kS3, kDir };

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// One setting, one field: the keys that configure a layer bind to that layer's own options
// struct (FsOptions, ChunkCacheOptions, CachedReaderOptions, FuseOptions, TierOptions, S3Options),
// so each default is the struct's and is written once; the key table (src/config_keys.cc) holds
// each key's name, range and unit. A new setting is one field there, one row in the table, the
// man page and the example config (tests/src/config_docs_test.cc checks they name every key).
// Values that the mount derives rather than reads (the key prefix the source resolves to, upload
// and GET parallelism from max_inflight, the spool directory) are filled in by src/mount.cc.
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

  // --- The layers' own options (each key's field is named in src/config_keys.cc) ---
  FsOptions fs;                // chunks, names, uploads, lookups, modes (fs/fs_options.h)
  ChunkCacheOptions cache;     // cache_dir (empty: DefaultCacheDir()), cache_size, watermarks
  CachedReaderOptions reader;  // get_part_size, verify
  FuseOptions fuse;            // fuse_threads, max_read, allow_other, read_only, blocking_timeout
  TierOptions tier;            // store_capacity, store_max_age, store_gc_interval

  // --- The daemon's own ---
  // At mount, multipart uploads under the prefix begun longer ago than this are aborted (left by
  // writers or daemons that died mid-upload). 0: never.
  int stale_upload_age_secs = 3600;
  // Abort stale uploads also when mounted at a bucket's root (src/recovery.h: the rule).
  bool stale_upload_gc_at_root = false;
  // Leave the daemon dumpable (core dumps, ptrace): for debugging a crash; the dump then holds
  // the credentials in memory. Off: PR_SET_DUMPABLE 0 (src/process_setup.h).
  bool core_dumps = false;
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
