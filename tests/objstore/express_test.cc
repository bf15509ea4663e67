// S3 Express One Zone session authentication at the S3 client, against
// tests/objstore/fault_server.py acting as a directory bucket's zonal endpoint
// (--express-session-seconds): data requests carry the CreateSession credentials
// (x-amz-s3session-token, signed for s3express), which are renewed before they expire while
// requests go on; CopyObject is signed with the IAM credentials.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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

}  // namespace
}  // namespace kvfs::testing
