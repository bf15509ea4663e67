// End-to-end integrity of downloads (`verify: auto`): an object that carries its writer's CRC32C
// is checked before any of its bytes is served or cached; one that also carries the CRC of each
// slice is served slice by slice, each once it matched.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "base/crc32c.h"
#include "fs/read/cached_reader.h"
#include "tests/cache/test_util.h"
#include "tests/fakes/fault_store.h"
#include "tests/fakes/memory_store.h"
#include "tests/fs/read/threaded_store.h"

namespace kvfs {
namespace {

using testing::Pattern;
using testing::TempDir;
using testing::ThreadedStore;

constexpr uint64_t kPart = 64 << 10;
constexpr uint64_t kSize = 1000003;  // several parts, the last one short

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ChunkCacheOptions o;
    o.dir = dir_.path() + "/cache";
    o.capacity = 64 << 20;
    auto c = ChunkCache::Open(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cache_ = std::move(c).value();
  }

  std::unique_ptr<CachedReader> NewReader(std::shared_ptr<ObjectStore> store, bool verify = true,
                                          uint64_t part_size = kPart) {
    CachedReaderOptions o;
    o.part_size = part_size;
    o.max_parallel_parts = 4;
    o.verify = verify;
    return std::make_unique<CachedReader>(std::move(store), cache_.get(), o);
  }

  // Stores `data` as kvfs's uploader does: with its checksum.
  ObjectInfo PutWithChecksum(const std::string& key, const std::string& data) {
    PutOptions opts;
    opts.crc32c = Crc32c(0, data.data(), data.size());
    EXPECT_TRUE(mem_->Put(key, Body::FromMemory(data.data(), data.size()), opts).ok());
    Result<ObjectInfo> info = mem_->Head(key);
    EXPECT_TRUE(info.ok());
    EXPECT_EQ(info->crc32c, opts.crc32c);
    return *info;
  }

  // Stores `data` with the CRC of the whole and of each slice, as kvfs's uploader does for a chunk
  // it stores with one PUT.
  ObjectInfo PutSliced(const std::string& key, const std::string& data) {
    PutOptions opts;
    opts.crc32c = Crc32c(0, data.data(), data.size());
    opts.slice_crcs = SliceCrcs::Of(data.data(), data.size());
    EXPECT_TRUE(mem_->Put(key, Body::FromMemory(data.data(), data.size()), opts).ok());
    Result<ObjectInfo> info = mem_->Head(key);
    EXPECT_TRUE(info.ok());
    EXPECT_EQ(info->slice_crcs, opts.slice_crcs);
    return *info;
  }

  // A read that must complete while the store holds the rest of the download back; on a hang,
  // the store is released (so the test ends) and the read counts as failed.
  static Result<std::string> ReadWhileHeld(ReadHandle* h, uint64_t off, uint64_t n,
                                           ThreadedStore* store) {
    auto f = std::async(std::launch::async, [h, off, n]() -> Result<std::string> {
      std::string out(n, '\0');
      Result<uint64_t> r = h->Read(off, n, out.data());
      if (!r.ok()) return r.status();
      out.resize(*r);
      return out;
    });
    if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      store->Release();
      f.wait();
      return Status::DeadlineExceeded("the read waited for bytes the store held back");
    }
    return f.get();
  }

  // Opens `key` on a reader with one GET per chunk (get_part_size's default) while the store holds
  // the download back inside the second slice: the first slice is read all the same, checked; then
  // the whole chunk, counted as verified by slice and cached.
  void ExpectServedBySlice(const std::string& key, const ObjectInfo& info,
                           const std::string& data) {
    auto threaded = std::make_shared<ThreadedStore>(mem_);
    auto reader = NewReader(threaded, true, 16 << 20);
    threaded->HoldGetsFrom((1 << 20) + (1 << 19));
    auto h = reader->Open(key, info);
    ASSERT_TRUE(h.ok());
    Result<std::string> first = ReadWhileHeld(h->get(), 0, 1 << 20, threaded.get());
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    EXPECT_TRUE(*first == data.substr(0, 1 << 20));
    threaded->Release();
    Result<std::string> all = ReadAll(h->get(), data.size());
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_TRUE(*all == data);
    h->reset();
    WaitIdle(*reader);
    EXPECT_EQ(reader->Stats().verified_by_slice, 1u);
    EXPECT_EQ(reader->Stats().verify_failures, 0u);
    EXPECT_EQ(reader->Stats().unverified, 0u);
    EXPECT_EQ(cache_->Stats().entries, 1u);
  }

