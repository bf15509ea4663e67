// A full spool disk: write() answers ENOSPC (not EFBIG, which stays for max_chunk_bytes), through
// the one errno map. The spool is a 1 MiB tmpfs mounted by the test (skipped without the right).
#include <gtest/gtest.h>

#include "tests/fakes/small_tmpfs.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class DiskFullTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    if (!disk_.ok()) GTEST_SKIP() << "cannot mount a tmpfs (needs root)";
    options_.spool_dir = disk_.path() + "/spool";
    Mount();
  }
  void TearDown() override {
    fs_.reset();
    FsTestBase::TearDown();
  }
  testing::SmallTmpfs disk_{1 << 20};
};

TEST_F(DiskFullTest, WriteIntoAFullSpoolIsEnospc) {
  auto cr = fs_->CreateFile(1, "big.pt", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok()) << cr.status().ToString();
  const uint64_t fh = cr->second.fh;
  const std::string block(256 << 10, 'x');
  Status failed;
  for (uint64_t off = 0; off < (4u << 20) && failed.ok(); off += block.size()) {
    auto w = fs_->Write(fh, off, block.data(), block.size());
    if (!w.ok()) failed = w.status();
  }
  ASSERT_FALSE(failed.ok()) << "4 MiB fit into a 1 MiB spool";
  EXPECT_EQ(failed.code(), StatusCode::kNoSpace) << failed.ToString();
  EXPECT_EQ(ToErrno(failed), ENOSPC) << failed.ToString();
  EXPECT_NE(failed.message().find("big.pt"), std::string::npos) << failed.message();
  fs_->Release(fh);
}

TEST_F(DiskFullTest, PastMaxChunkBytesStaysEfbig) {
  fs_.reset();
  options_.max_chunk_bytes = 1000;
  Mount();
  auto cr = fs_->CreateFile(1, "over.pt", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok());
  const std::string data(2000, 'y');
  auto w = fs_->Write(cr->second.fh, 0, data.data(), data.size());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(ToErrno(w.status()), EFBIG) << w.status().ToString();
  fs_->Release(cr->second.fh);
}

}  // namespace
}  // namespace kvfs
