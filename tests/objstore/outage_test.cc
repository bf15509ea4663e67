// Outages and slow stores, at the S3 client against tests/objstore/fault_server.py: a caller's
// deadline (blocking_timeout) bounds a whole operation, retries and queueing included; the
// circuit breaker fails fast while the endpoint does not answer and lets a probe through after
// its cool-down; 408 and connection resets are retried; a server that ignores Range or whose
// listing never advances gets a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "base/deadline.h"
#include "objstore/s3/s3_store.h"
#include "tests/objstore/fault_server_client.h"

namespace kvfs::testing {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr char kBucket[] = "outage";

// A generous bound: these tests prove that nothing hangs, not how fast it fails.
constexpr auto kNeverHangs = std::chrono::seconds(10);

class OutageTest : public ::testing::Test {
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
    ASSERT_TRUE(server_->PutObject(kBucket, "obj", std::string(100'000, 'o')).ok());
  }

  // Slow limits on purpose: only the caller's deadline or the breaker can end things quickly.
  S3Options Options() {
    S3Options o;
    o.bucket = kBucket;
    o.endpoint = server_->endpoint();
    o.credentials = {"FAKEACCESSKEY", "fakesecret", "", "test"};
    o.max_attempts = 5;
    o.backoff_base_ms = 5;
    o.backoff_max_ms = 50;
    o.connect_timeout_ms = 2000;
    o.stall_timeout_ms = 60'000;
    o.operation_timeout_ms = 120'000;
    o.circuit_breaker_failures = 0;
    return o;
  }
  std::shared_ptr<ObjectStore> MakeStore(const S3Options& o) {
    auto s = NewS3Store(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  static FaultServer* server_;
  static Status* start_status_;
};

FaultServer* OutageTest::server_ = nullptr;
Status* OutageTest::start_status_ = nullptr;

TEST_F(OutageTest, CallersDeadlineEndsTheWholeOperation) {
  auto store = MakeStore(Options());
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"HEAD","action":"stall","seconds":60,"count":-1}])").ok());
  const auto start = Clock::now();
  Result<ObjectInfo> head = [&] {
    ScopedDeadline deadline(1500, "blocking_timeout=1500ms");
    return store->Head("obj");
  }();
  EXPECT_LT(Clock::now() - start, kNeverHangs);
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.status().code(), StatusCode::kDeadlineExceeded) << head.status().ToString();
  EXPECT_THAT(head.status().message(), HasSubstr("blocking_timeout=1500ms"));
  EXPECT_THAT(head.status().message(), HasSubstr(server_->endpoint()));
}

TEST_F(OutageTest, RequestWaitingForATransferSlotEndsAtItsDeadline) {
  S3Options o = Options();
  o.max_inflight = 1;
  auto store = MakeStore(o);
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"GET","action":"stall","seconds":60,"count":1}])").ok());
  // The one slot is taken by a GET that will not finish for a long time.
  std::string buf(100'000, '\0');
  std::promise<Result<uint64_t>> stalled;
  GetRequest req;
  req.key = "obj";
  req.length = buf.size();
  store->GetAsync(req, buf.data(), [&](Result<uint64_t> r) { stalled.set_value(r); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = Clock::now();
  Result<ObjectInfo> head = [&] {
    ScopedDeadline deadline(1000, "blocking_timeout=1s");
    return store->Head("obj");
  }();
  EXPECT_LT(Clock::now() - start, kNeverHangs);
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.status().code(), StatusCode::kDeadlineExceeded) << head.status().ToString();
  store.reset();  // cancels the stalled GET
  stalled.get_future().wait();
}

TEST_F(OutageTest, CircuitBreakerFailsFastThenProbes) {
  S3Options o = Options();
  o.circuit_breaker_failures = 2;
  o.circuit_breaker_cooldown_ms = 1000;
  o.max_attempts = 1;
  auto store = MakeStore(o);
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"HEAD","action":"stall","seconds":60,"count":-1}])").ok());
  for (int i = 0; i < 2; i++) {
    ScopedDeadline deadline(500, "blocking_timeout=500ms");
    EXPECT_FALSE(store->Head("obj").ok());
  }
  EXPECT_EQ(store->Stats().breaker_opens, 1u);
  EXPECT_EQ(store->Stats().breaker_open, 1u);
  // Open: refused without a request, with a message that names the endpoint.
  const auto start = Clock::now();
  Result<ObjectInfo> fast = store->Head("obj");
  EXPECT_LT(Clock::now() - start, kNeverHangs);
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(fast.status().message(), HasSubstr(server_->endpoint()));
  EXPECT_THAT(fast.status().message(), HasSubstr("failing fast"));
  EXPECT_GE(store->Stats().breaker_rejected, 1u);
  // The store comes back: after the cool-down one probe goes out, succeeds, and closes it.
  ASSERT_TRUE(server_->Reset().ok());
  ASSERT_TRUE(server_->PutObject(kBucket, "obj", "back").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Result<ObjectInfo> probe = store->Head("obj");
  ASSERT_TRUE(probe.ok()) << probe.status().ToString();
  EXPECT_EQ(probe->size, 4u);
  EXPECT_EQ(store->Stats().breaker_open, 0u);
  EXPECT_TRUE(store->Head("obj").ok());
}

TEST_F(OutageTest, Http408IsRetried) {
  auto store = MakeStore(Options());
  ASSERT_TRUE(
      server_->AddRules(R"([{"method":"HEAD","action":"status","status":408,"code":""}])").ok());
  Result<ObjectInfo> head = store->Head("obj");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(store->Stats().retries, 1u);
}

TEST_F(OutageTest, ConnectionResetIsRetried) {
  auto store = MakeStore(Options());
  ASSERT_TRUE(server_->AddRules(R"([{"method":"HEAD","action":"reset","count":2}])").ok());
  Result<ObjectInfo> head = store->Head("obj");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_GE(store->Stats().retries, 1u);
}

TEST_F(OutageTest, ServerIgnoringRangeGetsAClearError) {
  auto store = MakeStore(Options());
  ASSERT_TRUE(server_->AddRules(R"([{"method":"GET","action":"ignore_range","count":-1}])").ok());
  std::string buf(1000, '\0');
  GetRequest req;
  req.key = "obj";
  req.offset = 5000;
  req.length = buf.size();
  Result<uint64_t> n = store->Get(req, buf.data());
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.status().message(), HasSubstr("ignored the Range header"));
  EXPECT_EQ(n.status().code(), StatusCode::kIoError);
  // A whole-object read needs no Range support.
  std::string all(100'000, '\0');
  req.offset = 0;
  req.length = all.size();
  Result<uint64_t> whole = store->Get(req, all.data());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, all.size());
}

TEST_F(OutageTest, ListingThatRepeatsItsTokenGetsAClearError) {
  auto store = MakeStore(Options());
  ASSERT_TRUE(server_->AddRules(R"([{"method":"GET","action":"repeat_token","count":-1}])").ok());
  ListRequest req;
  req.prefix = "p/";
  Result<ListResult> first = store->List(req);  // "loop" for a first page: fine so far
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->truncated);
  req.continuation_token = first->next_continuation_token;
  Result<ListResult> again = store->List(req);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("pagination loop"));
}

}  // namespace
}  // namespace kvfs::testing
