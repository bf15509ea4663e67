// HTTP-level fault tests of the S3 client against tests/objstore/fault_server.py: the client
// returns the right bytes after retries (resuming a broken body from the next byte), or a clear
// error within its time limit - never wrong bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <random>

#include "base/deadline.h"
#include "objstore/s3/s3_store.h"
#include "tests/objstore/fault_server_client.h"

namespace kvfs::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr char kBucket[] = "faults";
constexpr uint64_t kSize = 1 << 20;

std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string Hex(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {kHex[c >> 4], kHex[c & 15]};
  return out;
}

// First byte of a "bytes=N-M" header, or -1.
int64_t RangeStart(const std::string& range) {
  if (range.rfind("bytes=", 0) != 0) return -1;
  return std::stoll(range.substr(6));
}

class FaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new FaultServer();
    start_status_ = new Status(server_->Start(KVFS_FAULT_SERVER_SCRIPT, kBucket));
  }
  static void TearDownTestSuite() {
    delete server_;
    delete start_status_;
  }

  void SetUp() override {
    ASSERT_TRUE(start_status_->ok()) << start_status_->ToString();
    ASSERT_TRUE(server_->Reset().ok());
    data_ = Bytes(kSize, 1);
    ASSERT_TRUE(server_->PutObject(kBucket, "obj", data_).ok());
    store_ = MakeStore(4);
  }

  std::shared_ptr<ObjectStore> MakeStore(int attempts, int stall_ms = 1000, int op_ms = 10000) {
    S3Options o;
    o.bucket = kBucket;
    o.endpoint = server_->endpoint();
    o.credentials = {"FAKEACCESSKEY", "fakesecret", "", "test"};
    o.max_attempts = attempts;
    o.backoff_base_ms = 5;
    o.backoff_max_ms = 50;
    o.connect_timeout_ms = 2000;
    o.stall_timeout_ms = stall_ms;
    o.operation_timeout_ms = op_ms;
    o.conditional_create = ConditionalCreateMode::kHeader;
    auto s = NewS3Store(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  Result<std::string> Read(ObjectStore& store, uint64_t offset = 0, uint64_t length = kSize,
                           const std::string& if_match = "") {
    std::string buf(length, '\0');
    GetRequest req;
    req.key = "obj";
    req.offset = offset;
    req.length = length;
    req.if_match = if_match;
    KVFS_ASSIGN_OR_RETURN(uint64_t n, store.Get(req, buf.data()));
    buf.resize(n);
    return buf;
  }

  std::vector<FaultServer::LogEntry> Requests(const std::string& method) {
    std::vector<FaultServer::LogEntry> out;
    auto log = server_->Log();
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    if (!log.ok()) return out;
    for (auto& e : *log) {
      if (e.method == method) out.push_back(e);
    }
    return out;
  }

  static FaultServer* server_;
  static Status* start_status_;
  std::string data_;
  std::shared_ptr<ObjectStore> store_;
};

FaultServer* FaultTest::server_ = nullptr;
Status* FaultTest::start_status_ = nullptr;

TEST_F(FaultTest, RetriesSlowDownAnd500) {
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"GET","action":"status","status":503,"code":"SlowDown"},
                                 {"method":"GET","action":"status","status":500,
                                  "code":"InternalError"}])")
                  .ok());
  const StoreStats before = store_->Stats();
  auto got = Read(*store_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data_);
  EXPECT_EQ(Requests("GET").size(), 3u);
  const StoreStats after = store_->Stats();  // what `kvfs stats` shows
  EXPECT_EQ(after.requests - before.requests, 3u);
  EXPECT_EQ(after.retries - before.retries, 2u);
  EXPECT_EQ(after.errors, before.errors);
  EXPECT_EQ(after.in_flight, 0u);
}

