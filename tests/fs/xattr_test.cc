// A chunk's user.* extended attributes: set while it is written (or on its temp file before the
// rename), published with it, read back by another node (from the object's metadata, asked for
// when only a listing named it), fixed once stored; setxattr's flags and the size bound.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>

#include "base/user_xattrs.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

using Mode = UserXattrs::SetMode;

class XattrTest : public FsTestBase {
 protected:
  // Creates `name`, writes `bytes`, sets `attrs` on it while it is open; returns the handle.
  uint64_t WrittenWith(const std::string& name, const std::string& bytes, uint64_t* ino) {
    auto cr = fs_->CreateFile(1, name, O_CREAT | O_WRONLY | O_TRUNC);
    EXPECT_TRUE(cr.ok()) << cr.status().ToString();
    if (!cr.ok()) return 0;
    *ino = cr->first.attr.ino;
    WriteAt(cr->second.fh, 0, bytes);
    return cr->second.fh;
  }
  uint64_t InoOf(const std::string& name) {
    auto e = fs_->Lookup(1, name);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->attr.ino : 0;
  }
};

TEST_F(XattrTest, AnAttributeSetWhileWritingIsPublishedAndReadOnAnotherNode) {
  Mount();
  uint64_t ino = 0;
  const uint64_t fh = WrittenWith("c.bin", "whole chunk", &ino);
  const std::string crc("\x12\x34\x00\xab", 4);
  ASSERT_TRUE(fs_->SetXattr(ino, "user.vllm.kv_crc32c", crc, Mode::kAny).ok());
  EXPECT_EQ(*fs_->GetXattr(ino, "user.vllm.kv_crc32c"), crc);
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->Head("p/c.bin")->user_xattrs, "user.vllm.kv_crc32c=%124%00%AB");
  EXPECT_EQ(*fs_->GetXattr(InoOf("c.bin"), "user.vllm.kv_crc32c"), crc);

  // Another node: a new mount over the same store, which knows the chunk from a listing first.
  fs_.reset();
  Mount();
  auto dh = fs_->OpenDir(1);
  ASSERT_TRUE(dh.ok()) << dh.status().ToString();
  ASSERT_TRUE(ReadAllDir(*fs_, *dh).ok());
  fs_->ReleaseDir(*dh);
  const uint64_t there = InoOf("c.bin");
  auto got = fs_->GetXattr(there, "user.vllm.kv_crc32c");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, crc);
  EXPECT_EQ(fs_->GetXattr(there, "user.other").status().code(), StatusCode::kNoData);
  auto names = fs_->ListXattrs(there);
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_TRUE(names->empty() || *names == std::string("user.vllm.kv_crc32c\0", 20)) << *names;
}

TEST_F(XattrTest, AStoredChunksAttributesAreFixed) {
  Mount();
  ASSERT_TRUE(WriteFile("s.bin", "stored chunk").ok());
  const uint64_t ino = InoOf("s.bin");
  EXPECT_EQ(fs_->SetXattr(ino, "user.a", "1", Mode::kAny).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(fs_->RemoveXattr(ino, "user.a").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(fs_->GetXattr(ino, "user.a").status().code(), StatusCode::kNoData);
  EXPECT_EQ(*fs_->ListXattrs(ino), "");
  EXPECT_EQ(fs_->SetXattr(1, "user.a", "1", Mode::kAny).code(), StatusCode::kNotSupported)
      << "a directory has none";
}

TEST_F(XattrTest, SetxattrsFlagsRemovalAndTheBound) {
  Mount();
  uint64_t ino = 0;
  const uint64_t fh = WrittenWith("f.bin", "whole chunk", &ino);
  EXPECT_EQ(fs_->SetXattr(ino, "user.a", "1", Mode::kReplace).code(), StatusCode::kNoData);
  ASSERT_TRUE(fs_->SetXattr(ino, "user.a", "1", Mode::kCreate).ok());
  EXPECT_EQ(fs_->SetXattr(ino, "user.a", "2", Mode::kCreate).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(fs_->SetXattr(ino, "user.b", "2", Mode::kAny).ok());
  EXPECT_EQ(
      fs_->SetXattr(ino, "user.big", std::string(UserXattrs::kMaxEncodedBytes, 'v'), Mode::kAny)
          .code(),
      StatusCode::kNoSpace);
  ASSERT_TRUE(fs_->RemoveXattr(ino, "user.b").ok());
  EXPECT_EQ(fs_->RemoveXattr(ino, "user.b").code(), StatusCode::kNoData);
  EXPECT_EQ(*fs_->ListXattrs(ino), std::string("user.a\0", 7));
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->Head("p/f.bin")->user_xattrs, "user.a=1");
}

// A stored chunk opened for reading and writing is a new version of it: attributes set through
// that descriptor are stored with the same bytes (one PUT that replaces the object).
TEST_F(XattrTest, ANewVersionOpenedReadWriteTakesNewAttributes) {
  mem_->PutObject("p/rw.bin", "stored chunk");
  Mount();
  const uint64_t ino = InoOf("rw.bin");
  auto o = fs_->Open(ino, O_RDWR);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_TRUE(fs_->SetXattr(ino, "user.a", "1", Mode::kAny).ok());
  ASSERT_TRUE(CloseHandle(o->fh).ok());
  EXPECT_EQ(mem_->GetObject("p/rw.bin"), "stored chunk");
  EXPECT_EQ(mem_->Head("p/rw.bin")->user_xattrs, "user.a=1");
}

// vLLM's fs tier: temp file written and closed, its attribute set by path, os.replace into place.
TEST_F(XattrTest, ATempFilesAttributesGoWithItsRename) {
  Mount();
  ASSERT_TRUE(WriteFile("x.bin.tmp", "renamed chunk").ok());
  ASSERT_TRUE(fs_->SetXattr(InoOf("x.bin.tmp"), "user.vllm.kv_crc32c", "abcd", Mode::kAny).ok());
  ASSERT_TRUE(fs_->Rename(1, "x.bin.tmp", 1, "x.bin", 0).ok());
  EXPECT_EQ(mem_->Head("p/x.bin")->user_xattrs, "user.vllm.kv_crc32c=abcd");
  EXPECT_EQ(*fs_->GetXattr(InoOf("x.bin"), "user.vllm.kv_crc32c"), "abcd");
}

// A chunk large enough that its parts went out while it was written: an attribute set after
// them still reaches the object (the early upload, created without it, is not used).
TEST_F(XattrTest, AnAttributeSetAfterEarlyPartsStillReachesTheObject) {
  options_.multipart_threshold = 1 << 20;
  options_.multipart_part_size = 1 << 20;
  options_.upload_while_writing = true;
  Mount();
  uint64_t ino = 0;
  const std::string bytes(3 << 20, 'm');
  const uint64_t fh = WrittenWith("big.bin", bytes, &ino);
  ASSERT_TRUE(fs_->SetXattr(ino, "user.a", "late", Mode::kAny).ok());
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->GetObject("p/big.bin"), bytes);
  EXPECT_EQ(mem_->Head("p/big.bin")->user_xattrs, "user.a=late");
}

}  // namespace
}  // namespace kvfs
