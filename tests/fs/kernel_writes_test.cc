// passthrough_writes: the kernel writes a file's spool and the daemon sees only open, flush and
// release. Here the test plays the kernel - it writes the spool through the descriptor the open
// offered - and the file must be published exactly as if the daemon had served the writes.
#include <fcntl.h>
#include <unistd.h>

#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class KernelWritesTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    options_.passthrough_writes = true;
    Mount();
  }
  // The kernel's side of a granted passthrough open: the adapter tells the filesystem, then the
  // writes go to the backing file.
  static void KernelWrite(int fd, uint64_t off, const std::string& data) {
    ASSERT_EQ(pwrite(fd, data.data(), data.size(), static_cast<off_t>(off)),
              static_cast<ssize_t>(data.size()));
  }
};

TEST_F(KernelWritesTest, ACreatedFileIsOfferedItsSpoolAndPublishedFromIt) {
  auto cr = fs_->CreateFile(1, "c.pt", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok()) << cr.status().ToString();
  const OpenResult& o = cr->second;
  ASSERT_GE(o.passthrough_fd, 0);
  EXPECT_EQ(o.version.rfind(kSpoolVersionPrefix, 0), 0u);
  fs_->NotePassthrough(o.fh);
  const std::string data(300000, 'k');
  KernelWrite(o.passthrough_fd, 0, data);
  // stat() of the open file reads the spool's size: the daemon saw no write.
  auto attr = fs_->GetAttr(cr->first.attr.ino, o.fh);
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->size, data.size());
  ASSERT_TRUE(CloseHandle(o.fh).ok());
  EXPECT_EQ(mem_->GetObject("p/c.pt"), data);
  EXPECT_EQ(*ReadFile("c.pt"), data);
  const WriteStats s = fs_->WriteStatsNow();
  EXPECT_EQ(s.passthrough_opens, 1u);
  EXPECT_EQ(s.bytes_served, 0u);
}

// close() has returned, its RELEASE not come: the kernel may still hold the spool as the inode's
// backing file, so a read and an O_RDWR open are offered that same file (another would be refused,
// EBUSY), and what the kernel writes through the second open replaces the object.
TEST_F(KernelWritesTest, OpensBeforeThePublishingClosesReleaseShareItsSpool) {
  auto cr = fs_->CreateFile(1, "d.bin", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok()) << cr.status().ToString();
  const uint64_t ino = cr->first.attr.ino;
  fs_->NotePassthrough(cr->second.fh);
  KernelWrite(cr->second.passthrough_fd, 0, std::string(8192, '\0'));
  ASSERT_TRUE(fs_->Flush(cr->second.fh).ok());  // published; the release is still to come
  auto r = fs_->Open(ino, O_RDONLY);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, cr->second.version) << "a read of the published chunk: not its spool";
  auto rw = fs_->Open(ino, O_RDWR);
  ASSERT_TRUE(rw.ok()) << rw.status().ToString();
  EXPECT_EQ(rw->version, cr->second.version);
  fs_->NotePassthrough(rw->fh);
  ASSERT_TRUE(fs_->Release(cr->second.fh).ok());
  ASSERT_TRUE(fs_->Release(r->fh).ok());
  KernelWrite(rw->passthrough_fd, 0, std::string(4096, 'm'));
  ASSERT_TRUE(CloseHandle(rw->fh).ok());
  const std::string want = std::string(4096, 'm') + std::string(4096, '\0');
  EXPECT_TRUE(mem_->GetObject("p/d.bin") == want);
  EXPECT_TRUE(*ReadFile("d.bin") == want);
}

TEST_F(KernelWritesTest, ANewVersionOfAnObjectIsDirtiedByTheKernelsWrites) {
  ASSERT_TRUE(WriteFile("v.pt", "old bytes").ok());
  auto e = fs_->Lookup(1, "v.pt");
  ASSERT_TRUE(e.ok());
  // Opened write-only: a new, clean version (nothing to upload unless written).
  auto o = fs_->Open(e->attr.ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_GE(o->passthrough_fd, 0);
  fs_->NotePassthrough(o->fh);
  // Another size over an existing chunk: the upload is tried, and the exists policy refuses it
  // (chunks are written once) - proof that the kernel's write made the file dirty.
  KernelWrite(o->passthrough_fd, 0, "new, longer bytes");
  Status st = CloseHandle(o->fh);
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  // Opened and closed without a write: nothing is tried, the object stays.
  auto o2 = fs_->Open(e->attr.ino, O_WRONLY);
  ASSERT_TRUE(o2.ok());
  fs_->NotePassthrough(o2->fh);
  EXPECT_TRUE(CloseHandle(o2->fh).ok());
  EXPECT_EQ(mem_->GetObject("p/v.pt"), "old bytes");
}

TEST_F(KernelWritesTest, AnotherVersionOfANameTheKernelWritesIsBusy) {
  auto cr = fs_->CreateFile(1, "b.pt", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok());
  fs_->NotePassthrough(cr->second.fh);
  KernelWrite(cr->second.passthrough_fd, 0, "half");
  auto again = fs_->CreateFile(1, "b.pt", O_CREAT | O_WRONLY | O_TRUNC);
  EXPECT_EQ(again.status().code(), StatusCode::kBusy) << again.status().ToString();
  auto trunc = fs_->Open(cr->first.attr.ino, O_WRONLY | O_TRUNC);
  EXPECT_EQ(trunc.status().code(), StatusCode::kBusy);
  // A writer of the same version (no O_TRUNC) joins it, as the kernel allows.
  auto join = fs_->Open(cr->first.attr.ino, O_WRONLY);
  ASSERT_TRUE(join.ok()) << join.status().ToString();
  EXPECT_EQ(join->version, cr->second.version);
  KernelWrite(cr->second.passthrough_fd, 4, " and the rest");
  Status st = CloseHandle(cr->second.fh);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(fs_->Release(join->fh).ok());
  EXPECT_EQ(mem_->GetObject("p/b.pt"), "half and the rest");
}

TEST_F(KernelWritesTest, PastMaxChunkBytesIsRefusedAtTheClose) {
  options_.max_chunk_bytes = 1000;
  Mount();
  auto cr = fs_->CreateFile(1, "big.pt", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok());
  fs_->NotePassthrough(cr->second.fh);
  KernelWrite(cr->second.passthrough_fd, 0, std::string(1001, 'b'));
  Status st = CloseHandle(cr->second.fh);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "big.pt").status().code(), StatusCode::kNotFound);
}

TEST_F(KernelWritesTest, OffByDefaultAndForFilesStartedFromTheObject) {
  options_.passthrough_writes = false;
  Mount();
  auto cr = fs_->CreateFile(1, "d.pt", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok());
  EXPECT_EQ(cr->second.passthrough_fd, -1);
  ASSERT_TRUE(fs_->Release(cr->second.fh).ok());
  options_.passthrough_writes = true;
  Mount();
  ASSERT_TRUE(WriteFile("rw.pt", "object bytes").ok());
  auto e = fs_->Lookup(1, "rw.pt");
  ASSERT_TRUE(e.ok());
  auto o = fs_->Open(e->attr.ino, O_RDWR);  // keeps the object's bytes (Preload)
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->passthrough_fd, -1);
  ASSERT_TRUE(fs_->Release(o->fh).ok());
}

}  // namespace
}  // namespace kvfs
