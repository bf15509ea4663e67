// Responses with absurd sizes, against tests/objstore/fault_server.py's "canned" replies: huge
// listing / error / multipart bodies, and sizes that are negative, overflow 64 bits or are not
// numbers (Content-Length, LIST <Size>, Content-Range). Each ends in a clean error naming the
// request - never a crash, an unbounded buffer, or a wrong size handed to the filesystem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "objstore/s3/http_engine.h"
#include "objstore/s3/s3_store.h"
#include "tests/objstore/fault_server_client.h"

namespace kvfs::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kBucket[] = "absurd";

// A JSON string literal (the bodies below hold quotes).
std::string Json(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string ListBody(const std::string& size) {
  return "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>chunk.kv</Key>"
         "<Size>" +
         size + "</Size><ETag>\"e\"</ETag></Contents></ListBucketResult>";
}

// One fake server for the whole suite, started on first use, stopped at exit.
struct SharedServer {
  SharedServer() : start(server.Start(KVFS_FAULT_SERVER_SCRIPT, kBucket)) {}
  FaultServer server;
  Status start;
};

class AbsurdResponseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static SharedServer shared;
    ASSERT_TRUE(shared.start.ok()) << shared.start.ToString();
    server_ = &shared.server;
    ASSERT_TRUE(server_->Reset().ok());
    ASSERT_TRUE(server_->PutObject(kBucket, "obj", std::string(1000, 'x')).ok());
    S3Options o;
    o.bucket = kBucket;
    o.endpoint = server_->endpoint();
    o.credentials = {"FAKEACCESSKEY", "fakesecret", "", "test"};
    o.max_attempts = 3;
    o.backoff_base_ms = 5;
    o.backoff_max_ms = 20;
    o.operation_timeout_ms = 30000;
    auto s = NewS3Store(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = *s;
  }

  // One canned reply (count 1, or -1 for every request) to `method` requests.
  void Canned(const std::string& method, int status, const std::string& body, uint64_t pad = 0,
              const std::string& extra = "", int count = 1) {
    const std::string rule = "[{\"method\":\"" + method +
                             "\",\"action\":\"canned\",\"status\":" + std::to_string(status) +
                             ",\"body\":" + Json(body) + ",\"pad_bytes\":" + std::to_string(pad) +
                             ",\"count\":" + std::to_string(count) + extra + "}]";
    ASSERT_TRUE(server_->AddRules(rule).ok());
  }

  size_t Requests(const std::string& method) {
    auto log = server_->Log();
    EXPECT_TRUE(log.ok());
    size_t n = 0;
    for (const auto& e : log.ok() ? *log : std::vector<FaultServer::LogEntry>{}) {
      n += e.method == method;
    }
    return n;
  }

  Result<uint64_t> Read(uint64_t length = 1000) {
    buf_.assign(length, '\0');
    GetRequest req;
    req.key = "obj";
    req.length = length;
    return store_->Get(req, buf_.data());
  }

  FaultServer* server_ = nullptr;
  std::shared_ptr<ObjectStore> store_;
  std::string buf_;
};

