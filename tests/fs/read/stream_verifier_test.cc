// StreamVerifier: folds the reads of a streaming handle, in any order, into the object's CRC32C.
#include "fs/read/stream_verifier.h"

#include <gtest/gtest.h>

#include <string>

#include "base/crc32c.h"

namespace kvfs {
namespace {

using Outcome = StreamVerifier::Outcome;

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>(i * 131 + i / 7);
  return s;
}

class StreamVerifierTest : public ::testing::Test {
 protected:
  const std::string data_ = Bytes(1000);
  const uint32_t crc_ = Crc32c(0, data_.data(), data_.size());

  Status Add(StreamVerifier* v, uint64_t off, uint64_t n, const std::string& src) {
    return v->Add(off, src.data() + off, n);
  }
};

TEST_F(StreamVerifierTest, InOrderReadsVerify) {
  StreamVerifier v("k", data_.size(), crc_, true);
  for (uint64_t off = 0; off < 1000; off += 300) {
    EXPECT_EQ(v.outcome(), Outcome::kOpen);
    ASSERT_TRUE(Add(&v, off, std::min<uint64_t>(300, 1000 - off), data_).ok());
  }
  EXPECT_EQ(v.outcome(), Outcome::kVerified);
}

TEST_F(StreamVerifierTest, OutOfOrderOverlappingAndRepeatedReadsVerify) {
  StreamVerifier v("k", data_.size(), crc_, true);
  ASSERT_TRUE(Add(&v, 600, 400, data_).ok());  // ahead of a gap
  ASSERT_TRUE(Add(&v, 600, 400, data_).ok());  // the same read again
  ASSERT_TRUE(Add(&v, 200, 100, data_).ok());
  ASSERT_TRUE(Add(&v, 250, 500, data_).ok());  // overlaps both waiting reads: the gaps are kept
  ASSERT_TRUE(Add(&v, 0, 150, data_).ok());
  EXPECT_EQ(v.outcome(), Outcome::kOpen);
  ASSERT_TRUE(Add(&v, 100, 200, data_).ok());  // closes the last gap
  EXPECT_EQ(v.outcome(), Outcome::kVerified);
  ASSERT_TRUE(Add(&v, 0, 1000, data_).ok());  // a re-read after: nothing more to check
}

TEST_F(StreamVerifierTest, ChangedByteFailsTheCompletingReadAndEveryLaterOne) {
  std::string bad = data_;
  bad[10] ^= 1;
  StreamVerifier v("chunk-key", data_.size(), crc_, true);
  ASSERT_TRUE(Add(&v, 500, 500, bad).ok());
  Status st = Add(&v, 0, 500, bad);
  ASSERT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find("chunk-key"), std::string::npos) << st.ToString();
  EXPECT_EQ(v.outcome(), Outcome::kFailed);
  EXPECT_EQ(Add(&v, 0, 10, data_).code(), StatusCode::kDataLoss);
}

TEST_F(StreamVerifierTest, ChecksumLearnedFromAReply) {
  StreamVerifier v("k", data_.size(), std::nullopt, true);
  ObjectInfo info;
  info.crc32c = crc_ ^ 1;
  v.OnInfo(info);
  info.crc32c = crc_;
  v.OnInfo(info);  // the first reply counts
  EXPECT_EQ(Add(&v, 0, 1000, data_).code(), StatusCode::kDataLoss);
}

TEST_F(StreamVerifierTest, NothingToCheckAgainstIsUnverified) {
  StreamVerifier none("k", data_.size(), std::nullopt, true);
  none.OnInfo(ObjectInfo{});  // the reply carried no checksum
  ASSERT_TRUE(Add(&none, 0, 1000, data_).ok());
  EXPECT_EQ(none.outcome(), Outcome::kUnverified);

  std::string bad = data_;
  bad[0] ^= 1;
  StreamVerifier off("k", data_.size(), crc_, false);
  ASSERT_TRUE(Add(&off, 0, 1000, bad).ok());
  EXPECT_EQ(off.outcome(), Outcome::kUnverified);
}

TEST_F(StreamVerifierTest, TooManyReadsAheadOfAGapGiveUp) {
  StreamVerifier v("k", data_.size(), crc_, true);
  // Every other byte from 2 on: more waiting reads than kept.
  for (uint64_t off = 2; off < 2 + 2 * (StreamVerifier::kMaxPending + 1); off += 2) {
    ASSERT_TRUE(Add(&v, off, 1, data_).ok());
  }
  EXPECT_EQ(v.outcome(), Outcome::kUnverified);
  ASSERT_TRUE(Add(&v, 0, 1000, data_).ok());
  EXPECT_EQ(v.outcome(), Outcome::kUnverified);
}

TEST_F(StreamVerifierTest, EmptyAndPastTheEndReadsAreIgnored) {
  StreamVerifier v("k", data_.size(), crc_, true);
  ASSERT_TRUE(v.Add(1000, data_.data(), 0).ok());
  ASSERT_TRUE(v.Add(2000, data_.data(), 10).ok());
  EXPECT_EQ(v.outcome(), Outcome::kOpen);
}

}  // namespace
}  // namespace kvfs
