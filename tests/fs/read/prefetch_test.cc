// Prefetch on lookup in the cache-backed reader (fs/read/prefetch_queue.h): a prefetched chunk's
// open joins its download or hits its entry and counts as a miss; the bounds on downloads and
// bytes; a flipped byte is never served; invalidation forgets a queued prefetch.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "fs/read/prefetch_queue.h"
#include "tests/fs/read/cached_reader_fixture.h"
#include "tests/fs/read/threaded_store.h"

namespace kvfs::testing {
namespace {

// Waits (without asserting any timing) until `done` holds: prefetches start on a worker.
template <typename F>
void WaitUntil(F done) {
  for (int i = 0; i < 10000 && !done(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(done());
}

class PrefetchTest : public CachedReaderTest {
 protected:
  std::unique_ptr<CachedReader> NewPrefetchingReader(std::shared_ptr<ObjectStore> store,
                                                     int downloads, uint64_t bytes) {
    CachedReaderOptions o;
    o.part_size = kPart;
    o.max_parallel_parts = 4;
    o.prefetch.max_downloads = downloads;
    o.prefetch.max_bytes = bytes;
    return std::make_unique<CachedReader>(std::move(store), cache_.get(), o);
  }
};

TEST_F(PrefetchTest, OpenOfAPrefetchedChunkJoinsItAndCountsAMiss) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  std::vector<std::pair<ObjectInfo, std::string>> chunks;
  for (int i = 0; i < 3; i++) {
    std::string data = Pattern(3 * kPart + 17 * i, 100 + i);
    chunks.emplace_back(Put("c" + std::to_string(i), data), data);
  }
  store->HoldGetsFrom(kPart);  // the first download is still running at its open
  for (auto& [info, data] : chunks) reader->Prefetch(info.key, info);
  reader->Prefetch(chunks[0].first.key, chunks[0].first);  // a second lookup: nothing more
  WaitUntil([&] { return reader->Stats().prefetches_started == 3; });
  EXPECT_EQ(reader->Stats().prefetches_queued, 0u);
  auto first = reader->Open(chunks[0].first.key, chunks[0].first);
  ASSERT_TRUE(first.ok());
  store->Release();
  EXPECT_EQ(ReadWhole(first->get(), chunks[0].second.size()), chunks[0].second);
  WaitIdle(*reader);
  const uint64_t fetched = reader->Stats().bytes_from_store;
  for (size_t i = 1; i < chunks.size(); i++) {
    auto h = reader->Open(chunks[i].first.key, chunks[i].first);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(ReadWhole(h->get(), chunks[i].second.size()), chunks[i].second);
  }
  ReaderStats s = reader->Stats();
  EXPECT_EQ(s.bytes_from_store, fetched) << "a prefetched chunk was downloaded again";
  EXPECT_EQ(s.prefetches_joined, 3u);
  EXPECT_EQ(s.misses, 3u);  // none of them was on this node when the engine looked
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.shared_downloads, 0u);
  EXPECT_EQ(s.prefetch_bytes_held, 0u);
  // Read again: now hits.
  auto again = reader->Open(chunks[1].first.key, chunks[1].first);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(reader->Stats().hits, 1u);
}

TEST_F(PrefetchTest, CachedChunksAreNotPrefetched) {
  auto reader = NewReader(mem_);
  const std::string data = Pattern(2 * kPart, 7);
  ObjectInfo info = Put("k", data);
  auto h = reader->Open("k", info);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(ReadWhole(h->get(), data.size()), data);
  h->reset();
  WaitIdle(*reader);
  reader->Prefetch("k", info);
  // Queued at once, started on a worker: neither happened.
  EXPECT_EQ(reader->Stats().prefetches_queued + reader->Stats().prefetches_started, 0u);
}

TEST_F(PrefetchTest, AtMostPrefetchDownloadsRunAndTheRestWait) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewPrefetchingReader(store, 2, 64 << 20);
  std::vector<ObjectInfo> infos;
  for (int i = 0; i < 5; i++) infos.push_back(Put("q" + std::to_string(i), Pattern(kPart, i)));
  store->HoldGetsFrom(0);
  for (const ObjectInfo& info : infos) reader->Prefetch(info.key, info);
  WaitUntil([&] { return reader->Stats().prefetches_started == 2; });
  ReaderStats s = reader->Stats();
  EXPECT_EQ(s.prefetches_queued, 3u);
  EXPECT_EQ(s.fetches_in_flight, 2u);
  store->Release();
  WaitUntil([&] { return reader->Stats().prefetches_started == 5; });
  WaitIdle(*reader);
  s = reader->Stats();
  EXPECT_EQ(s.prefetches_started, 5u);
  EXPECT_EQ(s.prefetches_queued, 0u);
  EXPECT_EQ(s.prefetch_bytes_held, 5 * kPart);
}

TEST_F(PrefetchTest, UnreadBytesAreBoundedUntilTheEngineReads) {
  auto reader = NewPrefetchingReader(mem_, 16, 2 * kPart);
  std::vector<ObjectInfo> infos;
  for (int i = 0; i < 4; i++) infos.push_back(Put("b" + std::to_string(i), Pattern(kPart, i)));
  for (const ObjectInfo& info : infos) reader->Prefetch(info.key, info);
  WaitUntil([&] { return reader->Stats().prefetches_started == 2; });
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().prefetches_started, 2u) << "more than prefetch_bytes unread";
  EXPECT_EQ(reader->Stats().prefetches_queued, 2u);
  // The engine reads the first: its bytes are the engine's now, and the next one starts.
  auto h = reader->Open(infos[0].key, infos[0]);
  ASSERT_TRUE(h.ok());
  WaitUntil([&] { return reader->Stats().prefetches_started == 3; });
  WaitIdle(*reader);
  // A chunk bigger than the whole budget is never prefetched.
  ObjectInfo big = Put("big", Pattern(3 * kPart, 9));
  reader->Prefetch("big", big);
  EXPECT_EQ(reader->Stats().prefetches_queued, 1u);
}