  // Reads the whole object in the kernel's piece size; the first error, or the bytes.
  static Result<std::string> ReadAll(ReadHandle* h, uint64_t size) {
    std::string out(size, '\0');
    for (uint64_t off = 0; off < size; off += 131072) {
      Result<uint64_t> r = h->Read(off, 131072, out.data() + off);
      if (!r.ok()) return r.status();
    }
    return out;
  }

  // Options of a reader with no cache: every open streams.
  static CachedReaderOptions StreamOptions() {
    CachedReaderOptions o;
    o.part_size = kPart;
    return o;
  }

  static void WaitIdle(const CachedReader& r) {
    for (int i = 0; i < 10000 && r.Stats().fetches_in_flight != 0; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(r.Stats().fetches_in_flight, 0u);
  }

  TempDir dir_;
  std::shared_ptr<MemoryStore> mem_ = std::make_shared<MemoryStore>();
  std::unique_ptr<ChunkCache> cache_;
};

TEST_F(VerifyTest, IntactObjectIsServedVerifiedAndCached) {
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_));
  const std::string data = Pattern(kSize, 1);
  ObjectInfo info = PutWithChecksum("c@1", data);
  auto h = reader->Open("c@1", info);
  ASSERT_TRUE(h.ok());
  Result<std::string> got = ReadAll(h->get(), kSize);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, data);
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().verify_failures, 0u);
  EXPECT_EQ(reader->Stats().unverified, 0u);
  EXPECT_EQ(cache_->Stats().entries, 1u);
}

TEST_F(VerifyTest, ByteChangedInTheStoreIsEioAndNeverServedOrCached) {
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_));
  const std::string data = Pattern(kSize, 2);
  ObjectInfo info = PutWithChecksum("c@2", data);
  mem_->CorruptObject("c@2", kSize - 7);  // in the last part: every earlier byte is intact
  auto h = reader->Open("c@2", info);
  ASSERT_TRUE(h.ok());
  // Even the first bytes, which are intact, are not served: the object as a whole is wrong.
  char first[100];
  Result<uint64_t> r = (*h)->Read(0, sizeof(first), first);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().ToString();
  EXPECT_NE(r.status().message().find("c@2"), std::string::npos) << r.status().ToString();
  h->reset();
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().verify_failures, 1u);
  EXPECT_EQ(cache_->Stats().entries, 0u);
  // The next open downloads again (nothing wrong was cached) and fails the same way.
  auto again = reader->Open("c@2", info);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadAll(again->get(), kSize).status().code(), StatusCode::kDataLoss);
}

TEST_F(VerifyTest, ObjectKnownOnlyFromAListIsVerifiedFromTheGetReply) {
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_));
  const std::string data = Pattern(kSize, 3);
  ObjectInfo info = PutWithChecksum("c@3", data);
  info.crc32c.reset();  // a LIST carries no metadata
  mem_->CorruptObject("c@3", 5);
  auto h = reader->Open("c@3", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadAll(h->get(), kSize).status().code(), StatusCode::kDataLoss);
}

