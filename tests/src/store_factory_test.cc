#include "src/store_factory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "src/config.h"
#include "src/recovery.h"
#include "src/s3_resolve.h"
#include "tests/support/s3_admin.h"

namespace kvfs {
namespace {

TEST(StoreFactoryTest, NoSourceIsAClearError) {
  auto store = OpenStore(KvfsConfig{});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(store.status().message().find("no store to mount"), std::string::npos);
}

TEST(StoreFactoryTest, DirectoryStoreRoundTrip) {
  char dir[] = "/tmp/kvfs_store_factory_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  KvfsConfig config;
  ASSERT_TRUE(ApplySourceUrl(std::string("file://") + dir, false, &config).ok());
  config.key_prefix = "/chunks";  // normalised by OpenStore
  auto opened = OpenStore(config);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->key_prefix, "chunks/");
  ObjectStore& store = *opened->store;
  EXPECT_TRUE(store.CheckAccess().ok());
  const std::string data = "kv bytes";
  auto put = store.Put("chunks/a.pt", Body::FromMemory(data.data(), data.size()));
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  auto head = store.Head("chunks/a.pt");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, data.size());
  std::filesystem::remove_all(dir);
}

TEST(StoreFactoryTest, S3ExpressEndpointInferred) {
  KvfsConfig config;
  ASSERT_TRUE(ApplySourceUrl("s3://kv--use1-az4--x-s3/p", false, &config).ok());
  config.s3.region = "us-east-1";
  S3Options s3 = EffectiveS3Options(config);
  EXPECT_TRUE(s3.s3express);
  EXPECT_EQ(s3.endpoint, "https://s3express-use1-az4.us-east-1.amazonaws.com");
  EXPECT_FALSE(s3.path_style);

  // An explicit endpoint is kept; ordinary buckets are untouched.
  config.s3.endpoint = "http://127.0.0.1:9000";
  EXPECT_EQ(EffectiveS3Options(config).endpoint, "http://127.0.0.1:9000");
  KvfsConfig plain;
  ASSERT_TRUE(ApplySourceUrl("s3://ordinary/p", false, &plain).ok());
  EXPECT_FALSE(EffectiveS3Options(plain).s3express);
  EXPECT_EQ(EffectiveS3Options(plain).endpoint, "");
}

TEST(StoreFactoryTest, S3ExpressRegionFromTheZoneIdWhenNotGiven) {
  struct Case {
    const char* bucket;
    const char* endpoint;
  } cases[] = {
      {"s3://kv--usw2-az1--x-s3/p", "https://s3express-usw2-az1.us-west-2.amazonaws.com"},
      {"s3://kv--apne1-az4--x-s3/p", "https://s3express-apne1-az4.ap-northeast-1.amazonaws.com"},
      {"s3://kv--euc1-az2--x-s3/p", "https://s3express-euc1-az2.eu-central-1.amazonaws.com"},
      {"s3://kv--use1-az4--x-s3/p", "https://s3express-use1-az4.us-east-1.amazonaws.com"},
      {"s3://kv--usgw1-az1--x-s3/p", "https://s3express-usgw1-az1.us-gov-west-1.amazonaws.com"},
  };
  for (const Case& c : cases) {
    KvfsConfig config;
    ASSERT_TRUE(ApplySourceUrl(c.bucket, false, &config).ok());
    S3Options s3 = EffectiveS3Options(config);
    EXPECT_EQ(s3.endpoint, c.endpoint) << c.bucket;
    EXPECT_FALSE(s3.discover_region);
  }
  // A region that is given wins (an endpoint of its own is the user's business).
  KvfsConfig given;
  ASSERT_TRUE(ApplySourceUrl("s3://kv--usw2-az1--x-s3/p", false, &given).ok());
  ASSERT_TRUE(ApplyConfigValue("region", "us-west-2", "test", &given).ok());
  EXPECT_EQ(EffectiveS3Options(given).region, "us-west-2");
  // A zone ID of another form leaves the region alone.
  KvfsConfig odd;
  ASSERT_TRUE(ApplySourceUrl("s3://kv--zone9--x-s3/p", false, &odd).ok());
  EXPECT_EQ(EffectiveS3Options(odd).region, KvfsConfig{}.s3.region);
}

TEST(StoreFactoryTest, RegionIsDiscoveredOnlyOnAwsWhenNotGiven) {
  KvfsConfig config;
  ASSERT_TRUE(ApplySourceUrl("s3://ordinary/p", false, &config).ok());
  EXPECT_TRUE(EffectiveS3Options(config).discover_region);
  EXPECT_FALSE(EffectiveS3Options(config).path_style) << "AWS: virtual-hosted";
  ASSERT_TRUE(ApplyConfigValue("region", "eu-west-1", "test", &config).ok());
  EXPECT_FALSE(EffectiveS3Options(config).discover_region);

  KvfsConfig rgw;
  ASSERT_TRUE(ApplySourceUrl("s3://127.0.0.1:7480/b/p", false, &rgw).ok());
  EXPECT_FALSE(EffectiveS3Options(rgw).discover_region);
  EXPECT_TRUE(EffectiveS3Options(rgw).path_style);

  KvfsConfig dotted;
  ASSERT_TRUE(ApplySourceUrl("s3://my.bucket/p", false, &dotted).ok());
  EXPECT_TRUE(EffectiveS3Options(dotted).path_style) << "dots: AWS's certificate would not match";
}

