// MetaCache: bounded by bytes, least recently used first, and a huge listing (every object put
// once) neither clears it nor pushes out the names lookups keep reading.
#include "fs/meta_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "fs/dir_listing_cache.h"
#include "fs/fs_options.h"

namespace kvfs {
namespace {

using std::chrono::seconds;

ObjectInfo Info(const std::string& key) {
  ObjectInfo o;
  o.key = key;
  o.size = 8;
  o.etag = "0123456789abcdef0123456789abcdef";
  return o;
}

std::string Key(int i) { return "model/rank0/" + std::to_string(i) + ".bin"; }

TEST(MetaCacheTest, StaysWithinItsBytes) {
  constexpr size_t kBytes = 256 * 1024;
  MetaCache cache(seconds(30), kBytes);
  for (int i = 0; i < 100000; ++i) {
    cache.PutFile(Info(Key(i)));
    ASSERT_LE(cache.bytes(), kBytes);
  }
  // Full, not cleared: the most recent names are all there.
  const size_t per_entry = MetaCache::kEntryOverhead + Key(99999).size() + 32;
  EXPECT_GE(cache.size(), kBytes / per_entry - 1);
  for (int i = 99999; i > 99999 - 100; --i) EXPECT_TRUE(cache.Get(Key(i)).has_value()) << i;
  EXPECT_FALSE(cache.Get(Key(0)).has_value());
  // The key comes back though it is kept once.
  EXPECT_EQ(cache.Get(Key(99999))->info.key, Key(99999));
}

// The bounds docs/tuning.md (Memory) and the man page (MEMORY) state.
TEST(MetaCacheTest, TheStatedBounds) {
  EXPECT_EQ(FsOptions{}.metadata_cache_max_bytes, 64u << 20);
  EXPECT_EQ(MetaCache::kEntryOverhead, 384u);
  EXPECT_EQ(DirListingCache::Options{}.max_total_names, 200000u);
  EXPECT_EQ(DirListingCache::Options{}.max_entries, 100000u);
  EXPECT_EQ(DirListingCache::kMaxDirs, 131072u);
}

TEST(MetaCacheTest, AHugeListingKeepsTheNamesLookupsRead) {
  constexpr size_t kBytes = 256 * 1024;
  MetaCache cache(seconds(30), kBytes);
  for (int i = 0; i < 50; ++i) cache.PutFile(Info("hot/" + std::to_string(i)));
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(cache.Get("hot/" + std::to_string(i)).has_value());
  // A listing of a directory far larger than the cache: each object put once, never read.
  for (int i = 0; i < 100000; ++i) cache.PutFile(Info(Key(i)));
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(cache.Get("hot/" + std::to_string(i)).has_value()) << i;
  EXPECT_LE(cache.bytes(), kBytes);
  EXPECT_GT(cache.size(), 100u);
}

TEST(MetaCacheTest, EraseAndReplaceKeepTheCount) {
  MetaCache cache(seconds(30), 1 << 20);
  cache.PutFile(Info("a"));
  const size_t one = cache.bytes();
  cache.PutFile(Info("a"));
  cache.PutMissing("a");
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Get("a")->kind, MetaEntry::kMissing);
  EXPECT_LE(cache.bytes(), one);
  cache.Get("a");  // protected now
  cache.Erase("a");
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  auto gen0 = cache.GetStale("b").gen;
  EXPECT_EQ(gen0, 0u);
  EXPECT_TRUE(cache.PutIfUnchanged("b", 0, MetaEntry{}));
  auto s = cache.GetStale("b");
  EXPECT_NE(s.gen, 0u);
  cache.PutDir("b");
  EXPECT_FALSE(cache.PutIfUnchanged("b", s.gen, MetaEntry{}));
  EXPECT_EQ(cache.Get("b")->kind, MetaEntry::kDir);
  EXPECT_EQ(cache.Get("b")->info.key, "b");
}

}  // namespace
}  // namespace kvfs