TEST_F(AbsurdResponseTest, HugeListingBodyIsRejectedNamingTheRequest) {
  // A valid document followed by 16 MiB of white space: valid XML, absurd size.
  Canned("GET", 200, ListBody("1"), 16 << 20);
  Result<ListResult> r = store_->List(ListRequest{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal) << r.status().ToString();
  EXPECT_THAT(r.status().ToString(),
              AllOf(HasSubstr("LIST"), HasSubstr(kBucket), HasSubstr("8 MiB")));
  EXPECT_EQ(Requests("GET"), 1u) << "an oversized document is not fetched again";
  EXPECT_TRUE(store_->List(ListRequest{}).ok()) << "the client works on afterwards";
}

TEST_F(AbsurdResponseTest, ListingJustUnderTheBoundIsRead) {
  Canned("GET", 200, ListBody("1"), (8 << 20) - 4096);
  Result<ListResult> r = store_->List(ListRequest{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->objects.size(), 1u);
  EXPECT_EQ(r->objects[0].size, 1u);
}

TEST_F(AbsurdResponseTest, HugeErrorBodyKeepsItsStatusAndIsRetried) {
  Canned("GET", 503, "<Error><Code>SlowDown</Code></Error>", 4 << 20);
  Result<uint64_t> got = Read();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, 1000u);
  EXPECT_EQ(Requests("GET"), 2u);

  ASSERT_TRUE(server_->Reset().ok());
  Canned("GET", 503, "<Error><Code>SlowDown</Code></Error>", 4 << 20, "", -1);
  got = Read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_THAT(got.status().ToString(), AllOf(HasSubstr("503"), HasSubstr("64 KiB")));
}

TEST_F(AbsurdResponseTest, BogusListingSizesAreRejected) {
  for (const std::string size : {"-1", "18446744073709551616", "18446744073709551615",
                                 "9223372036854775808", "12abc", "abc", "", " 1", "0x10"}) {
    SCOPED_TRACE("<Size>" + size + "</Size>");
    ASSERT_TRUE(server_->Reset().ok());
    Canned("GET", 200, ListBody(size));
    Result<ListResult> r = store_->List(ListRequest{});
    ASSERT_FALSE(r.ok()) << "size " << (r.ok() && !r->objects.empty() ? r->objects[0].size : 0);
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    EXPECT_THAT(r.status().ToString(),
                AllOf(HasSubstr("LIST"), HasSubstr("chunk.kv"), HasSubstr("Size")));
  }
  ASSERT_TRUE(server_->Reset().ok());
  Canned("GET", 200, ListBody("9223372036854775807"));  // the largest size a file can have
  Result<ListResult> r = store_->List(ListRequest{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->objects[0].size, 9223372036854775807u);
}

TEST_F(AbsurdResponseTest, BogusHeadContentLengthIsRejected) {
  for (const std::string len : {"-1", "18446744073709551616", "9223372036854775808", "abc"}) {
    SCOPED_TRACE("Content-Length: " + len);
    ASSERT_TRUE(server_->Reset().ok());
    ASSERT_TRUE(server_->PutObject(kBucket, "obj", "x").ok());
    Canned("HEAD", 200, "", 0, ",\"content_length\":" + Json(len) + ",\"headers\":{\"ETag\":\"e\"}",
           -1);
    Result<ObjectInfo> r = store_->Head("obj");
    ASSERT_FALSE(r.ok()) << "size " << (r.ok() ? r->size : 0);
    EXPECT_THAT(r.status().ToString(), HasSubstr("obj"));
  }
}

TEST_F(AbsurdResponseTest, BogusGetSizesAreRejected) {
  struct Case {
    int status;
    std::string extra;
  };
  const Case cases[] = {
      {200, ",\"content_length\":\"-1\""},
      {200, ",\"content_length\":\"18446744073709551616\""},
      {206, ",\"headers\":{\"Content-Range\":\"bytes 0-999/18446744073709551616\"}"},
      {206, ",\"headers\":{\"Content-Range\":\"bytes 0-999/-1\"}"},
      {206, ",\"headers\":{\"Content-Range\":\"bytes 0-18446744073709551615/1000\"}"},
      {206, ",\"headers\":{\"Content-Range\":\"bytes -5-999/1000\"}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.extra);
    ASSERT_TRUE(server_->Reset().ok());
    ASSERT_TRUE(server_->PutObject(kBucket, "obj", std::string(1000, 'x')).ok());
    Canned("GET", c.status, std::string(1000, 'y'), 0, c.extra, -1);
    Result<uint64_t> got = Read();
    EXPECT_FALSE(got.ok()) << "read " << (got.ok() ? *got : 0) << " bytes";
    if (!got.ok()) {
      EXPECT_THAT(got.status().ToString(), HasSubstr("obj"));
    }
  }
}

TEST_F(AbsurdResponseTest, HugeMultipartRepliesAreRejected) {
  Canned("POST", 200,
         "<InitiateMultipartUploadResult><UploadId>id</UploadId></InitiateMultipartUploadResult>",
         9 << 20);
  Result<std::string> id = store_->CreateMultipartUpload("obj", {});
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(id.status().ToString(), AllOf(HasSubstr("CreateMultipartUpload"), HasSubstr("obj")));

  ASSERT_TRUE(server_->Reset().ok());
  Canned("POST", 200,
         "<InitiateMultipartUploadResult><UploadId>" + std::string(100000, 'u') +
             "</UploadId></InitiateMultipartUploadResult>");
  id = store_->CreateMultipartUpload("obj", {});
  ASSERT_FALSE(id.ok()) << id->size();
  EXPECT_THAT(id.status().ToString(), HasSubstr("UploadId"));

  ASSERT_TRUE(server_->Reset().ok());
  Canned("POST", 200,
         "<CompleteMultipartUploadResult><ETag>\"e\"</ETag></CompleteMultipartUploadResult>",
         9 << 20, "", -1);
  Result<ObjectInfo> done = store_->CompleteMultipartUpload("obj", "id", {{1, "e"}}, PutOptions{});
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(done.status().ToString(), HasSubstr("obj"));
}

TEST_F(AbsurdResponseTest, WrongRegionNamesTheBucketsRegion) {
  Canned("GET", 301,
         "<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access "
         "must be addressed using the specified endpoint.</Message></Error>",
         0, ",\"headers\":{\"x-amz-bucket-region\":\"eu-west-1\"}");
  Result<ListResult> r = store_->List(ListRequest{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_THAT(r.status().ToString(),
              AllOf(HasSubstr("region eu-west-1"), HasSubstr("configured region us-east-1"),
                    HasSubstr("set region: eu-west-1")));
}

}  // namespace
}  // namespace kvfs::testing
