// fs/fuse/passthrough_table: the kernel's per-inode rules for passthrough opens, without a mount
// (tests/integration/passthrough_test.py has them through one).
#include "fs/fuse/passthrough_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kvfs {
namespace {

class PassthroughTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/kvfs-pt-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    a_ = Open("a");
    b_ = Open("b");
    table_.Enable();
  }
  void TearDown() override {
    close(a_);
    close(b_);
    std::system(("rm -rf " + dir_).c_str());
  }
  int Open(const std::string& name) {
    return open((dir_ + "/" + name).c_str(), O_RDWR | O_CREAT, 0600);
  }
  PassthroughTable::Mode Open(uint64_t ino, uint64_t fh, int fd, const std::string& version = "v1",
                              bool direct_io = true) {
    return table_.Open(ino, fh, fd, version, direct_io, [this](int) { return ++registered_; });
  }

  std::string dir_;
  int a_ = -1, b_ = -1;
  int32_t registered_ = 0;
  PassthroughTable table_;
};

TEST_F(PassthroughTableTest, HitsOfOneInodeShareOneBackingFileUntilTheLastRelease) {
  auto m1 = Open(7, 1, a_);
  auto m2 = Open(7, 2, a_);
  EXPECT_EQ(m1.backing_id, 1);
  EXPECT_EQ(m2.backing_id, 1);
  EXPECT_FALSE(m1.direct_io);
  EXPECT_EQ(registered_, 1);
  EXPECT_EQ(table_.Release(1), 0);
  EXPECT_EQ(table_.Release(2), 1);          // the last one drops the backing file
  EXPECT_EQ(Open(7, 3, a_).backing_id, 2);  // registered again
}

TEST_F(PassthroughTableTest, AnotherVersionOrAWriteBesidePassthroughIsBusy) {
  ASSERT_GT(Open(7, 1, a_).backing_id, 0);
  EXPECT_TRUE(Open(7, 2, b_, "v2").busy);   // a newer version of the chunk
  EXPECT_TRUE(Open(7, 3, -1, "").busy);     // a write, or a local file
  EXPECT_EQ(table_.Release(2), 0);          // never recorded
  EXPECT_FALSE(Open(8, 4, b_, "v2").busy);  // other inodes are not affected
  EXPECT_GT(table_.Release(1), 0);
  EXPECT_FALSE(Open(7, 5, -1, "", false).busy);
}

TEST_F(PassthroughTableTest, BusyWhileTheInodeHasPassthroughOpens) {
  EXPECT_FALSE(table_.Busy(7));
  ASSERT_GT(Open(7, 1, a_).backing_id, 0);
  EXPECT_TRUE(table_.Busy(7));
  EXPECT_FALSE(table_.Busy(8));
  table_.Release(1);
  EXPECT_FALSE(table_.Busy(7));
}

TEST_F(PassthroughTableTest, TheSameVersionSharesTheBackingFileWithoutOpeningItsOwn) {
  ASSERT_EQ(Open(7, 1, a_).backing_id, 1);
  // Short of descriptors, the second open could not open the cache entry: same bytes anyway.
  EXPECT_EQ(Open(7, 2, -1).backing_id, 1);
  EXPECT_EQ(registered_, 1);
}

TEST_F(PassthroughTableTest, PageCacheOpensKeepHitsWithTheDaemon) {
  auto cached = Open(7, 1, -1, "", /*direct_io=*/false);
  EXPECT_FALSE(cached.busy);
  EXPECT_FALSE(cached.direct_io);
  auto hit = Open(7, 2, a_);
  EXPECT_EQ(hit.backing_id, 0);  // the kernel would refuse it beside a page-cache open
  EXPECT_EQ(registered_, 0);
  table_.Release(1);
  table_.Release(2);
  EXPECT_GT(Open(7, 3, a_).backing_id, 0);
}

TEST_F(PassthroughTableTest, DirectIoOpensMayComeFirst) {
  EXPECT_EQ(Open(7, 1, -1, "v1", /*direct_io=*/true).backing_id, 0);
  EXPECT_GT(Open(7, 2, a_).backing_id, 0);
}

TEST_F(PassthroughTableTest, ARefusedRegistrationTurnsItOff) {
  PassthroughTable t;
  t.Enable();
  auto m = t.Open(7, 1, a_, "v1", true, [](int) { return 0; });
  EXPECT_EQ(m.backing_id, 0);
  EXPECT_TRUE(m.direct_io);
  EXPECT_FALSE(t.enabled());
  int calls = 0;
  EXPECT_EQ(t.Open(8, 2, a_, "v1", true, [&](int) { return ++calls; }).backing_id, 0);
  EXPECT_EQ(calls, 0);
}

TEST_F(PassthroughTableTest, OffUntilEnabled) {
  PassthroughTable t;
  EXPECT_EQ(t.Open(7, 1, a_, "v1", false, [](int) { return 1; }).backing_id, 0);
}

TEST_F(PassthroughTableTest, ASpoolTheKernelWritesMayBeJoinedButNotReplaced) {
  // passthrough_writes: the writer's open of a new version is a passthrough open of its spool.
  const std::string spool = std::string(kSpoolVersionPrefix) + dir_ + "/a";
  ASSERT_EQ(Open(7, 1, a_, spool, false).backing_id, 1);
  // Not busy: a second writer (or a reader) of that spool may join; the filesystem itself
  // refuses a new version of the name while the kernel writes it.
  EXPECT_FALSE(table_.Busy(7));
  EXPECT_EQ(Open(7, 2, a_, spool, false).backing_id, 1);
  EXPECT_EQ(registered_, 1);
  // Any other backing of that inode (a cached version of the chunk) breaks the kernel's rule.
  EXPECT_TRUE(Open(7, 3, b_, "v1").busy);
  EXPECT_EQ(table_.Release(1), 0);
  EXPECT_EQ(table_.Release(2), 1);
  EXPECT_FALSE(table_.Busy(7));
}

}  // namespace
}  // namespace kvfs
