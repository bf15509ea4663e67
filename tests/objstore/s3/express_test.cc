// S3 Express One Zone session authentication at the S3 client, against
// tests/objstore/fault_server.py acting as a directory bucket's zonal endpoint
// (--express-session-seconds): data requests carry the CreateSession credentials
// (x-amz-s3session-token, signed for s3express), which are renewed before they expire while
// requests go on; CopyObject is signed with the IAM credentials.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "objstore/s3/s3_client.h"
#include "objstore/s3/s3_store.h"
#include "tests/objstore/fault_server_client.h"

namespace kvfs::testing {
namespace {

constexpr char kBucket[] = "kv--use1-az4--x-s3";

TEST(ExpressSessionTest, DataRequestsUseRenewedSessionsAndCopyUsesIam) {
  FaultServer server;
  ASSERT_TRUE(
      server.Start(KVFS_FAULT_SERVER_SCRIPT, kBucket, {"--express-session-seconds", "2"}).ok());
  S3Options o;
  o.bucket = kBucket;
  o.endpoint = server.endpoint();
  o.s3express = true;
  o.path_style = true;  // the fake is path-style only; AWS's zonal endpoints are virtual-hosted
  o.credentials = {"IAMACCESSKEY", "iamsecret", "", "test"};
  auto store = NewS3Store(o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  const std::string data(300'000, 'x');
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int rounds = 0;
  while (std::chrono::steady_clock::now() < end) {
    const std::string key = "c" + std::to_string(rounds++);
    Result<ObjectInfo> put = (*store)->Put(key, Body::FromMemory(data.data(), data.size()));
    ASSERT_TRUE(put.ok()) << put.status().ToString();
    std::string buf(data.size(), '\0');
    GetRequest req;
    req.key = key;
    req.length = data.size();
    Result<uint64_t> got = (*store)->Get(req, buf.data());
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(buf == data);
    ASSERT_TRUE((*store)->Head(key).ok());
    ASSERT_TRUE((*store)->List(ListRequest{}).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Result<ObjectInfo> copied = (*store)->Copy("c0", "copy-of-c0", PutOptions{});
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  ASSERT_TRUE((*store)->Delete("copy-of-c0").ok());

  Result<std::string> sessions = server.Get("/__fault/sessions");
  ASSERT_TRUE(sessions.ok());
  // Sessions of 2 s, renewed halfway: about 5 over 5 s; none of the requests was refused.
  EXPECT_NE(sessions->find("\"rejected\": 0"), std::string::npos) << *sessions;
  EXPECT_EQ(sessions->find("\"created\": 1,"), std::string::npos) << "never renewed: " << *sessions;
  EXPECT_GT(rounds, 10);
}

// No region given: the bucket's own (x-amz-bucket-region on an unsigned HEAD) is used; a server
// that does not say leaves the configured default.
TEST(RegionDiscoveryTest, BucketRegionIsUsedWhenNoneWasGiven) {
  FaultServer server;
  ASSERT_TRUE(server.Start(KVFS_FAULT_SERVER_SCRIPT, "b", {"--bucket-region", "eu-west-1"}).ok());
  S3Options o;
  o.bucket = "b";
  o.endpoint = server.endpoint();
  o.credentials = {"AK", "secret", "", "test"};
  o.discover_region = true;
  auto client = s3::S3Client::Create(o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->options().region, "eu-west-1");

  o.discover_region = false;  // a region was given: kept, whatever the bucket says
  client = s3::S3Client::Create(o);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->options().region, "us-east-1");

  FaultServer silent;
  ASSERT_TRUE(silent.Start(KVFS_FAULT_SERVER_SCRIPT, "b").ok());
  o.endpoint = silent.endpoint();
  o.discover_region = true;
  client = s3::S3Client::Create(o);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->options().region, "us-east-1");
}

}  // namespace
}  // namespace kvfs::testing
