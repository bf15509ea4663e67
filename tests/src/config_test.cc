// kvfs's own config keys: parsing, defaults, error messages, redaction, environment.
#include "src/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "tests/src/log_capture.h"

namespace kvfs {
namespace {

constexpr const char* kFile = "/etc/kvfs.yaml";

std::string ErrorOf(const std::string& yaml) {
  auto c = ParseConfig(yaml, kFile);
  return c.ok() ? "(ok)" : c.status().message();
}

TEST(ConfigTest, Defaults) {
  KvfsConfig c;
  EXPECT_EQ(c.source_kind, SourceKind::kNone);
  EXPECT_EQ(c.fs.max_chunk_bytes, 256 * kMiB);
  EXPECT_EQ(c.fs.temp_patterns, (std::vector<std::string>{"*.tmp", "*.tmp.*", "*.tmp[0-9a-f]*"}));
  EXPECT_EQ(c.fs.metadata_ttl_secs, 30);
  EXPECT_EQ(c.stale_upload_age_secs, 3600);
  EXPECT_EQ(c.fs.cached_chunk_trust_secs, 3600);
  EXPECT_EQ(c.fuse.blocking_timeout_ms, 30 * 1000);
  EXPECT_EQ(c.s3.circuit_breaker_failures, 5);
  EXPECT_EQ(c.s3.circuit_breaker_cooldown_ms, 5000);
  EXPECT_DOUBLE_EQ(c.cache.high_watermark, 0.85);
  EXPECT_DOUBLE_EQ(c.cache.evict_ratio, 0.2);
  EXPECT_EQ(c.fs.unlink_policy, UnlinkPolicy::kLocal);
  EXPECT_EQ(c.fs.exists_policy, ExistsPolicy::kSameSizeOk);
  EXPECT_EQ(c.fs.fanout_hex_chars, 0);
  EXPECT_TRUE(c.fs.subdirectories);
  EXPECT_TRUE(c.s3.verify_tls);
  EXPECT_TRUE(ValidateConfig(c).ok());
  EXPECT_FALSE(DefaultCacheDir().empty());
}

TEST(ConfigTest, FlatDirectory) {
  auto c = ParseConfig("subdirectories: false\n", kFile);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->fs.subdirectories);
  EXPECT_FALSE(ParseConfig("subdirectories: maybe\n", kFile).ok());
}

TEST(ConfigTest, EmptyFileKeepsDefaults) {
  auto c = ParseConfig("", kFile);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->cache.capacity, KvfsConfig{}.cache.capacity);
  c = ParseConfig("# only a comment\n", kFile);
  ASSERT_TRUE(c.ok());
}