TEST_F(VerifyTest, BytesFlippedOnTheWireAreEio) {
  auto faults = std::make_shared<FaultStore>(mem_);
  auto reader = NewReader(std::make_shared<ThreadedStore>(faults));
  const std::string data = Pattern(kSize, 4);
  ObjectInfo info = PutWithChecksum("c@4", data);
  faults->CorruptGets(1);  // one part's GET
  auto h = reader->Open("c@4", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadAll(h->get(), kSize).status().code(), StatusCode::kDataLoss);
  h->reset();
  WaitIdle(*reader);
  // A transient fault: the next open downloads intact bytes.
  auto again = reader->Open("c@4", info);
  ASSERT_TRUE(again.ok());
  Result<std::string> got = ReadAll(again->get(), kSize);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, data);
}

TEST_F(VerifyTest, ObjectWithoutChecksumStreamsAndIsCountedUnverified) {
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_));
  const std::string data = Pattern(kSize, 5);
  mem_->PutObject("c@5", data);  // another tool's object: no checksum
  Result<ObjectInfo> info = mem_->Head("c@5");
  ASSERT_TRUE(info.ok());
  auto h = reader->Open("c@5", *info);
  ASSERT_TRUE(h.ok());
  Result<std::string> got = ReadAll(h->get(), kSize);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, data);
  h->reset();
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().unverified, 1u);
}

TEST_F(VerifyTest, VerifyOffServesWhatTheStoreSends) {
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_), /*verify=*/false);
  const std::string data = Pattern(kSize, 6);
  ObjectInfo info = PutWithChecksum("c@6", data);
  mem_->CorruptObject("c@6", 9);
  auto h = reader->Open("c@6", info);
  ASSERT_TRUE(h.ok());
  Result<std::string> got = ReadAll(h->get(), kSize);
  ASSERT_TRUE(got.ok());
  EXPECT_NE(*got, data);
  h->reset();
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().unverified, 1u);
}

// Streamed reads (no cache entry: cache off here, or an object larger than the cache, or a full
// cache disk) cannot be held back, so the read that completes the whole object fails instead.
TEST_F(VerifyTest, StreamedReadOfAChangedObjectFailsBeforeItCompletes) {
  CachedReader reader(std::make_shared<ThreadedStore>(mem_), /*cache=*/nullptr, StreamOptions());
  const std::string data = Pattern(kSize, 7);
  ObjectInfo info = PutWithChecksum("c@7", data);
  {
    auto h = reader.Open("c@7", info);
    ASSERT_TRUE(h.ok());
    Result<std::string> got = ReadAll(h->get(), kSize);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, data);
  }
  EXPECT_EQ(reader.Stats().unverified, 0u);
  EXPECT_EQ(reader.Stats().streamed, 1u);

  mem_->CorruptObject("c@7", 3);  // in the first read: the last one fails
  auto h = reader.Open("c@7", info);
  ASSERT_TRUE(h.ok());
  Result<std::string> got = ReadAll(h->get(), kSize);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status().ToString();
  EXPECT_NE(got.status().message().find("c@7"), std::string::npos);
  char b[10];
  EXPECT_EQ((*h)->Read(0, sizeof(b), b).status().code(), StatusCode::kDataLoss);  // sticky
  h->reset();
  EXPECT_EQ(reader.Stats().verify_failures, 1u);
  EXPECT_EQ(reader.Stats().unverified, 0u);
}

TEST_F(VerifyTest, StreamedReadKnownOnlyFromAListIsVerifiedFromTheGetReply) {
  CachedReader reader(std::make_shared<ThreadedStore>(mem_), /*cache=*/nullptr, StreamOptions());
  const std::string data = Pattern(kSize, 8);
  ObjectInfo info = PutWithChecksum("c@8", data);
  info.crc32c.reset();
  mem_->CorruptObject("c@8", kSize / 2);
  auto h = reader.Open("c@8", info);
  ASSERT_TRUE(h.ok());
  // Backwards, as no engine reads, to show the order does not matter.
  std::string out(kSize, '\0');
  Status last;
  for (uint64_t end = kSize; end > 0;) {
    uint64_t off = end > 131072 ? end - 131072 : 0;
    Result<uint64_t> r = (*h)->Read(off, end - off, out.data() + off);
    if (!r.ok()) last = r.status();
    end = off;
  }
  EXPECT_EQ(last.code(), StatusCode::kDataLoss) << last.ToString();
}

