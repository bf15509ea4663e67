// The cache-backed reader (fs/read/cached_reader.h) over the fakes: a miss downloads once and
// then hits, concurrent opens share a download, reads are answered before the whole object (or
// their part) arrives, eviction, streaming, adopted writes. Failures:
// cached_reader_failure_test.cc.
#include "fs/read/cached_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/cache/test_util.h"
#include "tests/fakes/memory_store.h"
#include "tests/fs/read/cached_reader_fixture.h"
#include "tests/fs/read/threaded_store.h"

namespace kvfs {
namespace {

using testing::CachedReaderTest;
using testing::kPart;
using testing::Pattern;
using testing::ReadWhole;
using testing::ThreadedStore;
using testing::WaitIdle;

TEST_F(CachedReaderTest, MissDownloadsOnceThenHitsFromTheCacheFile) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  const std::string data = Pattern(1000003, 1);  // not a multiple of the part size
  ObjectInfo info = Put("chunk@1", data);
  {
    auto h = reader->Open("chunk@1", info);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
    char c;
    EXPECT_EQ(*(*h)->Read(data.size(), 10, &c), 0u);  // end of object
  }
  WaitIdle(*reader);
  EXPECT_EQ(store->BytesServed("chunk@1"), data.size());
  auto h = reader->Open("chunk@1", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  Result<FdRange> fr = (*h)->ReadFd(999000, 10000);
  ASSERT_TRUE(fr.ok());
  EXPECT_EQ(fr->length, data.size() - 999000);
  std::string tail(fr->length, '\0');
  ASSERT_EQ(pread(fr->fd, tail.data(), tail.size(), static_cast<off_t>(fr->offset)),
            static_cast<ssize_t>(tail.size()));
  EXPECT_EQ(tail, data.substr(999000));
  EXPECT_EQ(store->BytesServed("chunk@1"), data.size());  // the hit fetched nothing
  ReaderStats s = reader->Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.bytes_from_store, data.size());
  EXPECT_GE(s.bytes_from_cache, data.size());
  EXPECT_EQ(cache_->Stats().entries, 1u);
}

TEST_F(CachedReaderTest, ConcurrentOpensShareOneDownload) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  const std::string data = Pattern(1 << 20, 2);
  ObjectInfo info = Put("shared", data);
  store->HoldGetsFrom(0);  // nothing arrives until every opener has joined
  constexpr int kThreads = 8;
  std::vector<std::unique_ptr<ReadHandle>> handles(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      auto h = reader->Open("shared", info);
      ASSERT_TRUE(h.ok());
      handles[t] = std::move(h).value();
    });
  }
  for (auto& th : threads) th.join();
  store->Release();
  threads.clear();
  std::vector<std::string> got(kThreads);
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] { got[t] = ReadWhole(handles[t].get(), data.size()); });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; t++) EXPECT_EQ(got[t], data) << t;
  handles.clear();
  WaitIdle(*reader);
  EXPECT_EQ(store->BytesServed("shared"), data.size());  // every byte fetched exactly once
  EXPECT_EQ(store->Gets(), data.size() / kPart);
  ReaderStats s = reader->Stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.shared_downloads, kThreads - 1u);
}

TEST_F(CachedReaderTest, ReadIsAnsweredBeforeTheWholeObjectArrives) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  const std::string data = Pattern(16 * kPart, 3);
  ObjectInfo info = Put("slow", data);
  store->HoldGetsFrom(kPart);  // only the first part can arrive
  auto h = reader->Open("slow", info);
  ASSERT_TRUE(h.ok());
  std::string head(1000, '\0');
  Result<uint64_t> r = (*h)->Read(10, head.size(), head.data());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(head, data.substr(10, 1000));
  // The rest is held back by the store: at most the first part can have arrived.
  EXPECT_LE(reader->Stats().bytes_from_store, kPart);
  // A read deep into the object is served once its part arrives.
  store->Release();
  std::string tail(5000, '\0');
  ASSERT_TRUE((*h)->Read(15 * kPart + 7, tail.size(), tail.data()).ok());
  EXPECT_EQ(tail, data.substr(15 * kPart + 7, 5000));
  EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  h->reset();
  WaitIdle(*reader);
}

TEST_F(CachedReaderTest, ReadIsAnsweredBeforeItsPartIsComplete) {
  // Parts of 16 x 64 KiB; the store streams 64 KiB pieces and holds everything from 256 KiB on:
  // a read of the first bytes must not wait for the rest of its part.
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store, /*part_size=*/16 * kPart);
  const std::string data = Pattern(32 * kPart, 13);
  ObjectInfo info = Put("streamed", data);
  store->HoldGetsFrom(4 * kPart);
  auto h = reader->Open("streamed", info);
  ASSERT_TRUE(h.ok());
  std::string head(3 * kPart, '\0');
  Result<uint64_t> r = (*h)->Read(100, head.size(), head.data());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(head, data.substr(100, head.size()));
  EXPECT_LE(reader->Stats().bytes_from_store, 4 * kPart);
  store->Release();
  EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  h->reset();
  WaitIdle(*reader);
  EXPECT_EQ(store->BytesServed("streamed"), data.size());
  EXPECT_EQ(cache_->Stats().entries, 1u);
}