TEST(ConfigTest, AllKvfsKeysTopLevel) {
  auto c = ParseConfig(R"(
source: s3://my.bucket/a/b/
endpoint: http://127.0.0.1:7480
region: eu-central-1
addressing: virtual
verify_tls: false
ca_bundle: /etc/ssl/ca.pem
profile: prod
access_key_id: AKIDEXAMPLE
secret_access_key: s3cr3t
session_token: t0k3n
max_inflight: 128
max_connections: 96
http_loops: 3
connect_timeout_ms: 2s
stall_timeout_ms: 15000
operation_timeout_ms: 2m
blocking_timeout: 10
max_attempts: 7
backoff_base_ms: 20
backoff_max_ms: 1s
circuit_breaker_failures: 3
circuit_breaker_cooldown_ms: 2s
conditional_create: head-check
get_part_size: 32MiB
multipart_threshold: 128MiB
multipart_part_size: 64MiB
cache_dir: /dev/shm/kvfs
cache_size: 64GiB
cache_high_watermark: 0.9
cache_evict_ratio: 0.25
chunk_sizes: [8MiB, 32 MiB, 10485760]
max_chunk_bytes: 128MiB
temp_patterns: ["*.tmp", "*.partial"]
unlink_policy: remote
exists_policy: eexist
metadata_cache_ttl_secs: 1m
stale_upload_age_secs: 2h
cached_chunk_trust_secs: 2m
fanout: 2
statfs_size: 1TiB
allow_other: yes
read_only: True
fuse_threads: 32
max_read: 1MiB
log_level: warning
)",
                       kFile);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source_kind, SourceKind::kS3);
  EXPECT_EQ(c->s3.bucket, "my.bucket");  // kvfs form: dots stay in the bucket name
  EXPECT_EQ(c->key_prefix, "a/b/");
  EXPECT_EQ(c->s3.endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(c->s3.region, "eu-central-1");
  EXPECT_FALSE(c->s3.path_style);
  EXPECT_FALSE(c->s3.verify_tls);
  EXPECT_EQ(c->s3.ca_bundle, "/etc/ssl/ca.pem");
  EXPECT_EQ(c->s3.profile, "prod");
  EXPECT_EQ(c->s3.credentials.access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(c->s3.credentials.secret_access_key, "s3cr3t");
  EXPECT_EQ(c->s3.credentials.session_token, "t0k3n");
  EXPECT_EQ(c->s3.credentials.source, kFile);
  EXPECT_EQ(c->s3.max_inflight, 128);
  EXPECT_EQ(c->s3.max_connections, 96);
  EXPECT_EQ(c->s3.http_loops, 3);
  EXPECT_EQ(c->s3.connect_timeout_ms, 2000);
  EXPECT_EQ(c->s3.stall_timeout_ms, 15000);
  EXPECT_EQ(c->s3.operation_timeout_ms, 120'000);
  EXPECT_EQ(c->fuse.blocking_timeout_ms, 10 * 1000);
  EXPECT_EQ(c->s3.max_attempts, 7);
  EXPECT_EQ(c->s3.backoff_base_ms, 20);
  EXPECT_EQ(c->s3.backoff_max_ms, 1000);
  EXPECT_EQ(c->s3.circuit_breaker_failures, 3);
  EXPECT_EQ(c->s3.circuit_breaker_cooldown_ms, 2000);
  EXPECT_EQ(c->s3.conditional_create, ConditionalCreateMode::kHeadCheck);
  EXPECT_EQ(c->reader.part_size, 32 * kMiB);
  EXPECT_EQ(c->fs.multipart_threshold, 128 * kMiB);
  EXPECT_EQ(c->fs.multipart_part_size, 64 * kMiB);
  EXPECT_EQ(c->cache.dir, "/dev/shm/kvfs");
  EXPECT_EQ(c->cache.capacity, 64 * kGiB);
  EXPECT_DOUBLE_EQ(c->cache.high_watermark, 0.9);
  EXPECT_DOUBLE_EQ(c->cache.evict_ratio, 0.25);
  EXPECT_EQ(c->fs.chunk_sizes, (std::vector<uint64_t>{8 * kMiB, 10 * kMiB, 32 * kMiB}));
  EXPECT_EQ(c->fs.max_chunk_bytes, 128 * kMiB);
  EXPECT_EQ(c->fs.temp_patterns, (std::vector<std::string>{"*.tmp", "*.partial"}));
  EXPECT_EQ(c->fs.unlink_policy, UnlinkPolicy::kRemote);
  EXPECT_EQ(c->fs.exists_policy, ExistsPolicy::kEexist);
  EXPECT_EQ(c->fs.metadata_ttl_secs, 60);
  EXPECT_EQ(c->stale_upload_age_secs, 7200);
  EXPECT_EQ(c->fs.cached_chunk_trust_secs, 120);
  EXPECT_EQ(c->fs.fanout_hex_chars, 2);
  EXPECT_EQ(c->fs.statfs_total_bytes, uint64_t{1} << 40);
  EXPECT_TRUE(c->fuse.allow_other);
  EXPECT_TRUE(c->fuse.read_only);
  EXPECT_EQ(c->fuse.max_threads, 32);
  EXPECT_EQ(c->fuse.max_read, kMiB);
  EXPECT_EQ(c->log_level, "warn");
  EXPECT_TRUE(ValidateConfig(*c).ok());
}

TEST(ConfigTest, KvfsSectionAndListAsString) {
  auto c = ParseConfig("kvfs:\n  cache_size: 1GiB\n  chunk_sizes: 8MiB,16MiB\n", kFile);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cache.capacity, kGiB);
  EXPECT_EQ(c->fs.chunk_sizes, (std::vector<uint64_t>{8 * kMiB, 16 * kMiB}));
}

TEST(ConfigTest, FileSource) {
  auto c = ParseConfig("source: file:///var/lib/kvfs/store/\n", kFile);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source_kind, SourceKind::kDir);
  EXPECT_EQ(c->dir_root, "/var/lib/kvfs/store");
  EXPECT_EQ(ErrorOf("source: file://relative/dir\n"),
            "/etc/kvfs.yaml: key 'source': 'file://relative/dir' is not an absolute directory URL "
            "(use file:///abs/dir)");
}

