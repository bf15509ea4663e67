// readdir through Filesystem over the in-memory store: a handle holds one listing page, not the
// whole directory, closedir frees it, and offsets (getdents going on, rewinddir, seekdir back) give
// every name exactly once.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "objstore/store_wrapper.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class DirStreamTest : public FsTestBase {
 protected:
  // A handle's bound: one LIST page (1,000 names) of DirEntry plus its name, and the cursor.
  static constexpr size_t kHandleBound = 1000 * (sizeof(DirEntry) + 64) + 16 * 1024;

  void Fill(int n) {
    for (int i = 0; i < n; ++i) {
      char name[32];
      snprintf(name, sizeof(name), "p/chunk-%06d.bin", i);
      mem_->PutObject(name, "x");
    }
  }
};

TEST_F(DirStreamTest, HandleHoldsOnePageAndClosedirFreesIt) {
  Mount();
  constexpr int kNames = 20000;
  Fill(kNames);
  std::vector<uint64_t> handles;
  for (int h = 0; h < 4; ++h) {
    auto fh = fs_->OpenDir(1);
    ASSERT_TRUE(fh.ok()) << fh.status().ToString();
    handles.push_back(*fh);
  }
  EXPECT_LE(fs_->DirHandleBytes(), handles.size() * kHandleBound);
  for (uint64_t fh : handles) {
    std::set<std::string> names;
    uint64_t off = 0;
    size_t entries = 0;
    for (;;) {  // 100 entries per readdir, checking the bound between calls
      size_t n = 0;
      ASSERT_TRUE(fs_->ReadDir(fh, off,
                               [&](const DirEntry& e, uint64_t next) {
                                 if (n == 100) return false;
                                 names.insert(e.name);
                                 off = next;
                                 ++n;
                                 return true;
                               })
                      .ok());
      entries += n;
      if (n == 0) break;
      ASSERT_LE(fs_->DirHandleBytes(), handles.size() * kHandleBound);
    }
    EXPECT_EQ(entries, kNames + 2u);
    EXPECT_EQ(names.size(), kNames + 2u);  // each once
  }
  for (uint64_t fh : handles) fs_->ReleaseDir(fh);
  EXPECT_EQ(fs_->DirHandleBytes(), 0u);
}

TEST_F(DirStreamTest, OffsetsBackwardsListAgainFromTheStart) {
  Mount();
  Fill(2500);
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok());
  auto all = ReadAllDir(*fs_, *fh, 300);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2502u);
  // seekdir back into an earlier page, then rewinddir: the same entries at the same offsets.
  for (uint64_t start : {1500u, 10u, 0u, 2501u, 2502u}) {
    std::vector<std::string> got;
    ASSERT_TRUE(fs_->ReadDir(*fh, start,
                             [&](const DirEntry& e, uint64_t next) {
                               EXPECT_EQ(next, start + got.size() + 1);
                               got.push_back(e.name);
                               return got.size() < 5;
                             })
                    .ok());
    ASSERT_EQ(got.size(), std::min<size_t>(5, all->size() - start)) << start;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], (*all)[start + i].name);
  }
  fs_->ReleaseDir(*fh);
}

TEST_F(DirStreamTest, AFileAndADirectoryOfOneNameAreShownOnce) {
  Mount();
  // "d" and "d/" on one page: shown once, as the directory.
  mem_->PutObject("p/d", "x");
  mem_->PutObject("p/d/inner", "x");
  // "e" on the first page, "e/" on the third (2,000 keys "e-..." sort between): shown once.
  mem_->PutObject("p/e", "x");
  for (int i = 0; i < 2000; ++i) mem_->PutObject("p/e-" + std::to_string(i), "x");
  mem_->PutObject("p/e/inner", "x");
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok());
  auto all = ReadAllDir(*fs_, *fh);
  ASSERT_TRUE(all.ok());
  std::map<std::string, int> count;
  bool d_is_dir = false;
  for (const auto& e : *all) {
    ++count[e.name];
    if (e.name == "d") d_is_dir = e.is_dir;
  }
  EXPECT_EQ(count["d"], 1);
  EXPECT_TRUE(d_is_dir);
  EXPECT_EQ(count["e"], 1);
  EXPECT_EQ(all->size(), 2u + 2 + 2000);
  fs_->ReleaseDir(*fh);
}

TEST_F(DirStreamTest, AChunkBeingWrittenAndAlreadyStoredIsShownOnce) {
  Mount();
  Fill(1500);
  // Reopened for writing (replace): local and in the store.
  auto cr = fs_->CreateFile(1, "chunk-001200.bin", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok()) << cr.status().ToString();
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok());
  auto all = ReadAllDir(*fs_, *fh);
  ASSERT_TRUE(all.ok());
  std::set<std::string> names;
  for (const auto& e : *all) names.insert(e.name);
  EXPECT_EQ(names.size(), all->size());
  EXPECT_EQ(all->size(), 1502u);
  fs_->ReleaseDir(*fh);
  fs_->Release(cr->second.fh);
}

// A server whose listing never ends: every page is the first one again, with a new token.
class EndlessListing : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  Result<ListResult> List(const ListRequest& req) override {
    ListRequest first = req;
    first.continuation_token.clear();
    auto r = StoreWrapper::List(first);
    if (!r.ok()) return r;
    r->truncated = true;
    r->next_continuation_token = "t" + std::to_string(++pages_);
    return r;
  }

 private:
  int pages_ = 0;
};

TEST_F(DirStreamTest, AListingThatRepeatsItsPagesEndsWithAnErrorAndNoDuplicates) {
  store_ = std::make_shared<EndlessListing>(mem_);
  Mount();
  for (int i = 0; i < 10; ++i) mem_->PutObject("p/c" + std::to_string(i), "x");
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok()) << fh.status().ToString();
  std::map<std::string, int> seen;
  Status st = fs_->ReadDir(*fh, 0, [&](const DirEntry& e, uint64_t) {
    ++seen[e.name];
    return true;
  });
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_EQ(seen.size(), 12u);
  for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;
  fs_->ReleaseDir(*fh);
}

}  // namespace
}  // namespace kvfs
