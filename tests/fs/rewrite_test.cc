// A chunk written again on this node right after its close: the kernel sends the RELEASE of that
// close after close() returned, so the next open may come before it. Whether it does must not
// change what the open sees, nor lose what it writes (LMCache's DEVDAX L1 maps a file it has
// just created with truncate() and writes it through the mapping; issue found by CI).
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class RewriteTest : public FsTestBase {
 protected:
  // create + write + flush (close() has returned); the RELEASE is the caller's.
  uint64_t WrittenNotReleased(const std::string& name, const std::string& data) {
    const uint64_t fh = CreateForWrite(name);
    WriteAt(fh, 0, data);
    EXPECT_TRUE(fs_->Flush(fh).ok());
    return fh;
  }
  uint64_t Ino(const std::string& name) {
    auto e = fs_->Lookup(1, name);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->attr.ino : 0;
  }
};

// O_RDWR, pages written back (pid 0, as a shared mapping's), closed: the object is the new bytes,
// whether the first close's release came before the open or after.
TEST_F(RewriteTest, AnOpenForReadingAndWritingReplacesTheObjectWhateverTheReleaseOrder) {
  Mount();
  const std::string zeros(8192, '\0');
  const std::string want = std::string(4096, 'm') + std::string(4096, '\0');
  for (const bool released_first : {false, true}) {
    const std::string name = released_first ? "after.bin" : "before.bin";
    const uint64_t first = WrittenNotReleased(name, zeros);
    if (released_first) {
      ASSERT_TRUE(fs_->Release(first).ok());
    }
    auto rw = fs_->Open(Ino(name), O_RDWR);
    ASSERT_TRUE(rw.ok()) << rw.status().ToString();
    if (!released_first) {
      ASSERT_TRUE(fs_->Release(first).ok());
    }
    WriteAt(rw->fh, 0, std::string(4096, 'm'));
    ASSERT_TRUE(CloseHandle(rw->fh).ok()) << name;
    EXPECT_TRUE(mem_->GetObject("p/" + name) == want) << name;
    EXPECT_TRUE(*ReadFile(name) == want) << name;
  }
}

// Two descriptors of one file: the first close publishes, the other goes on writing. Its close
// publishes the new bytes (a new version of the object this file created), not the old ones.
TEST_F(RewriteTest, AWriterThatGoesOnAfterThePublishingCloseReplacesTheObject) {
  Mount();
  const uint64_t first = CreateForWrite("c.bin");
  auto second = fs_->Open(Ino("c.bin"), O_RDWR);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  WriteAt(first, 0, std::string(8192, 'a'));
  ASSERT_TRUE(CloseHandle(first).ok());
  EXPECT_TRUE(mem_->GetObject("p/c.bin") == std::string(8192, 'a'));
  WriteAt(second->fh, 0, std::string(4096, 'b'));
  ASSERT_TRUE(CloseHandle(second->fh).ok());
  EXPECT_TRUE(mem_->GetObject("p/c.bin") == std::string(4096, 'b') + std::string(4096, 'a'));
}

// O_WRONLY starts a new, empty version over the object, under the exists policy: a shorter one
// is refused (EEXIST), whether the first close's release came before the open or after - never
// the old bytes' tail published under the new head.
TEST_F(RewriteTest, AnOpenForWritingOnlyMeetsTheObjectWhateverTheReleaseOrder) {
  Mount();
  for (const bool released_first : {false, true}) {
    const std::string name = released_first ? "after.bin" : "before.bin";
    const uint64_t first = WrittenNotReleased(name, std::string(8192, 'a'));
    if (released_first) {
      ASSERT_TRUE(fs_->Release(first).ok());
    }
    auto w = fs_->Open(Ino(name), O_WRONLY);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    if (!released_first) {
      ASSERT_TRUE(fs_->Release(first).ok());
    }
    WriteAt(w->fh, 0, std::string(4096, 'b'));
    EXPECT_EQ(CloseHandle(w->fh).code(), StatusCode::kAlreadyExists) << name;
    EXPECT_TRUE(mem_->GetObject("p/" + name) == std::string(8192, 'a')) << name;
    EXPECT_TRUE(*ReadFile(name) == std::string(8192, 'a')) << name;
  }
}

}  // namespace
}  // namespace kvfs
