// CrcFold: pieces in any order give the CRC32C of the whole; rewrites (kInvalidate) give up.
#include "base/crc32c_fold.h"

#include <gtest/gtest.h>

#include <string>

#include "base/crc32c.h"

namespace kvfs {
namespace {

std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>(i * 131 + seed * 7 + i / 5);
  return s;
}

void Add(CrcFold* f, const std::string& d, uint64_t off, uint64_t n) {
  f->Add(off, d.data() + off, n);
}

TEST(CrcFoldTest, PiecesInAnyOrderGiveTheWholeCrc) {
  const std::string d = Bytes(1000, 1);
  const uint32_t want = Crc32c(0, d.data(), d.size());
  for (auto overlap : {CrcFold::Overlap::kTrim, CrcFold::Overlap::kInvalidate}) {
    CrcFold f(overlap);
    Add(&f, d, 700, 300);
    Add(&f, d, 100, 200);
    Add(&f, d, 300, 400);
    uint32_t crc = 0;
    EXPECT_FALSE(f.CrcOf(1000, &crc));  // [0, 100) missing
    EXPECT_EQ(f.contiguous(), 0u);
    Add(&f, d, 0, 100);
    ASSERT_TRUE(f.CrcOf(1000, &crc));
    EXPECT_EQ(crc, want);
    EXPECT_FALSE(f.CrcOf(999, &crc));  // not exactly that size
  }
}

TEST(CrcFoldTest, RewritesGiveUpUnderInvalidateAndAreTrimmedUnderTrim) {
  const std::string d = Bytes(600, 2);
  CrcFold w(CrcFold::Overlap::kInvalidate);
  Add(&w, d, 0, 300);
  Add(&w, d, 100, 10);  // back into folded bytes
  EXPECT_FALSE(w.valid());
  uint32_t crc;
  Add(&w, d, 300, 300);
  EXPECT_FALSE(w.CrcOf(600, &crc));

  CrcFold w2(CrcFold::Overlap::kInvalidate);
  Add(&w2, d, 400, 100);
  Add(&w2, d, 450, 100);  // into a piece still waiting
  EXPECT_FALSE(w2.valid());

  CrcFold r(CrcFold::Overlap::kTrim);
  Add(&r, d, 400, 100);
  Add(&r, d, 0, 300);
  Add(&r, d, 100, 500);  // overlaps both: only the gaps are new
  ASSERT_TRUE(r.CrcOf(600, &crc));
  EXPECT_EQ(crc, Crc32c(0, d.data(), d.size()));
}

TEST(CrcFoldTest, ResetStartsOverAndTooManyGapsGiveUp) {
  const std::string d = Bytes(400, 3);
  CrcFold f(CrcFold::Overlap::kInvalidate);
  Add(&f, d, 0, 10);
  Add(&f, d, 5, 10);
  EXPECT_FALSE(f.valid());
  f.Reset();
  Add(&f, d, 0, 400);
  uint32_t crc;
  ASSERT_TRUE(f.CrcOf(400, &crc));
  EXPECT_EQ(crc, Crc32c(0, d.data(), d.size()));

  CrcFold g(CrcFold::Overlap::kTrim);
  for (uint64_t off = 2; off < 2 + 2 * (CrcFold::kMaxPending + 1); off += 2) Add(&g, d, off, 1);
  EXPECT_FALSE(g.valid());
}

}  // namespace
}  // namespace kvfs