TEST_F(VerifyTest, StreamedReadWithoutChecksumIsCountedUnverified) {
  CachedReader reader(std::make_shared<ThreadedStore>(mem_), /*cache=*/nullptr, StreamOptions());
  const std::string data = Pattern(kSize, 9);
  mem_->PutObject("c@9", data);
  Result<ObjectInfo> info = mem_->Head("c@9");
  ASSERT_TRUE(info.ok());
  auto h = reader.Open("c@9", *info);
  ASSERT_TRUE(h.ok());
  Result<std::string> got = ReadAll(h->get(), kSize);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, data);
  EXPECT_EQ(reader.Stats().unverified, 1u);  // known at the last read, before the handle closes
  h->reset();
  EXPECT_EQ(reader.Stats().unverified, 1u);  // and counted once
}

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kSlicedSize = 4 * kMiB + 1000;  // five slices, the last one short

TEST_F(VerifyTest, SlicedObjectIsServedSliceBySliceBeforeItsLastByte) {
  const std::string data = Pattern(kSlicedSize, 11);
  ExpectServedBySlice("s@1", PutSliced("s@1", data), data);
}

TEST_F(VerifyTest, ADamagedSliceIsEioAndNoneOfItsBytesIsServed) {
  auto threaded = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(threaded, true, 16 * kMiB);
  const std::string data = Pattern(kSlicedSize, 12);
  ObjectInfo info = PutSliced("s@2", data);
  mem_->CorruptObject("s@2", 2 * kMiB + 5);  // in the third slice
  threaded->HoldGetsFrom(kMiB + kMiB / 2);
  auto h = reader->Open("s@2", info);
  ASSERT_TRUE(h.ok());
  Result<std::string> first = ReadWhileHeld(h->get(), 0, kMiB, threaded.get());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first == data.substr(0, kMiB));  // intact, and checked
  threaded->Release();
  char buf[4096];
  Result<uint64_t> r = (*h)->Read(2 * kMiB, sizeof(buf), buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().ToString();
  EXPECT_NE(r.status().message().find("s@2"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("bytes 2097152-3145727"), std::string::npos)
      << r.status().ToString();
  h->reset();
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().verify_failures, 1u);
  EXPECT_EQ(reader->Stats().verified_by_slice, 0u);
  EXPECT_EQ(cache_->Stats().entries, 0u);  // never cached
  // The next open downloads again and fails the same way: nothing wrong was kept.
  auto again = reader->Open("s@2", info);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadAll(again->get(), kSlicedSize).status().code(), StatusCode::kDataLoss);
}

TEST_F(VerifyTest, SlicedObjectKnownOnlyFromAListIsServedBySliceFromTheGetReply) {
  const std::string data = Pattern(kSlicedSize, 13);
  ObjectInfo info = PutSliced("s@3", data);
  info.crc32c.reset();  // a LIST carries no metadata
  info.slice_crcs.reset();
  ExpectServedBySlice("s@3", info, data);
}

TEST_F(VerifyTest, PartsThatAreNotWholeSlicesKeepTheWholeObjectRule) {
  // 64 KiB parts cut 1 MiB slices: no slice is checked alone, so nothing is served before all of
  // the object matched.
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_));
  const std::string data = Pattern(kSlicedSize, 14);
  ObjectInfo info = PutSliced("s@4", data);
  mem_->CorruptObject("s@4", kSlicedSize - 3);
  auto h = reader->Open("s@4", info);
  ASSERT_TRUE(h.ok());
  char first[100];
  Result<uint64_t> r = (*h)->Read(0, sizeof(first), first);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().ToString();
  h->reset();
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().verified_by_slice, 0u);
}

}  // namespace
}  // namespace kvfs