TEST_F(FaultTest, PersistentSlowDownGivesClearErrorAfterMaxAttempts) {
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"GET","action":"status","status":503,"count":-1}])").ok());
  auto got = Read(*store_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_THAT(got.status().ToString(), AnyOf(HasSubstr("SlowDown"), HasSubstr("503")));
  EXPECT_EQ(Requests("GET").size(), 4u) << "max_attempts bounds the attempts";
  EXPECT_GE(store_->Stats().errors, 1u);
}

TEST_F(FaultTest, NotFoundIsNotRetried) {
  GetRequest req;
  req.key = "missing";
  req.length = 10;
  char buf[10];
  auto got = store_->Get(req, buf);
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
  EXPECT_EQ(Requests("GET").size(), 1u);
  EXPECT_EQ(store_->Stats().errors, 0u) << "an absent key is an answer, not an error";
}

TEST_F(FaultTest, TruncatedBodyResumesFromNextByte) {
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"GET","action":"truncate","after_bytes":300000}])").ok());
  auto got = Read(*store_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data_) << "resumed bytes must be the object's bytes";
  auto gets = Requests("GET");
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(RangeStart(gets[1].range), 300000) << "resume asked for '" << gets[1].range << "'";
  EXPECT_FALSE(gets[1].if_match.empty()) << "a resume must pin the version with If-Match";
}

// The cache fills through GetStreamAsync: a reset mid-body resumes from the next byte, and the
// sink sees every byte once, in order, across the two attempts.
TEST_F(FaultTest, StreamedGetResumesWithoutRepeatingBytes) {
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"GET","action":"reset","after_bytes":250000}])").ok());
  std::string got;
  std::promise<Result<uint64_t>> p;
  store_->GetStreamAsync(
      GetRequest{"obj", 0, kSize, "", nullptr},
      [&](const char* d, size_t n) {
        got.append(d, n);
        return Status::OK();
      },
      [&](Result<uint64_t> r) { p.set_value(std::move(r)); });
  Result<uint64_t> r = p.get_future().get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, kSize);
  EXPECT_TRUE(got == data_) << "streamed bytes differ (size " << got.size() << ")";
  auto gets = Requests("GET");
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_GT(RangeStart(gets[1].range), 0);
  EXPECT_FALSE(gets[1].if_match.empty());
}

TEST_F(FaultTest, TruncatedRangedReadResumesInsideTheRange) {
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"GET","action":"truncate","after_bytes":100000}])").ok());
  auto got = Read(*store_, 1000, 500000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data_.substr(1000, 500000));
  auto gets = Requests("GET");
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(RangeStart(gets[0].range), 1000);
  EXPECT_EQ(gets[1].range, "bytes=101000-500999");
}

TEST_F(FaultTest, ConnectionResetMidBodyResumes) {
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"GET","action":"reset","after_bytes":400000}])").ok());
  auto got = Read(*store_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data_);
  auto gets = Requests("GET");
  ASSERT_EQ(gets.size(), 2u);
  // A reset may discard bytes the client had not read yet: the resume starts at or before 400000.
  int64_t start = RangeStart(gets[1].range);
  EXPECT_GE(start, 0) << gets[1].range;
  EXPECT_LE(start, 400000) << gets[1].range;
}

TEST_F(FaultTest, RepeatedTruncationsStillConverge) {
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"GET","action":"truncate","after_bytes":200000,
                                  "count":3}])")
                  .ok());
  auto got = Read(*store_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data_);
  auto gets = Requests("GET");
  ASSERT_EQ(gets.size(), 4u);
  EXPECT_EQ(RangeStart(gets[3].range), 600000);
}

TEST_F(FaultTest, ObjectReplacedDuringResumeNeverMixesVersions) {
  std::string replacement = Bytes(kSize, 2);
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"GET","action":"truncate","after_bytes":300000,
                                  "replace_with":")" +
                             Hex(replacement) + R"("}])")
                  .ok());
  auto got = Read(*store_);
  if (got.ok()) {
    EXPECT_TRUE(*got == data_ || *got == replacement) << "bytes of two versions were mixed";
  } else {
    EXPECT_THAT(got.status().code(), AnyOf(StatusCode::kPreconditionFailed, StatusCode::kDataLoss))
        << got.status().ToString();
  }
}

