// SliceCrcs: a writer's per-slice CRC32Cs, from a fold of its writes in any order or from one pass
// over a file, agree with the CRC of each slice's bytes; the recorded text round-trips and
// anything else parses as no slices.
#include "base/slice_crcs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "base/crc32c.h"
#include "base/crc32c_fold.h"

namespace kvfs {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>(i * 131 + seed * 7 + i / 5);
  return s;
}

SliceCrcs Expected(const std::string& d) {
  SliceCrcs out;
  out.slice_size = SliceCrcs::SliceSizeFor(d.size());
  for (uint64_t off = 0; off < d.size(); off += out.slice_size) {
    const uint64_t n = std::min<uint64_t>(out.slice_size, d.size() - off);
    out.crcs.push_back(Crc32c(0, d.data() + off, n));
  }
  return out;
}

TEST(SliceCrcsTest, SliceSizeKeepsTheCountBounded) {
  EXPECT_EQ(SliceCrcs::SliceSizeFor(1), kMiB);
  EXPECT_EQ(SliceCrcs::SliceSizeFor(128 * kMiB), kMiB);
  EXPECT_EQ(SliceCrcs::SliceSizeFor(128 * kMiB + 1), 2 * kMiB);
  EXPECT_EQ(SliceCrcs::SliceSizeFor(5ull << 30), 64 * kMiB);
  // Sizes a server states: no overflow at the top of the range.
  EXPECT_EQ(SliceCrcs::SliceSizeFor(UINT64_MAX), uint64_t{1} << 57);
  SliceCrcs huge{uint64_t{1} << 63, {1, 2}};
  EXPECT_TRUE(huge.Fits(UINT64_MAX));
  EXPECT_FALSE(huge.Fits(uint64_t{1} << 63));
}

TEST(SliceCrcsTest, AFoldOfWritesInAnyOrderGivesEachSlicesCrc) {
  for (uint64_t size : {kMiB / 3, kMiB, 2 * kMiB + 4099, 8 * kMiB, 130 * kMiB + 17}) {
    const std::string d = Bytes(size, static_cast<int>(size % 97));
    CrcFold f(CrcFold::Overlap::kInvalidate, SliceCrcs::kMinSliceSize);
    // Writes of 768 KiB (crossing slice boundaries), each pair in reverse order (FUSE threads).
    const uint64_t piece = 768 * 1024;
    std::vector<uint64_t> offsets;
    for (uint64_t off = 0; off < size; off += piece) offsets.push_back(off);
    for (size_t i = 0; i + 1 < offsets.size(); i += 2) std::swap(offsets[i], offsets[i + 1]);
    for (uint64_t off : offsets) f.Add(off, d.data() + off, std::min(piece, size - off));
    std::optional<SliceCrcs> got = f.SlicesOf(size);
    ASSERT_TRUE(got.has_value()) << size;
    EXPECT_EQ(*got, Expected(d)) << size;
    EXPECT_TRUE(got->Fits(size));
    EXPECT_EQ(got->Whole(size), Crc32c(0, d.data(), d.size()));
    EXPECT_FALSE(f.SlicesOf(size - 1).has_value());
  }
}

TEST(SliceCrcsTest, AFoldWithoutMarksOrWithARewriteGivesNone) {
  const std::string d = Bytes(3 * kMiB, 5);
  CrcFold plain(CrcFold::Overlap::kInvalidate);
  plain.Add(0, d.data(), d.size());
  EXPECT_FALSE(plain.SlicesOf(d.size()).has_value());
  CrcFold rewritten(CrcFold::Overlap::kInvalidate, SliceCrcs::kMinSliceSize);
  rewritten.Add(0, d.data(), d.size());
  rewritten.Add(kMiB, d.data() + kMiB, 10);
  EXPECT_FALSE(rewritten.SlicesOf(d.size()).has_value());
  CrcFold reset(CrcFold::Overlap::kInvalidate, SliceCrcs::kMinSliceSize);
  reset.Add(0, d.data(), d.size());
  reset.Reset();  // truncated to nothing, then written again
  reset.Add(0, d.data(), 2 * kMiB);
  EXPECT_EQ(reset.SlicesOf(2 * kMiB), Expected(d.substr(0, 2 * kMiB)));
}

TEST(SliceCrcsTest, BytesInMemoryGiveTheSame) {
  for (uint64_t size : {uint64_t{1}, kMiB, 3 * kMiB + 5, 130 * kMiB + 17}) {
    const std::string d = Bytes(size, 4);
    EXPECT_EQ(SliceCrcs::Of(d.data(), d.size()), Expected(d)) << size;
  }
}

TEST(SliceCrcsTest, OnePassOverAFileGivesTheSame) {
  char path[] = "/tmp/kvfs-slice-crcs-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  const std::string d = Bytes(5 * kMiB + 123, 9);
  ASSERT_EQ(pwrite(fd, d.data(), d.size(), 0), static_cast<ssize_t>(d.size()));
  Result<SliceCrcs> got = SliceCrcsOfFile(fd, d.size(), "test file");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Expected(d));
  EXPECT_EQ(SliceCrcsOfFile(fd, d.size() + 1, "test file").status().code(), StatusCode::kDataLoss);
  close(fd);
}

TEST(SliceCrcsTest, TheRecordedTextRoundTripsAndNothingElseParses) {
  const std::string d = Bytes(3 * kMiB + 1, 2);
  const SliceCrcs s = Expected(d);
  const std::string text = s.Format();
  EXPECT_EQ(text.substr(0, 8), "1048576:");
  EXPECT_EQ(text.size(), 8 + 4 * 8u);
  EXPECT_EQ(SliceCrcs::Parse(text), s);
  for (std::string bad :
       {std::string(""), std::string("1048576:"), text + "0", "1048575:" + text.substr(8),
        ":" + text.substr(8), "1048576:" + std::string(8, 'g'), "4096:" + text.substr(8),
        "x1048576:" + text.substr(8)}) {
    EXPECT_FALSE(SliceCrcs::Parse(bad).has_value()) << bad;
  }
  SliceCrcs too_many;
  too_many.slice_size = kMiB;
  too_many.crcs.assign(SliceCrcs::kMaxSlices + 1, 7);
  EXPECT_FALSE(SliceCrcs::Parse(too_many.Format()).has_value());
  EXPECT_FALSE(s.Fits(3 * kMiB));  // one slice too many for that size
  EXPECT_TRUE(s.Fits(3 * kMiB + 1));
}

}  // namespace
}  // namespace kvfs
