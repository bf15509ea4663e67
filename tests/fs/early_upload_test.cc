// Uploading parts while a chunk is being written (upload_while_writing): parts go out before
// close, the object appears only at close, and anything that makes the early parts wrong (a
// rewrite behind them, a truncate, a rename, a failed part, a partial chunk) ends with the right
// object or a clean error and no upload left open.
#include <fcntl.h>

#include <chrono>
#include <string>
#include <thread>

#include "base/deadline.h"
#include "tests/fakes/fault_store.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

constexpr uint64_t kPart = 256;

std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>((i * 131 + seed * 7) & 0xff);
  return s;
}

class EarlyUploadTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    options_.multipart_threshold = 1 << 20;  // far above: only early uploads use multipart here
    options_.multipart_part_size = kPart;
    options_.upload_parallelism = 2;
    options_.max_chunk_bytes = 1 << 20;
    Mount();
  }
};

TEST_F(EarlyUploadTest, PartsGoOutBeforeCloseAndTheObjectOnlyAtClose) {
  const std::string data = Bytes(3 * kPart + 100, 1);
  uint64_t fh = CreateForWrite("c");
  // Written in pieces, as FUSE delivers one big write().
  for (uint64_t off = 0; off < data.size(); off += 100) WriteAt(fh, off, data.substr(off, 100));
  EXPECT_EQ(mem_->Calls(StoreOp::kCreateMultipart), 1u);
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 3u);  // the three whole parts, before close
  EXPECT_EQ(mem_->ObjectCount(), 0u);                // nothing visible yet
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 4u);  // + the tail at close
  EXPECT_EQ(mem_->Calls(StoreOp::kCompleteMultipart), 1u);
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), 0u);
  EXPECT_EQ(mem_->GetObject("p/c"), data);
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
  EXPECT_EQ(*ReadFile("c"), data);
}

TEST_F(EarlyUploadTest, PiecesArrivingOutOfOrderStillSendPartsEarly) {
  // The pieces of one O_DIRECT write reach the daemon on several FUSE threads at once, in any
  // order: here each run of four 64-byte pieces arrives last to first.
  const std::string data = Bytes(3 * kPart + 64, 9);
  uint64_t fh = CreateForWrite("od");
  constexpr uint64_t kPiece = 64;
  for (uint64_t group = 0; group < data.size(); group += 4 * kPiece) {
    for (int i = 3; i >= 0; i--) {
      const uint64_t off = group + i * kPiece;
      if (off < data.size()) WriteAt(fh, off, data.substr(off, kPiece));
    }
  }
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 3u);  // every whole part, before close
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kCompleteMultipart), 1u);
  EXPECT_EQ(mem_->Calls(StoreOp::kAbortMultipart), 0u);
  EXPECT_EQ(mem_->GetObject("p/od"), data);
}

TEST_F(EarlyUploadTest, ScatteredWritesFallBackToTheUploadAtClose) {
  // More separate ranges past a gap than an early upload remembers: it gives up, and close
  // uploads the finished file the normal way.
  std::string data = Bytes(2 * kPart * 10, 10);
  uint64_t fh = CreateForWrite("sc");
  for (uint64_t off = 1; off < data.size(); off += 2) WriteAt(fh, off, data.substr(off, 1));
  for (uint64_t off = 0; off < data.size(); off += 2) WriteAt(fh, off, data.substr(off, 1));
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 0u);
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), 1u);
  EXPECT_EQ(mem_->GetObject("p/sc"), data);
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
}

