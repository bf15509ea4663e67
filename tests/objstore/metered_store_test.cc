// MeteredStore: the Prometheus text of metrics_listen counts and times what passed through it.
#include "objstore/metered_store.h"

#include <gtest/gtest.h>

#include "tests/fakes/fault_store.h"
#include "tests/fakes/memory_store.h"

namespace kvfs {
namespace {

bool Contains(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

class MeteredStoreTest : public ::testing::Test {
 protected:
  MeteredStoreTest()
      : mem_(std::make_shared<MemoryStore>()),
        faults_(std::make_shared<FaultStore>(mem_)),
        metered_(faults_) {
    mem_->PutObject("obj", "0123456789");
  }
  std::shared_ptr<MemoryStore> mem_;
  std::shared_ptr<FaultStore> faults_;
  MeteredStore metered_;
};

TEST_F(MeteredStoreTest, CountsTimesAndBytesPerOperation) {
  std::string buf(10, '\0');
  GetRequest req;
  req.key = "obj";
  req.length = 10;
  ASSERT_TRUE(metered_.Get(req, buf.data()).ok());
  std::string data = "abc";
  ASSERT_TRUE(metered_.Put("new", Body::FromMemory(data.data(), data.size())).ok());
  EXPECT_EQ(metered_.Head("absent").status().code(), StatusCode::kNotFound);

  const std::string text = metered_.Prometheus();
  EXPECT_TRUE(Contains(text, "# TYPE kvfs_store_request_duration_seconds histogram\n"));
  EXPECT_TRUE(
      Contains(text, "kvfs_store_request_duration_seconds_bucket{op=\"GET\",le=\"+Inf\"} 1\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_request_duration_seconds_count{op=\"PUT\"} 1\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_request_duration_seconds_count{op=\"HEAD\"} 1\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_bytes_total{op=\"GET\"} 10\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_get_first_byte_seconds_count{op=\"GET\"} 1\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_bytes_total{op=\"PUT\"} 3\n"));
  // An absent key is an answer, not a failure.
  EXPECT_TRUE(Contains(text, "kvfs_store_operation_errors_total{op=\"HEAD\"} 0\n"));
}

TEST_F(MeteredStoreTest, CountsFailuresByOperationAndKind) {
  faults_->InjectError(FaultStore::Op::kHead, {Status::Unavailable("injected 503"), 2});
  faults_->InjectError(FaultStore::Op::kList, {Status::PermissionDenied("injected 403"), 1});
  EXPECT_FALSE(metered_.Head("obj").ok());
  EXPECT_FALSE(metered_.Head("obj").ok());
  EXPECT_FALSE(metered_.List(ListRequest{}).ok());
  const std::string text = metered_.Prometheus();
  EXPECT_TRUE(Contains(text, "kvfs_store_operation_errors_total{op=\"HEAD\"} 2\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_operation_errors_total{op=\"LIST\"} 1\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_errors_by_kind_total{kind=\"Unavailable\"} 2\n"));
  EXPECT_TRUE(Contains(text, "kvfs_store_errors_by_kind_total{kind=\"PermissionDenied\"} 1\n"));
  EXPECT_FALSE(Contains(text, "kind=\"NotFound\""));
}

TEST(LatencyHistogramTest, BucketsAreCumulative) {
  LatencyHistogram h;
  h.Observe(std::chrono::microseconds(500));  // <= 1 ms
  h.Observe(std::chrono::milliseconds(20));   // <= 25 ms
  h.Observe(std::chrono::seconds(60));        // +Inf only
  std::string out;
  h.AppendPrometheus("x", "op=\"GET\"", &out);
  EXPECT_TRUE(Contains(out, "x_bucket{op=\"GET\",le=\"0.001\"} 1\n"));
  EXPECT_TRUE(Contains(out, "x_bucket{op=\"GET\",le=\"0.01\"} 1\n"));
  EXPECT_TRUE(Contains(out, "x_bucket{op=\"GET\",le=\"0.025\"} 2\n"));
  EXPECT_TRUE(Contains(out, "x_bucket{op=\"GET\",le=\"30\"} 2\n"));
  EXPECT_TRUE(Contains(out, "x_bucket{op=\"GET\",le=\"+Inf\"} 3\n"));
  EXPECT_TRUE(Contains(out, "x_count{op=\"GET\"} 3\n"));
  EXPECT_TRUE(Contains(out, "x_sum{op=\"GET\"} 60.0205\n"));
}

}  // namespace
}  // namespace kvfs
