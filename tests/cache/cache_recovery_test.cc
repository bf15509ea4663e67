// Restart recovery: what a new ChunkCache finds in a directory left by a previous one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cache/chunk_cache.h"
#include "cache/entry_format.h"
#include "tests/cache/test_util.h"

namespace kvfs {
namespace {

using testing::Fill;
using testing::Pattern;
using testing::ReadAll;
using testing::TempDir;

std::unique_ptr<ChunkCache> OpenCache(const std::string& dir, uint64_t capacity,
                                      bool verify_at_open = false) {
  ChunkCacheOptions o;
  o.dir = dir;
  o.capacity = capacity;
  o.verify_at_open = verify_at_open;
  auto c = ChunkCache::Open(o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// The entry file of key (there is one per key after a clean run).
std::string EntryPath(const std::string& dir, const std::string& key) {
  std::string prefix = EntryFileName(KeyHash(key), 0).substr(0, 16);
  for (auto& de : std::filesystem::directory_iterator(dir + "/data")) {
    if (de.path().filename().string().rfind(prefix, 0) == 0) return de.path().string();
  }
  return "";
}

void FlipByte(const std::string& path, off_t off) {
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  char c;
  ASSERT_EQ(pread(fd, &c, 1, off), 1);
  c ^= 0x40;
  ASSERT_EQ(pwrite(fd, &c, 1, off), 1);
  close(fd);
}

size_t CountFiles(const std::string& dir) {
  size_t n = 0;
  for (auto& de : std::filesystem::directory_iterator(dir)) n += de.is_regular_file();
  return n;
}

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cache = OpenCache(dir_.path(), 1 << 20);
    for (int i = 0; i < 4; i++) {
      ASSERT_TRUE(Fill(cache.get(), Key(i), Pattern(5000, i), "etag" + std::to_string(i)).ok());
    }
    // A fill that never committed (the daemon died mid-download).
    Result<FillRef> partial = cache->StartFill("partial", 5000, "e");
    ASSERT_TRUE(partial.ok());
    std::filesystem::copy_file(EntryPath(dir_.path(), "partial"),
                               dir_.path() + "/data/partial-copy");  // not kvfs's: kept
    ASSERT_EQ(link(EntryPath(dir_.path(), "partial").c_str(),
                   (dir_.path() + "/data/" + FillFileName(KeyHash("partial"), 999)).c_str()),
              0);
    testing::WriteFile(cache->spool_dir() + "/spool-1-1", "spooled");
  }
  static std::string Key(int i) { return "model@1@0@" + std::to_string(i) + "@bf16.pt"; }
  TempDir dir_;
};

TEST_F(RecoveryTest, IntactEntriesSurviveARestart) {
  auto cache = OpenCache(dir_.path(), 1 << 20);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.recovered, 4u);
  EXPECT_EQ(s.entries, 4u);
  EXPECT_EQ(s.bytes, 4u * 5000);
  for (int i = 0; i < 4; i++) {
    auto e = cache->Lookup(Key(i), 5000, "etag" + std::to_string(i));
    ASSERT_TRUE(e.has_value()) << i;
    EXPECT_EQ(ReadAll(e->fd(), 5000), Pattern(5000, i));
  }
  // Partial fills are gone, and so is the old spool; the file kvfs did not create is kept.
  EXPECT_EQ(CountFiles(dir_.path() + "/data"), 5u);
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/data/partial-copy"));
  EXPECT_EQ(CountFiles(cache->spool_dir()), 0u);
  EXPECT_GE(s.recovery_dropped, 1u);  // the partial fill; partial-copy is not kvfs's to drop
}

TEST_F(RecoveryTest, CorruptedTruncatedEntriesAreDroppedNotServed) {
  FlipByte(EntryPath(dir_.path(), Key(1)), 1234);  // content: caught by the checksum
  std::filesystem::resize_file(EntryPath(dir_.path(), Key(2)), 4999);  // truncated
  const std::string k3 = EntryPath(dir_.path(), Key(3));
  std::filesystem::resize_file(k3, std::filesystem::file_size(k3) + 1);  // grew
  auto cache = OpenCache(dir_.path(), 1 << 20);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.recovered, 2u);  // 0 and 1: the damage to 1 is only visible to the checksum
  EXPECT_FALSE(cache->Lookup(Key(1), 5000, "etag1").has_value());
  EXPECT_FALSE(cache->Lookup(Key(2), 5000, "etag2").has_value());
  EXPECT_FALSE(cache->Lookup(Key(3), 5000, "etag3").has_value());
  auto good = cache->Lookup(Key(0), 5000, "etag0");
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(ReadAll(good->fd(), 5000), Pattern(5000, 0));
  s = cache->Stats();
  EXPECT_EQ(s.verify_failures, 1u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(CountFiles(dir_.path() + "/data"), 2u);  // and partial-copy, not kvfs's
  // The dropped key can be filled again.
  ASSERT_TRUE(Fill(cache.get(), Key(1), Pattern(5000, 1), "etag1").ok());
  EXPECT_TRUE(cache->Lookup(Key(1), 5000, "etag1").has_value());
}

TEST_F(RecoveryTest, VerifyAtOpenDropsCorruptEntriesEagerly) {
  FlipByte(EntryPath(dir_.path(), Key(1)), 0);
  auto cache = OpenCache(dir_.path(), 1 << 20, /*verify_at_open=*/true);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.verify_failures, 1u);
  EXPECT_FALSE(cache->Lookup(Key(1), 5000, "etag1").has_value());
}

TEST_F(RecoveryTest, ConcurrentFirstLookupsVerifyOnceAndAgree) {
  FlipByte(EntryPath(dir_.path(), Key(1)), 7);
  auto cache = OpenCache(dir_.path(), 1 << 20);
  std::vector<std::thread> threads;
  std::atomic<int> hits0{0}, hits1{0};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      if (cache->Lookup(Key(0), 5000, "etag0")) hits0++;
      if (cache->Lookup(Key(1), 5000, "etag1")) hits1++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(hits0.load(), 4);
  EXPECT_EQ(hits1.load(), 0);
  EXPECT_EQ(cache->Stats().verify_failures, 1u);
}

TEST_F(RecoveryTest, SmallerCapacityTrimsAtOpen) {
  auto cache = OpenCache(dir_.path(), 12000);  // 20000 recovered > 85%: trim to <= 65%
  CacheStats s = cache->Stats();
  EXPECT_LE(s.bytes, 7800u);
  EXPECT_EQ(s.bytes, s.entries * 5000);
  EXPECT_TRUE(cache->Lookup(Key(3), 5000, "etag3").has_value());  // the newest stays
}

}  // namespace
}  // namespace kvfs