// The whole close() stays within blocking_timeout: a rejected chunk's abort (here stalled 3 s)
// finishes after close() has returned.
TEST_F(EarlyUploadTest, ARejectedChunkClosesWithoutWaitingForItsAbort) {
  auto faults = std::make_shared<FaultStore>(mem_);
  faults->SetDelay(FaultStore::Op::kAbortMultipart, std::chrono::milliseconds(3000));
  store_ = faults;
  options_.chunk_sizes = {4 * kPart};
  Mount();
  uint64_t fh = CreateForWrite("x");
  WriteAt(fh, 0, Bytes(2 * kPart + 10, 5));
  ASSERT_EQ(mem_->Calls(StoreOp::kUploadPart), 2u);
  const int64_t start = MonotonicMs();
  Status st;
  {
    const ScopedDeadline deadline(1000, "blocking_timeout=1s");
    st = CloseHandle(fh);
  }
  EXPECT_EQ(ToErrno(st), EINVAL) << st.ToString();
  EXPECT_LT(MonotonicMs() - start, 1000);
  // The abort still happens, in the background.
  for (int i = 0; i < 100 && mem_->PendingUploadCount() != 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
  EXPECT_EQ(mem_->ObjectCount(), 0u);
}

// A completion that ran out of the close()'s time is not followed by a whole new upload.
TEST_F(EarlyUploadTest, ACompletionPastTheDeadlineIsNotUploadedAgain) {
  auto faults = std::make_shared<FaultStore>(mem_);
  faults->InjectError(FaultStore::Op::kCompleteMultipart,
                      {Status::DeadlineExceeded("injected: blocking_timeout")});
  store_ = faults;
  Mount();
  uint64_t fh = CreateForWrite("late");
  WriteAt(fh, 0, Bytes(2 * kPart + 10, 6));
  Status st;
  {
    const ScopedDeadline deadline(5000, "blocking_timeout=5s");
    st = CloseHandle(fh);
  }
  EXPECT_EQ(ToErrno(st), ETIMEDOUT) << st.ToString();
  EXPECT_EQ(faults->Calls(FaultStore::Op::kCreateMultipart), 1u);
  EXPECT_EQ(faults->Calls(FaultStore::Op::kPut), 0u);
  for (int i = 0; i < 100 && mem_->PendingUploadCount() != 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
  EXPECT_EQ(mem_->ObjectCount(), 0u);
}

TEST_F(EarlyUploadTest, SmallFilesStayOnePut) {
  ASSERT_TRUE(WriteFile("s", Bytes(kPart - 1, 2)).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kCreateMultipart), 0u);
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), 1u);
  EXPECT_EQ(mem_->GetObject("p/s"), Bytes(kPart - 1, 2));
}

TEST_F(EarlyUploadTest, RewriteBehindSentPartsUploadsTheFinalBytes) {
  std::string data = Bytes(2 * kPart + 10, 3);
  uint64_t fh = CreateForWrite("r");
  WriteAt(fh, 0, data);
  ASSERT_GE(mem_->Calls(StoreOp::kUploadPart), 1u);
  data[5] = 'X';  // back into part 1, already sent
  WriteAt(fh, 5, "X");
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->GetObject("p/r"), data);
  EXPECT_EQ(mem_->Calls(StoreOp::kAbortMultipart), 1u);  // the early upload was dropped
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
}

TEST_F(EarlyUploadTest, TruncateAfterSentPartsUploadsTheFinalBytes) {
  const std::string data = Bytes(3 * kPart, 4);
  uint64_t fh = CreateForWrite("t");
  WriteAt(fh, 0, data);
  SetAttrRequest req;
  req.size = kPart + 7;
  ASSERT_TRUE(fs_->SetAttr(fs_->Lookup(1, "t")->attr.ino, req, fh).ok());
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->GetObject("p/t"), data.substr(0, kPart + 7));
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
}

TEST_F(EarlyUploadTest, PartialChunkIsRejectedAndItsUploadAborted) {
  fs_.reset();
  options_.chunk_sizes = {4 * kPart};
  Mount();
  uint64_t fh = CreateForWrite("p");
  WriteAt(fh, 0, Bytes(3 * kPart, 5));  // three parts sent, the chunk never completed
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 3u);
  EXPECT_EQ(ToErrno(CloseHandle(fh)), EINVAL);
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
  EXPECT_EQ(mem_->Calls(StoreOp::kAbortMultipart), 1u);
}

TEST_F(EarlyUploadTest, RenamedBeforeCloseIsStoredUnderTheNewNameOnly) {
  const std::string data = Bytes(2 * kPart + 1, 6);
  uint64_t fh = CreateForWrite("a");
  WriteAt(fh, 0, data);
  ASSERT_TRUE(fs_->Rename(1, "a", 1, "b", 0).ok());
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->GetObject("p/b"), data);
  EXPECT_FALSE(mem_->GetObject("p/a").has_value());
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
}

TEST_F(EarlyUploadTest, TempFilesAreNotSentEarly) {
  uint64_t fh = CreateForWrite("x.tmp");
  WriteAt(fh, 0, Bytes(3 * kPart, 7));
  EXPECT_EQ(mem_->Calls(StoreOp::kCreateMultipart), 0u);
  ASSERT_TRUE(CloseHandle(fh).ok());
  ASSERT_TRUE(fs_->Rename(1, "x.tmp", 1, "x", 0).ok());
  EXPECT_EQ(mem_->GetObject("p/x"), Bytes(3 * kPart, 7));
}

TEST_F(EarlyUploadTest, OffMeansNothingBeforeClose) {
  fs_.reset();
  options_.upload_while_writing = false;
  Mount();
  uint64_t fh = CreateForWrite("o");
  WriteAt(fh, 0, Bytes(3 * kPart, 8));
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 0u);
  ASSERT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), 1u);  // below multipart_threshold: one PUT
  EXPECT_EQ(mem_->GetObject("p/o"), Bytes(3 * kPart, 8));
}

}  // namespace
}  // namespace kvfs
