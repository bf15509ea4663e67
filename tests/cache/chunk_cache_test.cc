#include "cache/chunk_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <thread>

#include "tests/cache/test_util.h"

namespace kvfs {
namespace {

using testing::Fill;
using testing::Pattern;
using testing::ReadAll;
using testing::TempDir;

std::unique_ptr<ChunkCache> OpenCache(const std::string& dir, uint64_t capacity) {
  ChunkCacheOptions o;
  o.dir = dir;
  o.capacity = capacity;
  Result<std::unique_ptr<ChunkCache>> c = ChunkCache::Open(o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

TEST(ChunkCacheTest, FillThenHit) {
  TempDir dir;
  auto cache = OpenCache(dir.path() + "/c", 1 << 20);
  const std::string data = Pattern(10000, 1);
  const std::string key = "a/very@odd%key/" + std::string(600, 'x') + ".pt";
  EXPECT_FALSE(cache->Lookup(key, data.size(), "e1").has_value());
  ASSERT_TRUE(Fill(cache.get(), key, data).ok());
  std::optional<EntryRef> e = cache->Lookup(key, data.size(), "e1");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->size(), data.size());
  EXPECT_EQ(ReadAll(e->fd(), e->size()), data);
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, data.size());
  EXPECT_EQ(s.fills, 1u);
}

TEST(ChunkCacheTest, StaleSizeOrEtagIsDroppedButUnknownEtagMatches) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1 << 20);
  ASSERT_TRUE(Fill(cache.get(), "k", Pattern(100, 1), "e1").ok());
  EXPECT_TRUE(cache->Lookup("k", 100, "").has_value());  // unknown etag: size decides
  EXPECT_FALSE(cache->Lookup("k", 100, "e2").has_value());
  EXPECT_FALSE(cache->Lookup("k", 100, "e1").has_value());  // dropped by the previous lookup
  ASSERT_TRUE(Fill(cache.get(), "k", Pattern(100, 1), "e1").ok());
  EXPECT_FALSE(cache->Lookup("k", 99, "e1").has_value());
  EXPECT_EQ(cache->Stats().entries, 0u);
}

TEST(ChunkCacheTest, UncommittedFillIsInvisibleAndRemovedOnDrop) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1 << 20);
  {
    Result<FillRef> f = cache->StartFill("k", 1000, "e");
    ASSERT_TRUE(f.ok());
    EXPECT_FALSE(cache->Lookup("k", 1000, "e").has_value());
    EXPECT_EQ(cache->StartFill("k", 1000, "e").status().code(), StatusCode::kAlreadyExists);
    EXPECT_EQ(cache->Stats().bytes, 1000u);  // reserved
  }
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.fill_aborts, 1u);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() + "/data"));
}

TEST(ChunkCacheTest, WatermarkEvictionIsLeastRecentlyUsed) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1000);  // evict above 850, down to 650
  for (int i = 0; i < 8; i++)
    ASSERT_TRUE(Fill(cache.get(), "k" + std::to_string(i), Pattern(100, i)).ok());
  ASSERT_TRUE(cache->Lookup("k0", 100, "e1").has_value());  // k0: most recently used
  ASSERT_TRUE(Fill(cache.get(), "k8", Pattern(100, 8)).ok());
  CacheStats s = cache->Stats();
  EXPECT_EQ(s.evictions, 3u);
  EXPECT_EQ(s.bytes_evicted, 300u);
  EXPECT_EQ(s.bytes, 600u);
  for (const char* gone : {"k1", "k2", "k3"})
    EXPECT_FALSE(cache->Lookup(gone, 100, "e1").has_value());
  for (const char* kept : {"k0", "k4", "k7", "k8"})
    EXPECT_TRUE(cache->Lookup(kept, 100, "e1").has_value());
  // Evicted files are gone from disk: 6 entries remain.
  size_t files = 0;
  for (auto& de : std::filesystem::directory_iterator(dir.path() + "/data"))
    files += de.is_regular_file();
  EXPECT_EQ(files, 6u);
}

TEST(ChunkCacheTest, PinnedEntryIsNotEvictedFromUnderAReader) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1000);
  const std::string d0 = Pattern(100, 0);
  ASSERT_TRUE(Fill(cache.get(), "k0", d0).ok());
  std::optional<EntryRef> reader = cache->Lookup("k0", 100, "e1");  // k0 pinned, and LRU
  ASSERT_TRUE(reader.has_value());
  for (int i = 1; i < 30; i++)
    ASSERT_TRUE(Fill(cache.get(), "k" + std::to_string(i), Pattern(100, i)).ok());
  EXPECT_GT(cache->Stats().evictions, 0u);
  EXPECT_EQ(ReadAll(reader->fd(), 100), d0);
  reader.reset();
  EXPECT_TRUE(cache->Lookup("k0", 100, "e1").has_value());  // never evicted while pinned
}

TEST(ChunkCacheTest, FullOfPinnedEntriesOrTooBigIsResourceExhausted) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1000);
  EXPECT_EQ(cache->StartFill("big", 1001, "e").status().code(), StatusCode::kResourceExhausted);
  std::vector<EntryRef> pins;
  for (int i = 0; i < 9; i++) {
    ASSERT_TRUE(Fill(cache.get(), "k" + std::to_string(i), Pattern(100, i)).ok());
    pins.push_back(std::move(*cache->Lookup("k" + std::to_string(i), 100, "e1")));
  }
  Result<FillRef> f = cache->StartFill("x", 200, "e");
  EXPECT_EQ(f.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(f.status().message().find("x"), std::string::npos);
  EXPECT_EQ(cache->Stats().fill_rejected, 2u);
  pins.clear();
  EXPECT_TRUE(cache->StartFill("x", 200, "e").ok());
}

