// Store outages seen by the filesystem logic: names whose chunk is in the local cache keep being
// answered (stale-while-revalidate, cached_chunk_trust_secs) while the store fails; background
// revalidation drops a local copy whose object is gone; a read that finds the object changed
// (ESTALE) drops the stale metadata so the next open sees the new object.
#include <fcntl.h>

#include <chrono>
#include <string>
#include <thread>

#include "cache/chunk_cache.h"
#include "fs/read/cached_reader.h"
#include "tests/fakes/fault_store.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

using namespace std::chrono_literals;

class StaleServeTest : public FsTestBase {
 protected:
  void TearDown() override {
    fs_.reset();
    reader_.reset();
    cache_.reset();
    std::filesystem::remove_all(cache_dir_);
    FsTestBase::TearDown();
  }

  void MountCached() {
    faults_ = std::make_shared<FaultStore>(mem_);
    store_ = faults_;
    cache_dir_ = spool_.string() + "-cache";
    ChunkCacheOptions co;
    co.dir = cache_dir_;
    co.capacity = 64 << 20;
    auto cache = ChunkCache::Open(co);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    cache_ = std::move(cache).value();
    reader_ = std::make_shared<CachedReader>(store_, cache_.get(), CachedReaderOptions{});
    auto fs = Filesystem::Create(store_, reader_, options_, [this] { return now_; });
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    fs_ = std::move(fs).value();
  }

  // Writes `data` as p/<name> in the store (as another node would) and reads it once through the
  // filesystem, so it is in the local cache.
  void PutAndCache(const std::string& name, const std::string& data) {
    ASSERT_TRUE(mem_->Put("p/" + name, Body::FromMemory(data.data(), data.size())).ok());
    auto got = ReadFile(name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(*got, data);
    // The download commits to the cache just after its last byte was handed out.
    for (int i = 0; i < 200 && !reader_->CachedCopy("p/" + name); i++) {
      std::this_thread::sleep_for(25ms);
    }
    ASSERT_TRUE(reader_->CachedCopy("p/" + name).has_value()) << "the read did not fill the cache";
  }

  void FailTheStore() {
    for (auto op : {FaultStore::Op::kHead, FaultStore::Op::kGet, FaultStore::Op::kList}) {
      faults_->InjectError(op, {Status::Unavailable("injected outage"), FaultStore::kForever});
    }
  }

  std::shared_ptr<FaultStore> faults_;
  std::string cache_dir_;
  std::unique_ptr<ChunkCache> cache_;
  std::shared_ptr<CachedReader> reader_;
};

TEST_F(StaleServeTest, CachedChunkIsServedWhileTheStoreIsDown) {
  MountCached();
  const std::string data(300'000, 'c');
  PutAndCache("a.pt", data);
  now_ += 10min;  // well past metadata_ttl_secs
  FailTheStore();
  auto e = fs_->Lookup(1, "a.pt");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->attr.size, data.size());
  auto attr = fs_->GetAttr(e->attr.ino);
  ASSERT_TRUE(attr.ok()) << attr.status().ToString();
  auto got = ReadFile("a.pt");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, data);
  // A name that is not cached still needs the store: its error, not a wrong "absent".
  auto miss = fs_->Lookup(1, "b.pt");
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.status().code(), StatusCode::kUnavailable) << miss.status().ToString();
  // When the store is back, everything works again.
  faults_->ClearFaults();
  EXPECT_EQ(fs_->Lookup(1, "b.pt").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(ReadFile("a.pt").ok());
}

TEST_F(StaleServeTest, TrustRunsOut) {
  options_.cached_chunk_trust_secs = 120;
  MountCached();
  PutAndCache("a.pt", std::string(1000, 'x'));
  now_ += 10min;  // past the trust too
  FailTheStore();
  auto e = fs_->Lookup(1, "a.pt");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnavailable) << e.status().ToString();
}

