#include "src/config_values.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

TEST(ParseSizeTest, AcceptsBytesAndBinaryUnits) {
  EXPECT_EQ(ParseSize("4096"), 4096u);
  EXPECT_EQ(ParseSize("0"), 0u);
  EXPECT_EQ(ParseSize("1B"), 1u);
  EXPECT_EQ(ParseSize("8K"), 8192u);
  EXPECT_EQ(ParseSize("8KiB"), 8192u);
  EXPECT_EQ(ParseSize("8kb"), 8192u);
  EXPECT_EQ(ParseSize("32MiB"), 32u << 20);
  EXPECT_EQ(ParseSize("32MB"), 32u << 20);  // binary on purpose: chunk sizes must match exactly
  EXPECT_EQ(ParseSize("64GiB"), uint64_t{64} << 30);
  EXPECT_EQ(ParseSize("64 GiB"), uint64_t{64} << 30);
  EXPECT_EQ(ParseSize(" 2T "), uint64_t{2} << 40);
  EXPECT_EQ(ParseSize("1.5GiB"), uint64_t{3} << 29);
  EXPECT_EQ(ParseSize("0.5K"), 512u);
}

TEST(ParseSizeTest, RejectsGarbage) {
  for (const char* bad : {"", "12XB", "MiB", "-1", "1.5", "0.3B", "1e3", "1 2", "8MiBs", "x",
                          "99999999999999999999", "20000PiB"}) {
    EXPECT_EQ(ParseSize(bad), std::nullopt) << bad;
  }
}

TEST(ParseSizeTest, HugeCountsOfTiBAndPiBAreRefusedNotWrapped) {
  // 2^78 PiB and 2^88 TiB are exactly 2^128 bytes: the 128-bit product wrapped to 0, and
  // cache_size=302231454903657293676544PiB was a cache of 0 bytes (issue 47 item 11).
  for (const char* big : {"302231454903657293676544PiB", "302231454903657293676545P",
                          "309485009821345068724781056TiB", "999999999999999999999999999P",
                          "16384PiB", "16777216TiB"}) {
    EXPECT_EQ(ParseSize(big), std::nullopt) << big;
  }
  EXPECT_EQ(ParseSize("16383PiB"), uint64_t{16383} << 50);
  EXPECT_EQ(ParseSize("16777215TiB"), uint64_t{16777215} << 40);
}

TEST(FormatSizeTest, UsesTheLargestExactUnit) {
  EXPECT_EQ(FormatSize(0), "0");
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(1024), "1KiB");
  EXPECT_EQ(FormatSize(uint64_t{64} << 30), "64GiB");
  EXPECT_EQ(FormatSize((uint64_t{3} << 29)), "1536MiB");
  for (uint64_t n : {uint64_t{1}, uint64_t{4097}, uint64_t{256} << 20}) {
    EXPECT_EQ(ParseSize(FormatSize(n)), n);
  }
}

TEST(ParseBoolTest, AcceptsYamlAndMountSpellings) {
  for (const char* t : {"true", "True", "TRUE", "yes", "on", "1"}) EXPECT_EQ(ParseBool(t), true);
  for (const char* f : {"false", "False", "no", "off", "0"}) EXPECT_EQ(ParseBool(f), false);
  EXPECT_EQ(ParseBool("maybe"), std::nullopt);
  EXPECT_EQ(ParseBool(""), std::nullopt);
}

TEST(ParseIntTest, Bounds) {
  EXPECT_EQ(ParseInt("64", 1, 100), 64);
  EXPECT_EQ(ParseInt("+5", 1, 100), 5);
  EXPECT_EQ(ParseInt("0", 1, 100), std::nullopt);
  EXPECT_EQ(ParseInt("101", 1, 100), std::nullopt);
  EXPECT_EQ(ParseInt("6x", 1, 100), std::nullopt);
  EXPECT_EQ(ParseInt("", 1, 100), std::nullopt);
}

TEST(ParseDurationTest, UnitsAndBareNumbers) {
  EXPECT_EQ(ParseDurationMs("250ms", 1), 250);
  EXPECT_EQ(ParseDurationMs("10s", 1), 10'000);
  EXPECT_EQ(ParseDurationMs("1.5s", 1), 1500);
  EXPECT_EQ(ParseDurationMs("2m", 1), 120'000);
  EXPECT_EQ(ParseDurationMs("1h", 1), 3'600'000);
  EXPECT_EQ(ParseDurationMs("10", 1000), 10'000);
  EXPECT_EQ(ParseDurationMs("10", 1), 10);
  EXPECT_EQ(ParseDurationMs("10 days", 1), 864'000'000);
  EXPECT_EQ(ParseDurationMs("7d", 1000), 604'800'000);
  EXPECT_EQ(ParseDurationMs("10 weeks", 1), std::nullopt);
  EXPECT_EQ(ParseDurationMs("0.1ms", 1), std::nullopt);
}

TEST(SplitListTest, CommasAndColons) {
  EXPECT_EQ(SplitList("8MiB, 32MiB:64MiB,,"), (std::vector<std::string>{"8MiB", "32MiB", "64MiB"}));
  EXPECT_TRUE(SplitList("").empty());
}

}  // namespace
}  // namespace kvfs
