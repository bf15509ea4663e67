#include "src/store_factory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

// Opens the S3 store against the test server when one is configured.
TEST(StoreFactoryTest, S3StoreAgainstTestServer) {
  const char* endpoint = std::getenv("KVFS_TEST_S3_ENDPOINT");
  if (endpoint == nullptr || *endpoint == '\0') {
    const char* require = std::getenv("KVFS_REQUIRE_S3");
    if (require != nullptr && std::string(require) == "1") {
      FAIL() << "KVFS_REQUIRE_S3=1 but KVFS_TEST_S3_ENDPOINT is not set";
    }
    GTEST_SKIP() << "KVFS_TEST_S3_ENDPOINT not set";
  }
  KvfsConfig config;
  ASSERT_TRUE(ApplySourceUrl("s3://kvfs-factory-test-missing-bucket/p", false, &config).ok());
  config.s3.endpoint = endpoint;
  config.s3.path_style = true;
  config.s3.max_attempts = 1;
  const char* region = std::getenv("KVFS_TEST_S3_REGION");
  if (region != nullptr) config.s3.region = region;
  const char* key = std::getenv("KVFS_TEST_S3_ACCESS_KEY");
  const char* secret = std::getenv("KVFS_TEST_S3_SECRET_KEY");
  if (key != nullptr && secret != nullptr) {
    config.s3.credentials.access_key_id = key;
    config.s3.credentials.secret_access_key = secret;
    config.s3.credentials.source = "test";
  }
  auto opened = OpenStore(config);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->key_prefix, "p/");
  // The bucket does not exist: CheckAccess must say so rather than succeed.
  Status st = opened->store->CheckAccess();
  EXPECT_FALSE(st.ok());
  if (secret != nullptr) {
    EXPECT_EQ(st.ToString().find(secret), std::string::npos);
  }
}

}  // namespace
}  // namespace kvfs