TEST_F(StaleServeTest, ZeroTrustAlwaysAsksTheStore) {
  options_.cached_chunk_trust_secs = 0;
  MountCached();
  PutAndCache("a.pt", std::string(1000, 'x'));
  now_ += 10min;
  FailTheStore();
  EXPECT_FALSE(fs_->Lookup(1, "a.pt").ok());
}

TEST_F(StaleServeTest, RevalidationDropsAChunkDeletedInTheStore) {
  MountCached();
  PutAndCache("a.pt", std::string(1000, 'x'));
  ASSERT_TRUE(mem_->Delete("p/a.pt").ok());  // another node deleted it
  now_ += 10min;
  // The first answer after the TTL is the cached one; its revalidation finds the 404.
  EXPECT_TRUE(fs_->Lookup(1, "a.pt").ok());
  Status last;
  for (int i = 0; i < 200; i++) {  // the revalidation runs in the background
    last = fs_->Lookup(1, "a.pt").status();
    if (last.code() == StatusCode::kNotFound) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(last.code(), StatusCode::kNotFound) << last.ToString();
  // The revalidator records the miss, then drops the copy: wait for the second step too.
  for (int i = 0; i < 200 && reader_->CachedCopy("p/a.pt").has_value(); i++) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_FALSE(reader_->CachedCopy("p/a.pt").has_value()) << "the local copy was kept";
}

TEST_F(StaleServeTest, RevalidationReplacesAChangedObject) {
  MountCached();
  PutAndCache("a.pt", std::string(1000, 'x'));
  const std::string v2(2000, 'y');
  ASSERT_TRUE(mem_->Put("p/a.pt", Body::FromMemory(v2.data(), v2.size())).ok());
  now_ += 10min;
  EXPECT_TRUE(fs_->Lookup(1, "a.pt").ok());
  uint64_t size = 0;
  for (int i = 0; i < 200 && size != v2.size(); i++) {
    auto e = fs_->Lookup(1, "a.pt");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    size = e->attr.size;
    if (size != v2.size()) std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(size, v2.size());
  auto got = ReadFile("a.pt");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, v2);
}

// The adapter asks first without waiting on the store, and runs only the calls that need it on
// its store-wait pool: cached answers never touch the store, the others say so at once.
TEST_F(StaleServeTest, LookupSaysWhenItWouldWaitOnTheStore) {
  MountCached();
  PutAndCache("a.pt", std::string(1000, 'x'));
  now_ += 10min;
  FailTheStore();
  bool needs_store = false;
  auto e = fs_->Lookup(1, "a.pt", &needs_store);
  EXPECT_FALSE(needs_store);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto a = fs_->GetAttr(e->attr.ino, std::nullopt, &needs_store);
  EXPECT_FALSE(needs_store);
  EXPECT_TRUE(a.ok());
  // Not cached: the answer would need the store (which fails here); the call says so at once.
  fs_->Lookup(1, "b.pt", &needs_store);
  EXPECT_TRUE(needs_store);
}

// ESTALE: the object changed under an open handle; the metadata of the old one must not outlive
// it, or the next open would ask for the old version again (ESTALE until the TTL passes).
TEST_F(FsTestBase, StaleReadDropsTheMetadataSoTheNextOpenSeesTheNewObject) {
  Mount();
  const std::string v1(1000, 'a'), v2(1500, 'b');
  ASSERT_TRUE(mem_->Put("p/c.pt", Body::FromMemory(v1.data(), v1.size())).ok());
  auto e = fs_->Lookup(1, "c.pt");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto o = fs_->Open(e->attr.ino, O_RDONLY);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_TRUE(mem_->Put("p/c.pt", Body::FromMemory(v2.data(), v2.size())).ok());
  std::string buf(4096, '\0');
  auto n = fs_->Read(o->fh, 0, buf.size(), buf.data());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(ToErrno(n.status()), ESTALE);
  fs_->Release(o->fh);
  auto got = ReadFile("c.pt");  // same clock: the TTL has not passed
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, v2);
}

}  // namespace
}  // namespace kvfs
