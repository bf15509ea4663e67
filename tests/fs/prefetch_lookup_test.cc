// Prefetch on lookup through the filesystem: an engine's lookup of a chunk not cached here starts
// its download, which the read then joins; the lookups of a directory scan (the same thread
// listed the directory first) start none.
#include <chrono>
#include <thread>

#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class PrefetchLookupTest : public CachedFsTestBase {
 protected:
  void SetUp() override {
    CachedFsTestBase::SetUp();
    options_.subdirectories = false;
    for (const char* n : {"a.bin", "b.bin", "c.bin"}) {
      mem_->PutObject(std::string("p/") + n, std::string(200000, n[0]));
    }
    MountCached();
  }
  template <typename F>
  void WaitUntil(F done) {  // prefetches start on a worker thread
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      ASSERT_LT(std::chrono::steady_clock::now(), until);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  void WaitIdle() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (reader_->Stats().fetches_in_flight != 0) {
      ASSERT_LT(std::chrono::steady_clock::now(), until);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
};

TEST_F(PrefetchLookupTest, AnEnginesLookupStartsTheDownloadItsReadJoins) {
  auto e = fs_->Lookup(Filesystem::kRootIno, "a.bin", nullptr, /*pid=*/4242);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  WaitUntil([&] { return reader_->Stats().prefetches_started == 1; });
  WaitIdle();
  const uint64_t gets = mem_->Calls(StoreOp::kGet);
  auto data = ReadFile("a.bin");
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(*data, std::string(200000, 'a'));
  EXPECT_EQ(mem_->Calls(StoreOp::kGet), gets) << "the read downloaded it again";
  EXPECT_EQ(reader_->Stats().prefetches_joined, 1u);
}

TEST_F(PrefetchLookupTest, AScansLookupsStartNoDownload) {
  auto dir = fs_->OpenDir(Filesystem::kRootIno, /*pid=*/777);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  std::vector<std::string> names;
  ASSERT_TRUE(fs_->ReadDir(
                     *dir, 0,
                     [&](const DirEntry& d, uint64_t) {
                       names.push_back(d.name);
                       return true;
                     },
                     Filesystem::kRootIno, 777)
                  .ok());
  for (const char* n : {"a.bin", "b.bin", "c.bin"}) {
    ASSERT_TRUE(
        fs_->Lookup(Filesystem::kRootIno, n, nullptr, 777).ok());  // ls -l: lstat of each name
  }
  fs_->ReleaseDir(*dir);
  // A prefetch is queued at the lookup and started later on a worker: neither happened.
  EXPECT_EQ(reader_->Stats().prefetches_queued + reader_->Stats().prefetches_started, 0u);
  EXPECT_EQ(fs_->LookupStatsNow().scan_lookups, 3u);
  EXPECT_EQ(mem_->Calls(StoreOp::kGet), 0u);
  // Another thread of the same node looking a name up is an engine's lookup.
  ASSERT_TRUE(fs_->Lookup(Filesystem::kRootIno, "b.bin", nullptr, 778).ok());
  WaitUntil([&] { return reader_->Stats().prefetches_started == 1; });
  WaitIdle();
}

}  // namespace
}  // namespace kvfs
