#include "tests/objstore/store_under_test.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "objstore/dir/dir_store.h"
#include "objstore/s3/s3_store.h"
#include "tests/fakes/memory_store.h"
#include "tests/support/s3_admin.h"

namespace kvfs::testing {

bool RequireS3() {
  const char* v = std::getenv("KVFS_REQUIRE_S3");
  return v != nullptr && std::string(v) == "1";
}

Status StoreUnderTest::Open() {
  if (kind_ == "mem") {
    auto mem = std::make_shared<MemoryStore>();
    mem->SetMinPartSize(5ull << 20);
    store_ = mem;
    return Status::OK();
  }
  if (kind_ == "dir") {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/kvfs-dirstore-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) return Status::FromErrno(errno, "mkdtemp " + templ);
    dir_ = templ;
    KVFS_ASSIGN_OR_RETURN(store_, NewDirStore(dir_ + "/root"));
    return Status::OK();
  }
  if (kind_ == "s3") {
    KVFS_ASSIGN_OR_RETURN(s3_options_, S3TestOptionsFromEnv());
    s3_options_.bucket = UniqueBucketName("kvfs-conf");
    KVFS_RETURN_IF_ERROR(CreateBucketForTest(s3_options_).Annotate("create test bucket"));
    bucket_created_ = true;
    KVFS_ASSIGN_OR_RETURN(store_, NewS3Store(s3_options_));
    return Status::OK();
  }
  return Status::InvalidArgument("unknown store kind " + kind_);
}

StoreUnderTest::~StoreUnderTest() {
  store_.reset();  // joins the S3 I/O thread before the bucket goes
  if (bucket_created_) {
    Status st = DeleteBucketForTest(s3_options_);
    if (!st.ok()) std::cerr << "cleanup of bucket " << s3_options_.bucket << ": " << st.ToString();
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace kvfs::testing