TEST(ConfigTest, InvalidValuesNameFileKeyAndReason) {
  const std::map<std::string, std::string> cases = {
      {"cache_size: 12XB",
       "key 'cache_size': '12XB' is not a size (e.g. 8MiB, 64GiB or a byte count)"},
      {"get_part_size: 1K", "key 'get_part_size': '1K' is out of range (64KiB to 5GiB)"},
      {"multipart_part_size: 1MiB",
       "key 'multipart_part_size': '1MiB' is out of range (5MiB to 5GiB)"},
      {"max_chunk_bytes: 0", "key 'max_chunk_bytes': '0' is out of range (1 to 1PiB)"},
      {"chunk_sizes: [8MiB, big]",
       "key 'chunk_sizes': 'big' is not a size (e.g. 8MiB, 64GiB or a byte count)"},
      {"chunk_sizes: [0]",
       "key 'chunk_sizes': '0' is not a size (e.g. 8MiB, 64GiB or a byte count)"},
      {"max_inflight: 0", "key 'max_inflight': '0' is not an integer from 1 to 4096"},
      {"max_inflight: many", "key 'max_inflight': 'many' is not an integer from 1 to 4096"},
      {"max_attempts: 1000", "key 'max_attempts': '1000' is not an integer from 1 to 100"},
      {"fanout: 9", "key 'fanout': '9' is not an integer from 0 to 8"},
      {"fuse_threads: 0", "key 'fuse_threads': '0' is not an integer from 1 to 1024"},
      {"allow_other: perhaps", "key 'allow_other': 'perhaps' is not a boolean (true/false)"},
      {"verify_tls: 2", "key 'verify_tls': '2' is not a boolean (true/false)"},
      {"cache_high_watermark: 1.5",
       "key 'cache_high_watermark': '1.5' is not a fraction in (0, 1] (e.g. 0.85)"},
      {"cache_evict_ratio: 0",
       "key 'cache_evict_ratio': '0' is not a fraction in (0, 1] (e.g. 0.85)"},
      {"connect_timeout_ms: fast",
       "key 'connect_timeout_ms': 'fast' is not a duration (e.g. 500ms, 10s, 2m)"},
      {"operation_timeout_ms: 0",
       "key 'operation_timeout_ms': '0' is out of range (1 to 86400000 ms)"},
      {"metadata_cache_ttl_secs: 1500ms",
       "key 'metadata_cache_ttl_secs': '1500ms' is not a duration (e.g. 500ms, 10s, 2m)"},
      {"metadata_cache_ttl_secs: 2w",
       "key 'metadata_cache_ttl_secs': '2w' is not a duration (e.g. 500ms, 10s, 2m)"},
      {"conditional_create: maybe",
       "key 'conditional_create': 'maybe' is not one of: auto, header, head-check"},
      {"unlink_policy: shred", "key 'unlink_policy': 'shred' is not one of: remote, local, deny"},
      {"exists_policy: overwrite",
       "key 'exists_policy': 'overwrite' is not one of: same-size-ok, eexist"},
      {"addressing: dns", "key 'addressing': 'dns' is not one of: auto, path, virtual"},
      {"log_level: loud",
       "key 'log_level': 'loud' is not one of: trace, debug, info, warn, error, critical, off"},
      {"region: ''", "key 'region': must not be empty"},
      {"bucket: ''", "key 'bucket': must not be empty"},
      {"source: ftp://x",
       "key 'source': 'ftp://x' is not a supported source (use "
       "s3://bucket[/prefix], hf://buckets/<namespace>/<bucket>[/<prefix>] or "
       "file:///absolute/dir)"},
      {"source: s3://", "key 'source': 's3://' names no bucket"},
      {"source: s3://h:1/", "key 'source': 's3://h:1/' names no bucket after the host:port"},
      {"cache_size: [1, 2]", "key 'cache_size': expected a single value"},
      {"cache_size: {a: 1}", "key 'cache_size': expected a value, not a mapping"},
      {"kvfs: 3", "key 'kvfs': expected a mapping"},
  };
  for (const auto& [yaml, message] : cases) {
    EXPECT_EQ(ErrorOf(yaml + "\n"), std::string(kFile) + ": " + message) << yaml;
  }
}

TEST(ConfigTest, FailedFileLeavesConfigUnchanged) {
  KvfsConfig c;
  EXPECT_FALSE(ApplyConfigYaml("cache_size: 1GiB\nfanout: 99\n", kFile, &c).ok());
  EXPECT_EQ(c.cache.capacity, KvfsConfig{}.cache.capacity);
}

