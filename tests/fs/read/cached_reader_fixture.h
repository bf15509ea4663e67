// CachedReaderTest: the fixture of the cache-backed reader's tests (cached_reader_test.cc: hits,
// misses and shared downloads; cached_reader_failure_test.cc: failed, stale and changed objects):
// a MemoryStore, a ChunkCache in a temporary directory, readers over both, and read helpers.
//
// Thread-safety: a test fixture, used by one test thread (the readers it makes are thread-safe).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "cache/chunk_cache.h"
#include "fs/read/cached_reader.h"
#include "tests/cache/test_util.h"
#include "tests/fakes/memory_store.h"

namespace kvfs::testing {

inline constexpr uint64_t kPart = 64 << 10;

// Waits (without asserting any timing) until no download is running.
inline void WaitIdle(const CachedReader& r) {
  for (int i = 0; i < 10000 && r.Stats().fetches_in_flight != 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(r.Stats().fetches_in_flight, 0u);
}

inline std::string ReadWhole(ReadHandle* h, uint64_t size, Status* error = nullptr) {
  std::string out(size, '\0');
  // Odd-sized reads that straddle parts, as the kernel might send them.
  const uint64_t step = 100000;
  for (uint64_t off = 0; off < size; off += step) {
    Result<uint64_t> r = h->Read(off, step, out.data() + off);
    if (!r.ok()) {
      if (error != nullptr) {
        *error = r.status();
      } else {
        ADD_FAILURE() << "read at " << off << ": " << r.status().ToString();
      }
      return "";
    }
    EXPECT_EQ(*r, std::min(step, size - off));
  }
  return out;
}

class CachedReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenCache(64 << 20); }

  void OpenCache(uint64_t capacity) {
    cache_.reset();  // releases the directory lock
    ChunkCacheOptions o;
    o.dir = dir_.path() + "/cache";
    o.capacity = capacity;
    auto c = ChunkCache::Open(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cache_ = std::move(c).value();
  }

  std::unique_ptr<CachedReader> NewReader(std::shared_ptr<ObjectStore> store,
                                          uint64_t part_size = kPart) {
    CachedReaderOptions o;
    o.part_size = part_size;
    o.max_parallel_parts = 4;
    return std::make_unique<CachedReader>(std::move(store), cache_.get(), o);
  }

  ObjectInfo Put(const std::string& key, const std::string& data) {
    mem_->PutObject(key, data);
    Result<ObjectInfo> info = mem_->Head(key);
    EXPECT_TRUE(info.ok());
    return *info;
  }

  TempDir dir_;
  std::shared_ptr<MemoryStore> mem_ = std::make_shared<MemoryStore>();
  std::unique_ptr<ChunkCache> cache_;
};

}  // namespace kvfs::testing