TEST(ChunkCacheTest, RemoveWhilePinnedKeepsReaderAndBytesUntilRelease) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1000);
  const std::string d = Pattern(300, 3);
  ASSERT_TRUE(Fill(cache.get(), "k", d).ok());
  std::optional<EntryRef> r = cache->Lookup("k", 300, "e1");
  cache->Remove("k");
  EXPECT_FALSE(cache->Lookup("k", 300, "e1").has_value());
  EXPECT_EQ(ReadAll(r->fd(), 300), d);
  EXPECT_EQ(cache->Stats().bytes, 300u);
  r.reset();
  EXPECT_EQ(cache->Stats().bytes, 0u);
}

TEST(ChunkCacheTest, RemoveDuringFillKeepsFillersFdButHidesTheEntry) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1000);
  const std::string d = Pattern(300, 3);
  Result<FillRef> f = cache->StartFill("k", 300, "e1");
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(pwrite(f->fd(), d.data(), d.size(), 0), 300);
  cache->Remove("k");
  Result<EntryRef> e = f->Commit();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(ReadAll(e->fd(), 300), d);
  EXPECT_FALSE(cache->Lookup("k", 300, "e1").has_value());
  e->Reset();
  EXPECT_EQ(cache->Stats().bytes, 0u);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() + "/data"));
}

TEST(ChunkCacheTest, DirectoryIsPrivateAndLocked) {
  TempDir dir;
  const std::string path = dir.path() + "/c";
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  auto cache = OpenCache(path, 1000);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  ChunkCacheOptions o;
  o.dir = path;
  o.capacity = 1000;
  Result<std::unique_ptr<ChunkCache>> second = ChunkCache::Open(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find(path), std::string::npos) << second.status().message();
  EXPECT_NE(second.status().message().find(std::to_string(getpid())), std::string::npos);
  cache.reset();
  EXPECT_TRUE(ChunkCache::Open(o).ok());  // the lock is released with the first cache
}

TEST(ChunkCacheTest, BadOptionsAreRejected) {
  TempDir dir;
  ChunkCacheOptions o;
  o.dir = dir.path();
  o.capacity = 0;
  EXPECT_EQ(ChunkCache::Open(o).status().code(), StatusCode::kInvalidArgument);
  o.capacity = 10;
  o.high_watermark = 1.5;
  EXPECT_EQ(ChunkCache::Open(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(ChunkCacheTest, AdoptFileFromSpool) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 1000);
  const std::string d = Pattern(400, 4);
  const std::string spool = cache->spool_dir() + "/s1";
  testing::WriteFile(spool, d);
  EXPECT_FALSE(cache->AdoptFile("k", 401, "e", spool));  // wrong size: left alone
  EXPECT_TRUE(std::filesystem::exists(spool));
  ASSERT_TRUE(cache->AdoptFile("k", 400, "e", spool));
  EXPECT_FALSE(std::filesystem::exists(spool));
  std::optional<EntryRef> e = cache->Lookup("k", 400, "e");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(ReadAll(e->fd(), 400), d);
  EXPECT_EQ(cache->Stats().adopted, 1u);
  // Adopting while the entry is pinned replaces it; the old reader keeps its bytes.
  const std::string d2 = Pattern(400, 5);
  testing::WriteFile(spool, d2);
  ASSERT_TRUE(cache->AdoptFile("k", 400, "e2", spool));
  EXPECT_EQ(ReadAll(e->fd(), 400), d);
  EXPECT_EQ(ReadAll(cache->Lookup("k", 400, "e2")->fd(), 400), d2);
}

TEST(ChunkCacheTest, AdoptFromAnotherFilesystemFailsAndLeavesTheFile) {
  TempDir shm("/dev/shm");
  TempDir other;
  struct stat a, b;
  ASSERT_EQ(stat(shm.path().c_str(), &a), 0);
  ASSERT_EQ(stat(other.path().c_str(), &b), 0);
  if (a.st_dev == b.st_dev) GTEST_SKIP() << "/dev/shm and the temp dir share a filesystem";
  auto cache = OpenCache(shm.path(), 1000);
  const std::string d = Pattern(400, 4);
  const std::string path = other.path() + "/spool";
  testing::WriteFile(path, d);
  EXPECT_FALSE(cache->AdoptFile("k", 400, "e", path));
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ReadAll(fd, 1000), d);  // trailer removed again: exactly the original bytes
  close(fd);
  EXPECT_EQ(cache->Stats().bytes, 0u);
}

// Many threads fill, look up, remove and read a small cache at once; every hit must carry the
// bytes filled for that key.
TEST(ChunkCacheTest, ConcurrentMixedUseServesOnlyRightBytes) {
  TempDir dir;
  auto cache = OpenCache(dir.path(), 4000);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 400; i++) {
        int k = static_cast<int>(rng() % 20);
        std::string key = "k" + std::to_string(k);
        std::string want = Pattern(300, k);
        int op = static_cast<int>(rng() % 10);
        if (op < 6) {
          if (auto e = cache->Lookup(key, 300, "e1")) {
            if (ReadAll(e->fd(), 300) != want) bad++;
          }
        } else if (op < 9) {
          (void)Fill(cache.get(), key, want);
        } else {
          cache->Remove(key);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  CacheStats s = cache->Stats();
  EXPECT_LE(s.bytes, 4000u);
  uint64_t on_disk = 0;
  for (auto& de : std::filesystem::directory_iterator(dir.path() + "/data"))
    on_disk += de.file_size();
  EXPECT_GE(on_disk, s.bytes);  // data plus trailers
  EXPECT_EQ(s.entries * 300, s.bytes);
}

}  // namespace
}  // namespace kvfs