TEST_F(FaultTest, ServerIgnoringRangeStillGivesTheRightBytes) {
  ASSERT_TRUE(server_->AddRules(R"([{"method":"GET","action":"ignore_range"}])").ok());
  auto got = Read(*store_, 5000, 1000);
  if (got.ok()) {
    EXPECT_TRUE(*got == data_.substr(5000, 1000));
  } else {
    EXPECT_NE(got.status().code(), StatusCode::kOk);  // an error is acceptable, wrong bytes not
  }
}

TEST_F(FaultTest, StallEndsWithDeadlineNotWrongBytes) {
  auto store = MakeStore(2, /*stall_ms=*/500, /*op_ms=*/3000);
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"GET","action":"stall","after_bytes":1000,
                                  "seconds":20,"count":-1}])")
                  .ok());
  auto got = Read(*store);
  ASSERT_FALSE(got.ok()) << "a stalled transfer cannot succeed";
  EXPECT_THAT(got.status().code(), AnyOf(StatusCode::kDeadlineExceeded, StatusCode::kUnavailable))
      << got.status().ToString();
  EXPECT_FALSE(got.status().message().empty());
}

TEST_F(FaultTest, PutRetriesAndStoresTheRightBytes) {
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"PUT","action":"status","status":503,"count":2},
                                 {"method":"PUT","action":"reset","count":1}])")
                  .ok());
  std::string body = Bytes(200000, 3);
  auto put = store_->Put("new", Body::FromMemory(body.data(), body.size()));
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(Requests("PUT").size(), 4u);
  std::string buf(body.size(), '\0');
  GetRequest req;
  req.key = "new";
  req.length = body.size();
  auto got = store_->Get(req, buf.data());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(buf == body);
}

TEST_F(FaultTest, CompleteMultipartThatFailedAfterApplyingIsDetected) {
  std::string part = Bytes(1000, 4);
  auto id = store_->CreateMultipartUpload("mp", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto etag = store_->UploadPart("mp", *id, 1, Body::FromMemory(part.data(), part.size()));
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  // The server completes the upload, then answers 500: the client must not report a failure
  // for an object that exists (nor blindly retry into NoSuchUpload).
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"POST","query":"uploadId","action":"status",
                                  "status":500,"code":"InternalError","after":true}])")
                  .ok());
  auto info = store_->CompleteMultipartUpload("mp", *id, {{1, *etag}}, {});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, part.size());
  EXPECT_FALSE(Requests("HEAD").empty()) << "the client checks with HEAD after a failed complete";
}

// A close() completes its multipart upload under blocking_timeout. The retries after a stalled
// completion used to run on the loop thread under operation_timeout_ms only (30-80 s).
TEST_F(FaultTest, StalledCompleteEndsByTheCallersDeadline) {
  auto store = MakeStore(4, /*stall_ms=*/20000, /*op_ms=*/20000);
  std::string part = Bytes(1000, 5);
  auto id = store->CreateMultipartUpload("stalled", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto etag = store->UploadPart("stalled", *id, 1, Body::FromMemory(part.data(), part.size()));
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  ASSERT_TRUE(server_
                  ->AddRules(R"([{"method":"POST","query":"uploadId","action":"stall",
                                  "seconds":20,"count":-1}])")
                  .ok());
  const int64_t start = MonotonicMs();
  Result<ObjectInfo> info = Status::Internal("unset");
  {
    const ScopedDeadline deadline(1500, "blocking_timeout=1.5s");
    info = store->CompleteMultipartUpload("stalled", *id, {{1, *etag}}, {});
  }
  const int64_t took = MonotonicMs() - start;
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kDeadlineExceeded) << info.status().ToString();
  EXPECT_LT(took, 4000) << info.status().ToString();
}

}  // namespace
}  // namespace kvfs::testing