TEST_F(CachedReaderTest, EntryHeldByAReaderSurvivesEviction) {
  OpenCache(8 * kPart);  // room for two 3-part objects before the high watermark
  auto reader = NewReader(std::make_shared<ThreadedStore>(mem_));
  std::vector<ObjectInfo> infos;
  for (int i = 0; i < 6; i++)
    infos.push_back(Put("o" + std::to_string(i), Pattern(3 * kPart, 10 + i)));
  {
    auto h = reader->Open("o0", infos[0]);
    ReadWhole(h->get(), infos[0].size);
  }
  WaitIdle(*reader);
  auto held = reader->Open("o0", infos[0]);  // a hit, pinned while open
  ASSERT_TRUE(held.ok());
  for (int i = 1; i < 6; i++) {
    auto h = reader->Open("o" + std::to_string(i), infos[i]);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(ReadWhole(h->get(), infos[i].size), Pattern(3 * kPart, 10 + i));
    h->reset();
    WaitIdle(*reader);
  }
  EXPECT_GT(cache_->Stats().evictions, 0u);
  std::string got = ReadWhole(held->get(), infos[0].size);
  const std::string want = Pattern(3 * kPart, 10);
  size_t diff = 0;
  while (diff < got.size() && diff < want.size() && got[diff] == want[diff]) diff++;
  EXPECT_EQ(diff, want.size()) << "first difference at " << diff << " of " << got.size();
  held->reset();
  EXPECT_EQ(reader->Stats().hits, 1u);
}

TEST_F(CachedReaderTest, ObjectsLargerThanTheCacheAreStreamed) {
  OpenCache(4 * kPart);
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  const std::string data = Pattern(10 * kPart + 5, 9);
  ObjectInfo info = Put("huge", data);
  auto h = reader->Open("huge", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)->ReadFd(0, 10).status().code(), StatusCode::kNotSupported);
  std::string all(data.size(), '\0');
  Result<uint64_t> r = (*h)->Read(0, data.size() + 100, all.data());  // one big read
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, data.size());
  EXPECT_EQ(all, data);
  EXPECT_EQ(cache_->Stats().bytes, 0u);
  EXPECT_EQ(reader->Stats().streamed, 1u);
}

TEST(CachedReaderNoCacheTest, WithoutACacheEverythingStreams) {
  auto mem = std::make_shared<MemoryStore>();
  mem->PutObject("k", Pattern(300000, 1));
  CachedReader reader(mem, nullptr, CachedReaderOptions{});
  auto h = reader.Open("k", *mem->Head("k"));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadWhole(h->get(), 300000), Pattern(300000, 1));
  EXPECT_FALSE(reader.AdoptWritten("k", *mem->Head("k"), "/nonexistent", std::nullopt));
}

TEST_F(CachedReaderTest, AdoptedWriteIsAHitAndInvalidateForgetsIt) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  const std::string data = Pattern(200000, 11);
  ObjectInfo info = Put("written", data);
  const std::string spool = cache_->spool_dir() + "/w1";
  testing::WriteFile(spool, data);
  ASSERT_TRUE(reader->AdoptWritten("written", info, spool, std::nullopt));
  {
    auto h = reader->Open("written", info);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  }
  EXPECT_EQ(store->Gets(), 0u);
  reader->Invalidate("written");
  auto h = reader->Open("written", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  EXPECT_EQ(reader->Stats().misses, 1u);
  h->reset();
  WaitIdle(*reader);
}

TEST_F(CachedReaderTest, ManyConcurrentDownloadsFetchEachByteOnce) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  constexpr int kObjects = 6;
  std::vector<ObjectInfo> infos;
  for (int i = 0; i < kObjects; i++)
    infos.push_back(Put("m" + std::to_string(i), Pattern(7 * kPart + 3, 20 + i)));
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int i = 0; i < kObjects; i++) {
    threads.emplace_back([&, i] {
      auto h = reader->Open("m" + std::to_string(i), infos[i]);
      if (!h.ok() || ReadWhole(h->get(), infos[i].size) != Pattern(7 * kPart + 3, 20 + i)) bad++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  WaitIdle(*reader);
  for (int i = 0; i < kObjects; i++) {
    EXPECT_EQ(store->BytesServed("m" + std::to_string(i)), infos[i].size) << i;
  }
  EXPECT_EQ(reader->Stats().get_requests, kObjects * 8u);  // 7 whole parts + 3 bytes each
  EXPECT_EQ(cache_->Stats().entries, static_cast<uint64_t>(kObjects));
}

TEST_F(CachedReaderTest, InlineStoreWorksToo) {
  // MemoryStore completes GETs on the calling thread.
  auto reader = NewReader(mem_);
  const std::string data = Pattern(5 * kPart + 1, 12);
  ObjectInfo info = Put("inline", data);
  auto h = reader->Open("inline", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  h->reset();
  WaitIdle(*reader);
  EXPECT_TRUE(reader->Open("inline", info).ok());
  EXPECT_EQ(reader->Stats().hits, 1u);
}

}  // namespace
}  // namespace kvfs