TEST(ConfigTest, YamlSyntaxErrorHasLine) {
  std::string e = ErrorOf("cache_size: 1GiB\nchunk_sizes: [8MiB\n");
  EXPECT_EQ(e.rfind("/etc/kvfs.yaml: invalid YAML at line ", 0), 0u) << e;
  EXPECT_EQ(ErrorOf("- a\n- b\n"), "/etc/kvfs.yaml: expected a mapping of keys at the top level");
}

TEST(ConfigTest, MissingFileNamesThePath) {
  auto c = LoadConfigFile("/nonexistent/kvfs.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent/kvfs.yaml: cannot read config file"),
            std::string::npos)
      << c.status().message();
}

TEST(ConfigTest, UnknownKeysWarnAndAreIgnored) {
  LogCapture log;
  auto c = ParseConfig("cache_sise: 1GiB\nkvfs:\n  fan_out: 2\nlocal_cpu: False\n", kFile);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(log.text().find("warning: /etc/kvfs.yaml: ignoring unknown key 'cache_sise'"),
            std::string::npos)
      << log.text();
  EXPECT_NE(log.text().find("ignoring unknown key 'kvfs.fan_out'"), std::string::npos);
  EXPECT_EQ(log.text().find("local_cpu"), std::string::npos);  // LMCache key: silent
}

