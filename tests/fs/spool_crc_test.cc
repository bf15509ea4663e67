// The CRC32Cs recorded with an uploaded chunk - of the whole and of each slice - are folded from
// its writes as they arrive (no second pass over the spool); rewrites, truncation and gaps fall
// back to reading the spool. Either way they are the CRCs of the bytes the object holds.
#include <fcntl.h>

#include <string>

#include "base/crc32c.h"
#include "base/slice_crcs.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>((i * 131 + seed * 7 + i / 3) & 0xff);
  return s;
}

class SpoolCrcTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    Mount();
  }
  // The object holds `want`, and the CRC recorded with it is want's.
  void ExpectStored(const std::string& name, const std::string& want) {
    EXPECT_EQ(mem_->GetObject("p/" + name), want);
    auto h = mem_->Head("p/" + name);
    ASSERT_TRUE(h.ok());
    ASSERT_TRUE(h->crc32c.has_value());
    EXPECT_EQ(*h->crc32c, Crc32c(0, want.data(), want.size()));
    EXPECT_EQ(h->slice_crcs, SliceCrcs::Of(want.data(), want.size())) << name;
  }
};

TEST_F(SpoolCrcTest, PiecesOutOfOrder) {
  const std::string d = Bytes(100000, 1);
  uint64_t fh = CreateForWrite("a");
  for (uint64_t off : {65536, 32768, 0}) WriteAt(fh, off, d.substr(off, 32768));
  WriteAt(fh, 98304, d.substr(98304));
  ASSERT_TRUE(CloseHandle(fh).ok());
  ExpectStored("a", d);
}

TEST_F(SpoolCrcTest, SlicesOfAChunkWrittenInPiecesThatCrossThem) {
  const std::string d = Bytes(3 * (1 << 20) + 777, 3);
  uint64_t fh = CreateForWrite("sliced");
  const uint64_t piece = 96 * 1024;  // 1 MiB is no multiple of it: pieces cross slice ends
  for (uint64_t off = 0; off < d.size(); off += 2 * piece) {
    if (off + piece < d.size()) WriteAt(fh, off + piece, d.substr(off + piece, piece));
    WriteAt(fh, off, d.substr(off, piece));  // each pair out of order, as FUSE threads send them
  }
  ASSERT_TRUE(CloseHandle(fh).ok());
  ExpectStored("sliced", d);
}

TEST_F(SpoolCrcTest, RewriteTruncateAndHoles) {
  std::string d = Bytes(5000, 2);
  uint64_t fh = CreateForWrite("rewrite");
  WriteAt(fh, 0, d);
  d[10] = 'x';
  WriteAt(fh, 10, "x");
  ASSERT_TRUE(CloseHandle(fh).ok());
  ExpectStored("rewrite", d);

  fh = CreateForWrite("truncate");
  WriteAt(fh, 0, d);
  SetAttrRequest req;
  req.size = 3000;
  ASSERT_TRUE(fs_->SetAttr(fs_->Lookup(1, "truncate")->attr.ino, req, fh).ok());
  ASSERT_TRUE(CloseHandle(fh).ok());
  ExpectStored("truncate", d.substr(0, 3000));

  fh = CreateForWrite("hole");
  WriteAt(fh, 4000, d.substr(4000));  // [0, 4000) never written: zeros
  ASSERT_TRUE(CloseHandle(fh).ok());
  ExpectStored("hole", std::string(4000, '\0') + d.substr(4000));
}

}  // namespace
}  // namespace kvfs
