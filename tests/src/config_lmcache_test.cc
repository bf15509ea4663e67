// LMCache's S3 backend config files (copied verbatim from its documentation into testdata/) load
// as-is, and their keys map onto kvfs's settings.
#include <gtest/gtest.h>

#include <string>

#include "src/config.h"
#include "src/store_factory.h"
#include "tests/src/log_capture.h"

namespace kvfs {
namespace {

std::string TestFile(const std::string& name) {
  return std::string(KVFS_DAEMON_TESTDATA) + "/" + name;
}

// Loads a file, asserting success and that no key was reported unknown.
KvfsConfig Load(const std::string& name) {
  LogCapture log;
  auto config = LoadConfigFile(TestFile(name));
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(log.text(), "") << "LMCache keys must be accepted silently";
  return config.ok() ? *config : KvfsConfig{};
}

TEST(LmcacheConfigTest, BasicV1) {
  KvfsConfig c = Load("lmcache_v1_basic.yaml");
  EXPECT_EQ(c.source_kind, SourceKind::kS3);
  EXPECT_EQ(c.s3.bucket, "your-bucket-name");
  EXPECT_EQ(c.s3.endpoint, "");  // AWS's regional endpoint, resolved by the S3 layer
  EXPECT_EQ(c.s3.region, "us-east-1");
  EXPECT_EQ(c.s3.max_inflight, 64);                  // s3_num_io_threads
  EXPECT_EQ(c.fuse.blocking_timeout_ms, 10 * 1000);  // blocking_timeout_secs
  EXPECT_EQ(c.s3.operation_timeout_ms, 100'000);     // background operations keep their limit
  EXPECT_EQ(c.key_prefix, "");
  EXPECT_EQ(c.config_files, std::vector<std::string>{TestFile("lmcache_v1_basic.yaml")});
}

TEST(LmcacheConfigTest, BasicV2UsesMinOfConcurrencyAndInflight) {
  KvfsConfig c = Load("lmcache_v2_basic.yaml");
  EXPECT_EQ(c.s3.bucket, "your-bucket-name");
  EXPECT_EQ(c.s3.max_inflight, 64);
  EXPECT_EQ(c.fuse.blocking_timeout_ms, 100 * 1000);

  auto mixed = ParseConfig(
      "extra_config:\n  s3_max_io_concurrency: 32\n  s3_max_inflight_reqs: 100\n"
      "  s3_num_io_threads: 8\n",
      "mixed.yaml");
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_EQ(mixed->s3.max_inflight, 32);
}

TEST(LmcacheConfigTest, SaveUnfullChunkFalseLearnsChunkSizes) {
  auto full_only = ParseConfig("chunk_size: 256\nsave_unfull_chunk: false\n", "lm.yaml");
  ASSERT_TRUE(full_only.ok()) << full_only.status().ToString();
  EXPECT_TRUE(full_only->fs.learn_chunk_sizes);
  auto unfull = ParseConfig("save_unfull_chunk: true\n", "lm.yaml");
  ASSERT_TRUE(unfull.ok());
  EXPECT_FALSE(unfull->fs.learn_chunk_sizes);
  EXPECT_FALSE(
      ParseConfig("chunk_size: 256\n", "lm.yaml")->fs.learn_chunk_sizes);  // off unless asked
  // kvfs's own key wins over LMCache's in one file.
  auto both = ParseConfig("save_unfull_chunk: false\nlearn_chunk_sizes: false\n", "lm.yaml");
  ASSERT_TRUE(both.ok());
  EXPECT_FALSE(both->fs.learn_chunk_sizes);
  auto bad = ParseConfig("save_unfull_chunk: maybe\n", "lm.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("save_unfull_chunk"), std::string::npos)
      << bad.status().message();
}

TEST(LmcacheConfigTest, S3ExpressV1) {
  KvfsConfig c = Load("lmcache_v1_s3express.yaml");
  EXPECT_EQ(c.s3.bucket, "{BUCKET_NAME}");
  EXPECT_EQ(c.s3.endpoint, "s3express-{AZ_ID}.{REGION}.amazonaws.com");
  EXPECT_FALSE(c.s3.path_style);
  EXPECT_TRUE(c.s3.s3express);
  EXPECT_TRUE(c.s3.prefer_http2);
  EXPECT_EQ(c.s3.region, "{REGION}");
}

TEST(LmcacheConfigTest, S3ExpressV2WithPrefix) {
  KvfsConfig c = Load("lmcache_v2_s3express.yaml");
  EXPECT_TRUE(c.s3.s3express);
  EXPECT_EQ(c.key_prefix, "{FILE_PREFIX}/");
  EXPECT_EQ(c.s3.max_inflight, 64);
}

TEST(LmcacheConfigTest, CoreWeaveV1WithCredentials) {
  KvfsConfig c = Load("lmcache_v1_coreweave.yaml");
  EXPECT_EQ(c.s3.bucket, "test-127");
  EXPECT_EQ(c.s3.endpoint, "cwlota.com");
  EXPECT_FALSE(c.s3.path_style);
  EXPECT_TRUE(c.s3.disable_tls);
  EXPECT_FALSE(c.s3.s3express);
  EXPECT_FALSE(c.s3.prefer_http2);
  EXPECT_EQ(c.s3.region, "US-WEST-04A");
  EXPECT_EQ(c.s3.max_inflight, 320);
  EXPECT_EQ(c.s3.credentials.access_key_id, "your-access-key-id");
  EXPECT_EQ(c.s3.credentials.secret_access_key, "your-secret-access-key");
  EXPECT_EQ(c.s3.credentials.source, TestFile("lmcache_v1_coreweave.yaml"));
  // The secret never shows in a dump.
  std::string dump = DumpConfig(c);
  EXPECT_EQ(dump.find("your-secret-access-key"), std::string::npos) << dump;
  EXPECT_NE(dump.find("secret_access_key: <redacted>"), std::string::npos) << dump;
}

TEST(LmcacheConfigTest, CoreWeaveV2WithPrefix) {
  KvfsConfig c = Load("lmcache_v2_coreweave.yaml");
  EXPECT_EQ(c.s3.bucket, "test-127");
  EXPECT_EQ(c.s3.endpoint, "cwlota.com");
  EXPECT_EQ(c.key_prefix, "test-2/");
  EXPECT_EQ(c.s3.max_inflight, 320);
  c.s3.credentials.access_key_id = "AKID";  // this file has none; avoid depending on ~/.aws
  c.s3.credentials.secret_access_key = "secret";
  auto store = OpenStore(c);  // builds (does not contact) an S3 store
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->key_prefix, "test-2/");
}

TEST(LmcacheConfigTest, PortingGuideStorageBackend) {
  KvfsConfig c = Load("lmcache_porting_guide.yaml");
  EXPECT_EQ(c.s3.bucket, "your-lmcache-bucket");
  EXPECT_EQ(c.key_prefix, "kv-cache/");
  EXPECT_EQ(c.s3.region, "us-west-2");
}

TEST(LmcacheConfigTest, AwsVirtualHostedUrlGivesRegion) {
  auto c = ParseConfig("remote_url: s3://lmcache-bucket.s3.eu-west-1.amazonaws.com\n", "f.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->s3.bucket, "lmcache-bucket");
  EXPECT_EQ(c->s3.endpoint, "s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(c->s3.region, "eu-west-1");
  EXPECT_FALSE(c->s3.path_style);
}

TEST(LmcacheConfigTest, HostPortRemoteUrlIsPathStyle) {
  auto c = ParseConfig("remote_url: s3://localhost:8080/bench\n", "f.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->s3.bucket, "bench");
  EXPECT_EQ(c->s3.endpoint, "localhost:8080");
  EXPECT_TRUE(c->s3.path_style);
}

TEST(LmcacheConfigTest, KvfsKeysWinOverLmcacheKeysWhateverTheOrder) {
  auto c = ParseConfig(
      "kvfs:\n  max_inflight: 16\n  key_prefix: mine\n  endpoint: http://127.0.0.1:7480\n"
      "remote_url: s3://test-127.cwlota.com\n"
      "extra_config:\n  s3_max_inflight_reqs: 320\n  s3_file_prefix: theirs\n",
      "f.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->s3.max_inflight, 16);
  EXPECT_EQ(c->key_prefix, "mine/");
  EXPECT_EQ(c->s3.endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(c->s3.bucket, "test-127");
}

TEST(LmcacheConfigTest, UnknownExtraConfigKeyWarns) {
  LogCapture log;
  auto c = ParseConfig("extra_config:\n  s3_region: us-east-1\n  s3_turbo: true\n", "f.yaml");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(log.text().find("f.yaml: ignoring unknown key 'extra_config.s3_turbo'"),
            std::string::npos)
      << log.text();
}

TEST(LmcacheConfigTest, InvalidLmcacheValuesNameTheKey) {
  auto c = ParseConfig("blocking_timeout_secs: soon\n", "/etc/kvfs.yaml");
  EXPECT_EQ(c.status().message(),
            "/etc/kvfs.yaml: key 'blocking_timeout_secs': 'soon' is not a number of seconds");
  c = ParseConfig("extra_config:\n  s3_max_inflight_reqs: 0\n", "/etc/kvfs.yaml");
  EXPECT_EQ(c.status().message(),
            "/etc/kvfs.yaml: key 'extra_config.s3_max_inflight_reqs': '0' is not an integer from "
            "1 to 4096");
  c = ParseConfig("extra_config:\n  s3_prefer_http2: sometimes\n", "/etc/kvfs.yaml");
  EXPECT_EQ(c.status().message(),
            "/etc/kvfs.yaml: key 'extra_config.s3_prefer_http2': 'sometimes' is not a boolean "
            "(true/false)");
  c = ParseConfig("remote_url: http://bucket\n", "/etc/kvfs.yaml");
  EXPECT_NE(c.status().message().find("/etc/kvfs.yaml: key 'remote_url': 'http://bucket' is not a "
                                      "supported source"),
            std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace kvfs

namespace kvfs {
namespace {

TEST(LmcacheConfigTest, HuggingFaceBucketPlugin) {
  LogCapture log;
  auto c = LoadConfigFile(TestFile("lmcache_hfbucket.yaml"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source_kind, SourceKind::kS3);
  EXPECT_EQ(c->s3.endpoint, "https://s3.hf.co/my-org");  // the gateway's namespace path
  EXPECT_EQ(c->s3.bucket, "lmcache-kv");
  EXPECT_EQ(c->key_prefix, "prod/");
  EXPECT_EQ(c->s3.region, "us-east-1");
  EXPECT_TRUE(c->s3.path_style);
  EXPECT_EQ(c->cache.dir, "/tmp/lmcache-hfbucket");  // download_tmp_dir
  EXPECT_EQ(c->fs.metadata_ttl_secs, 30);
  // token_env is explained (the gateway takes the S3 key pair), never silently dropped.
  EXPECT_NE(log.text().find("remote_storage_plugin.hfbucket.token_env"), std::string::npos);
  EXPECT_NE(log.text().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

TEST(LmcacheConfigTest, HuggingFaceInstanceQualifiedPluginsFirstWins) {
  LogCapture log;
  auto c = ParseConfig(
      "extra_config:\n"
      "  remote_storage_plugin.hfbucket.us.bucket_handle: \"hf://buckets/org/kv/us\"\n"
      "  remote_storage_plugin.hfbucket.eu.bucket_handle: \"hf://buckets/org/kv/eu\"\n",
      "two.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->key_prefix, "us/");
  EXPECT_NE(log.text().find("hfbucket.eu"), std::string::npos) << log.text();
}

TEST(LmcacheConfigTest, HuggingFaceHandleErrorsNameTheForm) {
  for (const char* bad : {"hf://buckets/org", "hf://models/org/m", "hf://buckets//b"}) {
    KvfsConfig c;
    Status st = ApplySourceUrl(bad, false, &c);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("hf://buckets/<namespace>/<bucket>[/<prefix>]"), std::string::npos)
        << st.message();
  }
  KvfsConfig c;
  ASSERT_TRUE(ApplySourceUrl("hf://buckets/user/b", false, &c).ok());
  EXPECT_EQ(c.s3.endpoint, "https://s3.hf.co/user");
  EXPECT_EQ(c.key_prefix, "");
}

}  // namespace
}  // namespace kvfs
