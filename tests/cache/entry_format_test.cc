#include "cache/entry_format.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "tests/cache/test_util.h"

namespace kvfs {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c(0, "", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(0, zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
}

TEST(Crc32cTest, IncrementalEqualsWhole) {
  std::string s = testing::Pattern(100003, 7);
  uint32_t whole = Crc32c(0, s.data(), s.size());
  for (size_t cut : {0ul, 1ul, 7ul, 8ul, 4096ul, 99999ul}) {
    uint32_t c = Crc32c(0, s.data(), cut);
    c = Crc32c(c, s.data() + cut, s.size() - cut);
    EXPECT_EQ(c, whole) << cut;
  }
}

TEST(Crc32cTest, CombineEqualsWhole) {
  std::string s = testing::Pattern(300001, 9);
  uint32_t whole = Crc32c(0, s.data(), s.size());
  for (size_t cut : {0ul, 1ul, 4096ul, 150000ul, 300000ul, 300001ul}) {
    uint32_t a = Crc32c(0, s.data(), cut);
    uint32_t b = Crc32c(0, s.data() + cut, s.size() - cut);
    EXPECT_EQ(Crc32cCombine(a, b, s.size() - cut), whole) << cut;
  }
}

TEST(EntryFormatTest, NamesRoundTrip) {
  ParsedName p;
  ASSERT_TRUE(ParseEntryFileName(EntryFileName(0xabcdef, 42), &p));
  EXPECT_EQ(p.key_hash, 0xabcdefu);
  EXPECT_EQ(p.gen, 42u);
  EXPECT_FALSE(p.fill);
  ASSERT_TRUE(ParseEntryFileName(FillFileName(1, 2), &p));
  EXPECT_TRUE(p.fill);
  EXPECT_FALSE(ParseEntryFileName("lock", &p));
  EXPECT_FALSE(ParseEntryFileName(EntryFileName(1, 2) + ".tmp", &p));
  EXPECT_FALSE(ParseEntryFileName("0000000000000000-000000000000000g.kvc", &p));
}

TEST(EntryFormatTest, TrailerRoundTripAndDamage) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/e";
  const std::string content = testing::Pattern(5000, 1);
  EntryMeta m{"model@1@0@abc@bfloat16.pt", content.size(), "etag-1",
              Crc32c(0, content.data(), content.size()), 1234};
  testing::WriteFile(path, content + EncodeTrailer(m));
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  uint64_t fsize = content.size() + EncodeTrailer(m).size();
  Result<EntryMeta> got = ReadTrailer(fd, fsize);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->key, m.key);
  EXPECT_EQ(got->etag, m.etag);
  EXPECT_EQ(got->size, m.size);
  EXPECT_EQ(got->crc, m.crc);
  EXPECT_EQ(got->fill_time_sec, 1234);
  Result<uint32_t> crc = ChecksumFile(fd, content.size());
  ASSERT_TRUE(crc.ok());
  EXPECT_EQ(*crc, m.crc);

  // Truncated: the trailer is gone or shifted.
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(fsize - 1)), 0);
  EXPECT_EQ(ReadTrailer(fd, fsize - 1).status().code(), StatusCode::kDataLoss);
  // A flipped byte in the trailer fails its checksum.
  testing::WriteFile(path, content + EncodeTrailer(m));
  char c;
  ASSERT_EQ(pread(fd, &c, 1, static_cast<off_t>(content.size() + 20)), 1);
  c ^= 1;
  ASSERT_EQ(pwrite(fd, &c, 1, static_cast<off_t>(content.size() + 20)), 1);
  EXPECT_EQ(ReadTrailer(fd, fsize).status().code(), StatusCode::kDataLoss);
  close(fd);
}

}  // namespace
}  // namespace kvfs
