#include "cache/cache_index.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

std::shared_ptr<CacheEntry> Ready(const std::string& key, uint64_t size) {
  auto e = std::make_shared<CacheEntry>();
  e->key = key;
  e->size = size;
  e->state = CacheEntry::State::kReady;
  return e;
}

TEST(CacheIndexTest, WatermarkEvictsLeastRecentlyUsedDownToLowMark) {
  CacheIndex idx(1000, 0.85, 0.2);  // evict above 850, down to 650
  for (int i = 0; i < 8; i++) idx.Insert(Ready("k" + std::to_string(i), 100));
  idx.Touch(idx.Find("k0").get());  // k0 becomes most recently used
  std::vector<std::shared_ptr<CacheEntry>> victims;
  ASSERT_TRUE(idx.MakeRoom(100, &victims).ok());
  ASSERT_EQ(victims.size(), 3u);  // 800 + 100 > 850: evict until 550 + 100 <= 650
  EXPECT_EQ(victims[0]->key, "k1");
  EXPECT_EQ(victims[1]->key, "k2");
  EXPECT_EQ(victims[2]->key, "k3");
  EXPECT_EQ(idx.used_bytes(), 500u);
  EXPECT_EQ(idx.evictions(), 3u);
  EXPECT_EQ(idx.bytes_evicted(), 300u);
  EXPECT_NE(idx.Find("k0"), nullptr);
}

TEST(CacheIndexTest, ADemotedEntryIsEvictedFirst) {
  CacheIndex idx(1000, 0.85, 0.2);
  for (int i = 0; i < 8; i++) idx.Insert(Ready("k" + std::to_string(i), 100));
  idx.Demote(idx.Find("k7").get());  // the most recently used, demoted: a prefetch never read
  std::vector<std::shared_ptr<CacheEntry>> victims;
  ASSERT_TRUE(idx.MakeRoom(100, &victims).ok());
  ASSERT_EQ(victims.size(), 3u);
  EXPECT_EQ(victims[0]->key, "k7");
  EXPECT_EQ(victims[1]->key, "k0");
  EXPECT_EQ(victims[2]->key, "k1");
}

TEST(CacheIndexTest, BelowHighWatermarkNothingIsEvicted) {
  CacheIndex idx(1000, 0.85, 0.2);
  for (int i = 0; i < 7; i++) idx.Insert(Ready("k" + std::to_string(i), 100));
  std::vector<std::shared_ptr<CacheEntry>> victims;
  ASSERT_TRUE(idx.MakeRoom(150, &victims).ok());  // 850: not above the mark
  EXPECT_TRUE(victims.empty());
}

TEST(CacheIndexTest, PinnedEntriesAreSkippedAndMayExhaust) {
  CacheIndex idx(1000, 0.85, 0.2);
  for (int i = 0; i < 9; i++) {
    auto e = Ready("k" + std::to_string(i), 100);
    e->pins = 1;
    idx.Insert(e);
  }
  idx.Find("k8")->pins = 0;
  std::vector<std::shared_ptr<CacheEntry>> victims;
  Status st = idx.MakeRoom(200, &victims);  // only k8 can go: 800 + 200 fits exactly
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(victims[0]->key, "k8");
  victims.clear();
  EXPECT_EQ(idx.MakeRoom(300, &victims).code(), StatusCode::kResourceExhausted);
}

TEST(CacheIndexTest, RemovedPinnedEntryKeepsBytesUntilUnpinned) {
  CacheIndex idx(1000, 0.85, 0.2);
  auto e = Ready("a", 300);
  idx.Insert(e);
  idx.Pin(e.get());
  idx.Remove(e.get());
  EXPECT_EQ(idx.Find("a"), nullptr);
  EXPECT_EQ(idx.used_bytes(), 300u);
  idx.Unpin(e.get());
  EXPECT_EQ(idx.used_bytes(), 0u);
}

TEST(CacheIndexTest, FillingEntriesAreNotEvictionCandidates) {
  CacheIndex idx(1000, 0.85, 0.2);
  auto f = std::make_shared<CacheEntry>();
  f->key = "filling";
  f->size = 800;
  f->pins = 1;
  idx.Insert(f);
  std::vector<std::shared_ptr<CacheEntry>> victims;
  EXPECT_EQ(idx.MakeRoom(300, &victims).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(victims.empty());
}

}  // namespace
}  // namespace kvfs
