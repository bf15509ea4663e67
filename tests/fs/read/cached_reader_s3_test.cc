// The read path over the real S3 client and the test server (KVFS_TEST_S3_*; skipped when unset,
// failed when KVFS_REQUIRE_S3=1): a cold read downloads each byte once with parallel ranged GETs,
// a second open is a cache hit, and a stale ETag is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "fs/read/cached_reader.h"
#include "tests/cache/test_util.h"
#include "tests/objstore/store_under_test.h"

namespace kvfs {
namespace {

using testing::Pattern;
using testing::TempDir;

std::string ReadAllOf(ReadHandle* h, uint64_t size) {
  std::string out(size, '\0');
  const uint64_t step = 1 << 20;  // FUSE-sized reads
  for (uint64_t off = 0; off < size; off += step) {
    Result<uint64_t> r = h->Read(off, step, out.data() + off);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().ToString();
      return "";
    }
  }
  return out;
}

TEST(CachedReaderS3Test, ColdReadOnceThenHit) {
  kvfs::testing::StoreUnderTest sut("s3");
  KVFS_OPEN_STORE_OR_SKIP(sut);
  const std::string data = Pattern((40 << 20) + 12345, 1);
  ASSERT_TRUE(
      sut.store()->Put("chunk@0@abc@bf16.pt", Body::FromMemory(data.data(), data.size())).ok());
  Result<ObjectInfo> info = sut.store()->Head("chunk@0@abc@bf16.pt");
  ASSERT_TRUE(info.ok()) << info.status().ToString();

  TempDir dir;
  ChunkCacheOptions co;
  co.dir = dir.path();
  co.capacity = 256 << 20;
  auto cache = ChunkCache::Open(co);
  ASSERT_TRUE(cache.ok());
  CachedReaderOptions ro;
  ro.part_size = 8 << 20;
  ro.max_parallel_parts = 4;
  {
    CachedReader reader(sut.shared(), cache->get(), ro);
    auto t0 = std::chrono::steady_clock::now();
    std::string a, b;
    std::thread other([&] {
      auto h = reader.Open(info->key, *info);
      ASSERT_TRUE(h.ok());
      b = ReadAllOf(h->get(), data.size());
    });
    auto h = reader.Open(info->key, *info);
    ASSERT_TRUE(h.ok());
    a = ReadAllOf(h->get(), data.size());
    other.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("cold read of %zu MiB: %.0f MiB/s\n", data.size() >> 20,
                data.size() / 1048576.0 / s);
    EXPECT_TRUE(a == data);
    EXPECT_TRUE(b == data);
    h->reset();
    for (int i = 0; i < 10000 && reader.Stats().fetches_in_flight != 0; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ReaderStats st = reader.Stats();
    EXPECT_EQ(st.bytes_from_store, data.size());  // one download for both openers
    EXPECT_EQ(st.misses + st.shared_downloads, 2u);
  }
  {
    CachedReader reader(sut.shared(), cache->get(), ro);
    auto h = reader.Open(info->key, *info);
    ASSERT_TRUE(h.ok());
    EXPECT_TRUE(ReadAllOf(h->get(), data.size()) == data);
    EXPECT_EQ(reader.Stats().hits, 1u);
    EXPECT_EQ(reader.Stats().bytes_from_store, 0u);
  }
}

TEST(CachedReaderS3Test, StaleEtagIsRefused) {
  kvfs::testing::StoreUnderTest sut("s3");
  KVFS_OPEN_STORE_OR_SKIP(sut);
  const std::string data = Pattern(3 << 20, 2);
  ASSERT_TRUE(sut.store()->Put("k", Body::FromMemory(data.data(), data.size())).ok());
  Result<ObjectInfo> info = sut.store()->Head("k");
  ASSERT_TRUE(info.ok());
  info->etag = "0123456789abcdef0123456789abcdef";  // another version
  TempDir dir;
  ChunkCacheOptions co;
  co.dir = dir.path();
  co.capacity = 64 << 20;
  auto cache = ChunkCache::Open(co);
  ASSERT_TRUE(cache.ok());
  CachedReader reader(sut.shared(), cache->get(), CachedReaderOptions{});
  auto h = reader.Open("k", *info);
  ASSERT_TRUE(h.ok());
  std::string buf(1000, '\0');
  Result<uint64_t> r = (*h)->Read(0, buf.size(), buf.data());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPreconditionFailed) << r.status().ToString();
}

}  // namespace
}  // namespace kvfs
