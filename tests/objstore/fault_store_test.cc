// FaultStore: the fault injection other layers' tests rely on does what its header says.
#include "tests/fakes/fault_store.h"

#include <gtest/gtest.h>

#include "tests/fakes/memory_store.h"

namespace kvfs {
namespace {

using Op = FaultStore::Op;

class FaultStoreTest : public ::testing::Test {
 protected:
  FaultStoreTest() : mem_(std::make_shared<MemoryStore>()), faults_(mem_) {
    mem_->PutObject("obj", "0123456789");
  }
  Result<std::string> Read(const std::string& key) {
    std::string buf(64, '\0');
    GetRequest req;
    req.key = key;
    req.length = 10;
    KVFS_ASSIGN_OR_RETURN(uint64_t n, faults_.Get(req, buf.data()));
    buf.resize(n);
    return buf;
  }
  std::shared_ptr<MemoryStore> mem_;
  FaultStore faults_;
};

TEST_F(FaultStoreTest, FailsNextNCallsThenRecovers) {
  faults_.InjectError(Op::kGet, {Status::Unavailable("injected 503"), 2});
  EXPECT_EQ(Read("obj").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(Read("obj").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(*Read("obj"), "0123456789");
  EXPECT_EQ(faults_.Calls(Op::kGet), 3u);
  EXPECT_EQ(mem_->Calls(StoreOp::kGet), 1u) << "failed calls do not reach the target";
}

TEST_F(FaultStoreTest, KeyFilterAndForever) {
  mem_->PutObject("other", "abc");
  faults_.InjectError(Op::kHead, {Status::IoError("disk"), FaultStore::kForever, "obj"});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(faults_.Head("obj").status().code(), StatusCode::kIoError);
  EXPECT_TRUE(faults_.Head("other").ok());
  faults_.ClearFaults();
  EXPECT_TRUE(faults_.Head("obj").ok());
}

TEST_F(FaultStoreTest, AfterTargetIsALostReply) {
  faults_.InjectError(Op::kPut, {Status::Unavailable("reply lost"), 1, "", true});
  std::string data = "new";
  auto put = faults_.Put("lost", Body::FromMemory(data.data(), data.size()));
  EXPECT_EQ(put.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(mem_->GetObject("lost"), "new") << "the write happened";
}

TEST_F(FaultStoreTest, TruncatesAndCorruptsGets) {
  faults_.TruncateGets(1, 4);
  EXPECT_EQ(*Read("obj"), "0123");
  EXPECT_EQ(*Read("obj"), "0123456789");
  faults_.CorruptGets(1);
  auto bad = Read("obj");
  ASSERT_TRUE(bad.ok()) << "corruption is silent";
  EXPECT_EQ(bad->size(), 10u);
  EXPECT_NE(*bad, "0123456789");
  EXPECT_EQ(*Read("obj"), "0123456789");
  // A GET of a missing key does not use up a truncation.
  faults_.TruncateGets(1, 2);
  EXPECT_EQ(Read("missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*Read("obj"), "01");
}

TEST_F(FaultStoreTest, DelayStillForwards) {
  faults_.SetDelay(Op::kList, std::chrono::milliseconds(5));
  auto list = faults_.List({});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(faults_.Calls(Op::kList), 1u);
  faults_.ResetCalls();
  EXPECT_EQ(faults_.Calls(Op::kList), 0u);
}

TEST_F(FaultStoreTest, CopyMatchesEitherKey) {
  faults_.InjectError(Op::kCopy, {Status::PermissionDenied("no"), 1, "dst"});
  EXPECT_EQ(faults_.Copy("obj", "dst", {}).status().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(faults_.Copy("obj", "dst", {}).ok());
}

}  // namespace
}  // namespace kvfs