// The AWS SDKs' convention, as MinIO and Ceph users configure it: an endpoint from
// AWS_ENDPOINT_URL(_S3) decides the addressing as a configured one does, and --dump-config names it
// rather than AWS's regional endpoint.
TEST(StoreFactoryTest, EndpointFromTheEnvironmentIsPathStyleOffAws) {
  const char* kVars[] = {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"};
  for (const char* var : kVars) {
    unsetenv("AWS_ENDPOINT_URL");
    unsetenv("AWS_ENDPOINT_URL_S3");
    setenv(var, "http://127.0.0.1:7480", 1);
    KvfsConfig config;
    ASSERT_TRUE(ApplySourceUrl("s3://b/p", false, &config).ok());
    S3Options s3 = EffectiveS3Options(config);
    EXPECT_EQ(s3.endpoint, "http://127.0.0.1:7480") << var;
    EXPECT_TRUE(s3.path_style) << var << ": not AWS, so path style";
    EXPECT_FALSE(s3.discover_region) << var;
    const std::string dump = DumpConfig(config);
    EXPECT_NE(dump.find(std::string("# store: http://127.0.0.1:7480 (from ") + var + ")"),
              std::string::npos)
        << dump;
    EXPECT_EQ(dump.find("AWS's regional endpoint"), std::string::npos) << dump;
  }
  // An AWS endpoint in the environment keeps AWS's virtual-hosted default; one in the config wins.
  setenv("AWS_ENDPOINT_URL_S3", "https://s3.eu-west-1.amazonaws.com", 1);
  KvfsConfig aws;
  ASSERT_TRUE(ApplySourceUrl("s3://b/p", false, &aws).ok());
  EXPECT_FALSE(EffectiveS3Options(aws).path_style);
  aws.s3.endpoint = "http://minio.local:9000";
  EXPECT_TRUE(EffectiveS3Options(aws).path_style);
  unsetenv("AWS_ENDPOINT_URL");
  unsetenv("AWS_ENDPOINT_URL_S3");
}

// Stale multipart uploads: aborted only under kvfs's own prefix; at a bucket's root, where other
// applications' uploads are listed too, only when asked.
TEST(StoreFactoryTest, StaleUploadsAreCollectedOnlyUnderAPrefixUnlessAsked) {
  EXPECT_TRUE(CollectsStaleUploads("kv/", 3600, false));
  EXPECT_FALSE(CollectsStaleUploads("", 3600, false));
  EXPECT_TRUE(CollectsStaleUploads("", 3600, true));
  EXPECT_FALSE(CollectsStaleUploads("kv/", 0, true)) << "0: never";
  KvfsConfig config;
  EXPECT_FALSE(config.stale_upload_gc_at_root);
  ASSERT_TRUE(ApplyConfigValue("stale_upload_gc_at_root", "true", "test", &config).ok());
  EXPECT_TRUE(config.stale_upload_gc_at_root);
}

// Against the test S3 server: a config written the way a user would (host:port source with
// disable_tls, credentials in the file) opens a working store; a missing bucket is reported.
TEST(StoreFactoryTest, S3StoreAgainstTestServer) {
  auto env = S3TestOptionsFromEnv();
  if (!env.ok()) {
    const char* require = std::getenv("KVFS_REQUIRE_S3");
    if (require != nullptr && std::string(require) == "1") {
      FAIL() << "KVFS_REQUIRE_S3=1 but the test S3 server is not configured: "
             << env.status().ToString();
    }
    GTEST_SKIP() << "KVFS_TEST_S3_ENDPOINT not set";
  }
  std::string endpoint = env->endpoint;
  bool tls = endpoint.rfind("https://", 0) == 0;
  std::string host = endpoint.substr(endpoint.find("://") + 3);
  S3Options admin = *env;
  admin.bucket = UniqueBucketName("kvfs-factory");
  ASSERT_TRUE(CreateBucketForTest(admin).ok());

  std::string yaml = "source: s3://" + host + "/" + admin.bucket + "/pre\n" +
                     "disable_tls: " + (tls ? "false" : "true") + "\n" + "region: " + env->region +
                     "\n" + "access_key_id: " + env->credentials.access_key_id + "\n" +
                     "secret_access_key: " + env->credentials.secret_access_key + "\n";
  auto config = ParseConfig(yaml, "test.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto opened = OpenStore(*config);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->key_prefix, "pre/");
  ObjectStore& store = *opened->store;
  EXPECT_TRUE(store.CheckAccess().ok());
  const std::string data(1000, 'k');
  std::string key = opened->key_prefix + "model@1@0@abc@bfloat16.pt";
  ASSERT_TRUE(store.Put(key, Body::FromMemory(data.data(), data.size())).ok());
  auto head = store.Head(key);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, data.size());

  // The same config pointed at a bucket that does not exist.
  KvfsConfig missing = *config;
  missing.s3.bucket = admin.bucket + "-missing";
  missing.s3.max_attempts = 1;
  auto bad = OpenStore(missing);
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  Status st = bad->store->CheckAccess();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.ToString().find(env->credentials.secret_access_key), std::string::npos);

  EXPECT_TRUE(DeleteBucketForTest(admin).ok());
}

}  // namespace
}  // namespace kvfs