TEST(ConfigTest, SecretsNeverInMessagesOrDumps) {
  // A secret given as a list fails without echoing it.
  std::string e = ErrorOf("secret_access_key: [hunter2]\n");
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  e = ErrorOf("extra_config:\n  aws_secret_access_key: {x: hunter2}\n");
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  // A URL with user:password is not echoed.
  e = ErrorOf("source: s3://AKID:hunter2@host/bucket\n");
  EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  EXPECT_NE(e.find("credentials inside the source URL are not supported"), std::string::npos);

  auto c =
      ParseConfig("secret_access_key: hunter2\nsession_token: tok3n\naccess_key_id: AKID\n", kFile);
  ASSERT_TRUE(c.ok());
  std::string dump = DumpConfig(*c);
  EXPECT_EQ(dump.find("hunter2"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("tok3n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("secret_access_key: <redacted>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("session_token: <redacted>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("access_key_id: AKID"), std::string::npos) << dump;
}

TEST(ConfigTest, DumpRoundTrips) {
  auto c =
      ParseConfig("source: s3://b/p\ncache_size: 3GiB\nchunk_sizes: [8MiB]\nfanout: 3\n", kFile);
  ASSERT_TRUE(c.ok());
  std::string dump = DumpConfig(*c);
  auto again = ParseConfig(dump, "dump");
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << dump;
  EXPECT_EQ(DumpConfig(*again), dump);
  // Every key is in the dump, but path_style: shown as `addressing`.
  for (const std::string& key : ConfigKeyNames()) {
    if (key == "path_style") continue;
    // A region not given is shown as a comment: loading the dump must not make it given.
    const std::string shown = key == "region" ? "\n# region:" : "\n" + key + ":";
    EXPECT_NE(("\n" + dump).find(shown), std::string::npos) << key;
  }
}

TEST(ConfigTest, CrossKeyValidation) {
  KvfsConfig c;
  c.fs.chunk_sizes = {512 * kMiB};
  EXPECT_EQ(ValidateConfig(c).message(),
            "configuration: key 'chunk_sizes': 512MiB is larger than max_chunk_bytes (256MiB)");
  c = KvfsConfig{};
  c.cache.high_watermark = 0.1;
  EXPECT_EQ(ValidateConfig(c).message(),
            "configuration: key 'cache_evict_ratio': must not exceed cache_high_watermark");
  c = KvfsConfig{};
  c.fs.temp_patterns = {"dir/*.tmp"};
  EXPECT_FALSE(ValidateConfig(c).ok());
}

TEST(ConfigTest, EnvironmentVariables) {
  std::map<std::string, std::string> env = {{"KVFS_CACHE_SIZE", "2GiB"},
                                            {"KVFS_CHUNK_SIZES", "8MiB:16MiB"},
                                            {"AWS_REGION", "ap-south-1"},
                                            {"AWS_DEFAULT_REGION", "us-west-1"}};
  auto lookup = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  KvfsConfig c;
  ASSERT_TRUE(ApplyEnvironment(lookup, &c).ok());
  EXPECT_EQ(c.cache.capacity, 2 * kGiB);
  EXPECT_EQ(c.fs.chunk_sizes, (std::vector<uint64_t>{8 * kMiB, 16 * kMiB}));
  EXPECT_EQ(c.s3.region, "ap-south-1");

  env["KVFS_FANOUT"] = "x";
  Status st = ApplyEnvironment(lookup, &c);
  EXPECT_EQ(st.message(),
            "environment KVFS_FANOUT: key 'fanout': 'x' is not an integer from 0 to 8");
}

TEST(ConfigTest, ApplyConfigValueUnknownKey) {
  KvfsConfig c;
  Status st = ApplyConfigValue("nope", "1", "command line", &c);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
}

// Keys bound to a layer's field in its own unit: blocking_timeout is read in seconds but kept in
// milliseconds (FuseOptions), so a value in ms is kept whole and dumped so that it reads back.
TEST(ConfigTest, KeysKeptInTheLayersUnits) {
  KvfsConfig c;
  ASSERT_TRUE(ApplyConfigValue("blocking_timeout", "1500ms", "command line", &c).ok());
  EXPECT_EQ(c.fuse.blocking_timeout_ms, 1500);
  EXPECT_NE(DumpConfig(c).find("\nblocking_timeout: 1500ms\n"), std::string::npos) << DumpConfig(c);
  ASSERT_TRUE(ApplyConfigValue("blocking_timeout", "2m", "command line", &c).ok());
  EXPECT_EQ(c.fuse.blocking_timeout_ms, 120'000);
  EXPECT_NE(DumpConfig(c).find("\nblocking_timeout: 120\n"), std::string::npos);
  EXPECT_EQ(ApplyConfigValue("blocking_timeout", "-1", "command line", &c).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(c.fuse.blocking_timeout_ms, 120'000) << "a refused value changes nothing";
  // A uint32_t field: its range is checked before it is narrowed.
  EXPECT_EQ(ApplyConfigValue("max_background", "0", "command line", &c).message(),
            "command line: key 'max_background': '0' is not an integer from 1 to 65535");
  EXPECT_EQ(ApplyConfigValue("max_background", "4294967297", "command line", &c).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(ApplyConfigValue("max_background", "256", "command line", &c).ok());
  EXPECT_EQ(c.fuse.max_background, 256u);
  // statfs_size 0 (the default) stands for the cache's size, filled in at mount.
  EXPECT_EQ(c.fs.statfs_total_bytes, 0u);
}

// Owner and modes of the files the mount shows: numeric ids, an octal umask.
TEST(ConfigTest, OwnerAndUmaskKeys) {
  KvfsConfig c;
  EXPECT_EQ(c.fs.uid, static_cast<uid_t>(-1));
  EXPECT_EQ(c.fs.gid, static_cast<gid_t>(-1));
  EXPECT_EQ(c.fs.dir_mode, 0777u & ~022u);  // umask 022
  ASSERT_TRUE(ApplyConfigValue("uid", "1000", "command line", &c).ok());
  ASSERT_TRUE(ApplyConfigValue("gid", "4294967294", "command line", &c).ok());
  ASSERT_TRUE(ApplyConfigValue("umask", "0027", "command line", &c).ok());
  EXPECT_EQ(c.fs.uid, 1000u);
  EXPECT_EQ(c.fs.gid, 4294967294u);
  EXPECT_EQ(c.fs.dir_mode, 0777u & ~027u);  // umask 027
  ASSERT_TRUE(ApplyConfigValue("umask", "7", "command line", &c).ok());
  EXPECT_EQ(c.fs.dir_mode, 0777u & ~07u);  // umask 07
  EXPECT_NE(DumpConfig(c).find("\numask: 0007\n"), std::string::npos) << DumpConfig(c);
  EXPECT_EQ(ApplyConfigValue("uid", "alice", "command line", &c).message(),
            "command line: key 'uid': 'alice' is not a numeric id (-1 for kvfs's own, or 0 to "
            "4294967294)");
  for (const char* bad : {"0999", "8", "01777", "", "-1"}) {
    EXPECT_EQ(ApplyConfigValue("umask", bad, "command line", &c).message(),
              std::string("command line: key 'umask': '") + bad +
                  "' is not an octal mode from 000 to 0777 (e.g. 022)");
  }
  auto f = ParseConfig("uid: 0\ngid: 0\numask: 077\n", kFile);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->fs.uid, 0u);
  EXPECT_EQ(f->fs.file_mode, 0600u);  // umask 077
}

}  // namespace
}  // namespace kvfs
