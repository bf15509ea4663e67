// Failing uploads: close() is EIO, and neither an object, an unfinished multipart upload, nor a
// visible file is left behind.
#include <atomic>

#include "objstore/store_wrapper.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

// Fails PUTs and/or the Nth part upload, like a server that keeps answering 503.
class FailingStore : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  std::atomic<bool> fail_put{false};
  std::atomic<int> fail_part{0};  // part number to fail; 0: none
  std::atomic<bool> fail_complete{false};
  // The PUT reaches the store, but its reply is lost: the client's retry then meets the object
  // (the store answers "exists", as objstore/s3 does after its own HEAD check).
  std::atomic<bool> lose_put_reply{false};

  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override {
    if (fail_put) return done(Status::Unavailable("injected: PUT 503"));
    if (lose_put_reply) {
      StoreWrapper::PutAsync(key, body, opts, [done](Result<ObjectInfo> r) {
        done(r.ok() ? Status::AlreadyExists("injected: reply lost, the retry met the object")
                    : r.status());
      });
      return;
    }
    StoreWrapper::PutAsync(key, body, opts, std::move(done));
  }
  void UploadPartAsync(const std::string& key, const std::string& upload_id, int part_number,
                       const Body& body, PartCallback done) override {
    if (part_number == fail_part) return done(Status::Unavailable("injected: part 503"));
    StoreWrapper::UploadPartAsync(key, upload_id, part_number, body, std::move(done));
  }
  Result<ObjectInfo> CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                             const std::vector<CompletedPart>& parts,
                                             const PutOptions& opts) override {
    if (fail_complete) return Status::Unavailable("injected: complete 503");
    return StoreWrapper::CompleteMultipartUpload(key, upload_id, parts, opts);
  }
};

class UploadFailureTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    failing_ = std::make_shared<FailingStore>(mem_);
    store_ = failing_;
    options_.multipart_threshold = 1024;
    options_.multipart_part_size = 256;
    options_.max_chunk_bytes = 1 << 20;
    Mount();
  }
  void ExpectNothingLeft(const std::string& name) {
    EXPECT_EQ(mem_->ObjectCount(), 0u);
    EXPECT_EQ(mem_->PendingUploadCount(), 0u);
    EXPECT_EQ(fs_->LocalFileCount(), 0u);
    EXPECT_EQ(fs_->Lookup(1, name).status().code(), StatusCode::kNotFound);
    size_t spool_files = 0;
    for (auto& e : std::filesystem::directory_iterator(spool_)) spool_files += e.exists();
    EXPECT_EQ(spool_files, 0u);
  }
  std::shared_ptr<FailingStore> failing_;
};

TEST_F(UploadFailureTest, FailedPutIsEio) {
  failing_->fail_put = true;
  Status st = WriteFile("c", "small");
  EXPECT_EQ(ToErrno(st), EIO) << st.ToString();
  EXPECT_NE(st.message().find("'c'"), std::string::npos) << st.message();
  ExpectNothingLeft("c");
}

TEST_F(UploadFailureTest, FailedPartAbortsMultipart) {
  failing_->fail_part = 3;
  Status st = WriteFile("big", std::string(4000, 'z'));
  EXPECT_EQ(ToErrno(st), EIO) << st.ToString();
  ExpectNothingLeft("big");
}

TEST_F(UploadFailureTest, FailedCompleteAbortsMultipart) {
  failing_->fail_complete = true;
  EXPECT_EQ(ToErrno(WriteFile("big", std::string(4000, 'z'))), EIO);
  ExpectNothingLeft("big");
}

TEST_F(UploadFailureTest, LostPutReplyIsOurObjectNotEexist) {
  // Under the strictest exists policy, only the checksum can tell our own object from another's.
  options_.exists_policy = ExistsPolicy::kEexist;
  Mount();
  failing_->lose_put_reply = true;
  EXPECT_TRUE(WriteFile("ours", "the chunk's bytes").ok());
  EXPECT_EQ(mem_->GetObject("p/ours"), "the chunk's bytes");
  // Other bytes of the same size under that name are still someone else's object: EEXIST.
  EXPECT_EQ(ToErrno(WriteFile("ours", "other chunk bytes")), EEXIST);
}

TEST_F(UploadFailureTest, FailedRenameUploadKeepsTempFile) {
  ASSERT_TRUE(WriteFile("x.tmp", "data").ok());
  failing_->fail_put = true;
  EXPECT_EQ(ToErrno(fs_->Rename(1, "x.tmp", 1, "x", 0)), EIO);
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_TRUE(fs_->Lookup(1, "x.tmp").ok());
  failing_->fail_put = false;
  EXPECT_TRUE(fs_->Rename(1, "x.tmp", 1, "x", 0).ok());
  EXPECT_EQ(mem_->GetObject("p/x"), "data");
}

}  // namespace
}  // namespace kvfs
