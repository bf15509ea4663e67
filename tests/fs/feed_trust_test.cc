// A fleet feed entry is anyone's who can write the bucket, or corrupted on the way: one that
// contradicts the local copy of a chunk is checked against the store (one HEAD, in the
// background) and never trusted to evict that copy or to stand for it (issue 47 item 7). A real
// removal or a real new version still reaches this node: the store says so.
#include <chrono>
#include <thread>

#include "fs/fleet_feed.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class FeedTrustTest : public CachedFsTestBase {
 protected:
  void SetUp() override {
    CachedFsTestBase::SetUp();
    options_.subdirectories = false;
    mem_->PutObject("p/a.bin", "the chunk's bytes");
    MountCached();
    auto first = ReadFile("a.bin");  // fills the local copy
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    // The fill commits just after the last bytes were read.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!cache_->Peek("p/a.bin")) {
      ASSERT_LT(std::chrono::steady_clock::now(), until) << "the read did not fill the cache";
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  void Feed(FeedEvent::Kind kind, ObjectInfo info) {
    heads_before_ = mem_->Calls(StoreOp::kHead);
    FeedEvent e;
    e.kind = kind;
    e.info = std::move(info);
    e.info.key = "p/a.bin";
    fs_->ApplyFeed(e);
  }
  // The background check of the contradicted copy has asked the store.
  void WaitForTheCheck() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (mem_->Calls(StoreOp::kHead) == heads_before_) {
      ASSERT_LT(std::chrono::steady_clock::now(), until) << "the feed entry was not checked";
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // its answer applied
  }
  uint64_t heads_before_ = 0;
};

TEST_F(FeedTrustTest, AForgedRemovalDoesNotEvictTheCopy) {
  const uint64_t gets = mem_->Calls(StoreOp::kGet);
  Feed(FeedEvent::kRemoved, {});
  WaitForTheCheck();
  auto again = ReadFile("a.bin");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, "the chunk's bytes");
  EXPECT_EQ(mem_->Calls(StoreOp::kGet), gets) << "the good local copy was evicted";
}

TEST_F(FeedTrustTest, ARealRemovalDropsTheCopyOnceTheStoreSaysSo) {
  ASSERT_TRUE(mem_->Delete("p/a.bin").ok());
  Feed(FeedEvent::kRemoved, {});
  WaitForTheCheck();
  EXPECT_EQ(fs_->Lookup(1, "a.bin").status().code(), StatusCode::kNotFound);
}

TEST_F(FeedTrustTest, AForgedNewVersionDoesNotStandForTheChunk) {
  ObjectInfo forged;
  forged.size = 999;
  forged.etag = "forged";
  Feed(FeedEvent::kStored, forged);
  WaitForTheCheck();
  auto e = fs_->Lookup(1, "a.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->attr.size, 17u) << "the forged size is shown";
  auto again = ReadFile("a.bin");
  ASSERT_TRUE(again.ok()) << "a forged entry cost a read: " << again.status().ToString();
  EXPECT_EQ(*again, "the chunk's bytes");
}

TEST_F(FeedTrustTest, ARealNewVersionReplacesTheCopy) {
  ASSERT_TRUE(mem_->Delete("p/a.bin").ok());
  mem_->PutObject("p/a.bin", "a new version, longer");
  auto head = mem_->Head("p/a.bin");
  ASSERT_TRUE(head.ok());
  Feed(FeedEvent::kStored, *head);
  WaitForTheCheck();
  auto again = ReadFile("a.bin");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, "a new version, longer");
}

}  // namespace
}  // namespace kvfs