TEST_F(PrefetchTest, AFlippedByteIsNeverServedFromAPrefetch) {
  auto reader = NewReader(mem_);
  const std::string data = Pattern(2 * kPart + 5, 3);
  ObjectInfo info = Put("flip", data);
  info.crc32c = 0x12345678;  // the checksum its writer recorded does not match the bytes
  reader->Prefetch("flip", info);
  WaitUntil([&] { return reader->Stats().prefetches_failed == 1; });
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().verify_failures, 1u);
  EXPECT_EQ(reader->Stats().prefetches_failed, 1u);
  auto h = reader->Open("flip", info);
  ASSERT_TRUE(h.ok());
  Status err;
  EXPECT_EQ(ReadWhole(h->get(), data.size(), &err), "");
  EXPECT_EQ(err.code(), StatusCode::kDataLoss) << err.ToString();
}

TEST_F(PrefetchTest, InvalidateForgetsAQueuedPrefetch) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewPrefetchingReader(store, 1, 64 << 20);
  ObjectInfo a = Put("a", Pattern(kPart, 1));
  ObjectInfo b = Put("b", Pattern(kPart, 2));
  store->HoldGetsFrom(0);
  reader->Prefetch("a", a);
  reader->Prefetch("b", b);
  WaitUntil([&] { return reader->Stats().prefetches_started == 1; });
  EXPECT_EQ(reader->Stats().prefetches_queued, 1u);
  reader->Invalidate("b");  // deleted by another node before its download started
  EXPECT_EQ(reader->Stats().prefetches_queued, 0u);
  EXPECT_EQ(reader->Stats().prefetches_cancelled, 1u);
  store->Release();
  WaitIdle(*reader);
  EXPECT_EQ(reader->Stats().prefetches_started, 1u);
}

TEST_F(PrefetchTest, ACachedReadDoesNotWaitForStalledPrefetches) {
  auto store = std::make_shared<ThreadedStore>(mem_);
  auto reader = NewReader(store);
  const std::string hot = Pattern(2 * kPart, 5);
  ObjectInfo hot_info = Put("hot", hot);
  {
    auto h = reader->Open("hot", hot_info);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(ReadWhole(h->get(), hot.size()), hot);
  }
  WaitIdle(*reader);
  store->HoldGetsFrom(0);  // the store stalls: every prefetch hangs
  for (int i = 0; i < 20; i++) {
    ObjectInfo info = Put("cold" + std::to_string(i), Pattern(kPart, i));
    reader->Prefetch(info.key, info);
  }
  WaitUntil([&] { return reader->Stats().prefetches_started == 16; });
  auto h = reader->Open("hot", hot_info);  // served from the cache, no GET
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE((*h)->WouldWait(0, hot.size()));
  EXPECT_EQ(ReadWhole(h->get(), hot.size()), hot);
  EXPECT_EQ(reader->Stats().hits, 1u);
  store->Release();
  WaitIdle(*reader);
}

TEST(PrefetchQueueTest, UnreadPrefetchesStopCountingAfterUnreadSecs) {
  ReaderCounters counters;
  auto now = std::chrono::steady_clock::time_point{};
  PrefetchOptions o;
  o.max_bytes = 100;
  o.unread_secs = 30;
  PrefetchQueue q(o, &counters, [&] { return now; });
  ObjectInfo a;
  a.key = "a";
  a.size = 60;
  ObjectInfo b = a;
  b.key = "b";
  q.Offer(a);
  q.Offer(b);
  ASSERT_TRUE(q.Next().has_value());
  EXPECT_FALSE(q.Next().has_value()) << "60 + 60 > 100";
  q.Ended("a", true);
  now += std::chrono::seconds(31);
  std::optional<ObjectInfo> next = q.Next();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->key, "b");
  EXPECT_EQ(counters.prefetches_unread.load(), 1u);
  EXPECT_EQ(counters.prefetch_bytes_unread.load(), 60u);
  std::vector<ObjectInfo> expired = q.TakeExpired();  // for the cache to evict first
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].key, "a");
  EXPECT_TRUE(q.TakeExpired().empty()) << "taken once";
  EXPECT_EQ(q.ClaimForRead("a"), PrefetchQueue::Claim::kNone);
  EXPECT_EQ(q.ClaimForRead("b"), PrefetchQueue::Claim::kPrefetched);
  q.Ended("b", true);  // claimed while downloading: nothing is held after it
  EXPECT_EQ(counters.prefetch_bytes_held.load(), 0u);
}

TEST(PrefetchQueueTest, AFullQueueDropsTheOldestLookup) {
  ReaderCounters counters;
  PrefetchOptions o;
  o.max_bytes = 1000;
  o.max_downloads = 1;
  o.max_queued = 2;
  PrefetchQueue q(o, &counters);
  for (const char* k : {"x", "y", "z"}) {
    ObjectInfo i;
    i.key = k;
    i.size = 1;
    q.Offer(i);
  }
  EXPECT_EQ(counters.prefetches_cancelled.load(), 1u);
  EXPECT_EQ(q.ClaimForRead("x"), PrefetchQueue::Claim::kNone);
  EXPECT_EQ(q.ClaimForRead("y"), PrefetchQueue::Claim::kQueued);
}

}  // namespace
}  // namespace kvfs::testing
