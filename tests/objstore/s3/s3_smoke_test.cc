// Smoke test of the S3 store against a real server (Ceph RGW in CI): every ObjectStore method
// once, plus the two startup errors. The broad conformance suite lives in tests/objstore.
#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "objstore/s3/s3_store.h"
#include "tests/support/s3_admin.h"

namespace kvfs {
namespace {

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

GetRequest Req(const std::string& key, uint64_t offset = 0, uint64_t length = GetRequest::kToEnd,
               const std::string& if_match = "") {
  GetRequest r;
  r.key = key;
  r.offset = offset;
  r.length = length;
  r.if_match = if_match;
  return r;
}

class S3SmokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<S3Options> o = S3TestOptionsFromEnv();
    if (!o.ok()) {
      if (const char* req = std::getenv("KVFS_REQUIRE_S3"); req && std::string(req) == "1") {
        FAIL() << "KVFS_REQUIRE_S3=1 but " << o.status().ToString();
      }
      GTEST_SKIP() << o.status().message();
    }
    options_ = *o;
    options_.bucket = UniqueBucketName("kvfs-s3-smoke");
    ASSERT_TRUE(CreateBucketForTest(options_).ok());
    Result<std::shared_ptr<ObjectStore>> s = NewS3Store(options_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = *s;
  }
  void TearDown() override {
    store_.reset();
    if (!options_.bucket.empty()) {
      Status st = DeleteBucketForTest(options_);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
  }

  S3Options options_;
  std::shared_ptr<ObjectStore> store_;
};

TEST_F(S3SmokeTest, CheckAccessPutGetHeadListDelete) {
  ASSERT_TRUE(store_->CheckAccess().ok());
  const std::string data = Pattern(100000, 1);
  Result<ObjectInfo> put =
      store_->Put("dir/a b+%@.bin", Body::FromMemory(data.data(), data.size()));
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->size, data.size());
  EXPECT_FALSE(put->etag.empty());

  Result<ObjectInfo> head = store_->Head("dir/a b+%@.bin");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, data.size());
  EXPECT_EQ(head->etag, put->etag);
  EXPECT_GT(head->mtime_sec, 0);

  std::string buf(data.size(), '\0');
  Result<uint64_t> n = store_->Get(Req("dir/a b+%@.bin"), buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, data.size());
  EXPECT_EQ(buf, data);

  // Ranges: middle, last byte, running past the end, starting past the end.
  GetRequest r = Req("dir/a b+%@.bin", 1000, 5000);
  n = store_->Get(r, buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 5000u);
  EXPECT_EQ(buf.substr(0, 5000), data.substr(1000, 5000));
  r = Req("dir/a b+%@.bin", data.size() - 1, 1);
  n = store_->Get(r, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(buf[0], data.back());
  r = Req("dir/a b+%@.bin", data.size() - 10, 100);
  n = store_->Get(r, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 10u);
  r = Req("dir/a b+%@.bin", data.size() + 5, 100);
  n = store_->Get(r, buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 0u);
  r = Req("dir/a b+%@.bin", 10, GetRequest::kToEnd);
  n = store_->Get(r, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, data.size() - 10);
  // If-Match with the right and a wrong ETag.
  r = Req("dir/a b+%@.bin", 0, 10, put->etag);
  EXPECT_TRUE(store_->Get(r, buf.data()).ok());
  r.if_match = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(store_->Get(r, buf.data()).status().code(), StatusCode::kPreconditionFailed);

  // Empty object.
  ASSERT_TRUE(store_->Put("empty", Body::FromMemory("", 0)).ok());
  n = store_->Get(Req("empty"), buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 0u);

  // Listing with a delimiter, and paged.
  ASSERT_TRUE(store_->Put("dir/z", Body::FromMemory("z", 1)).ok());
  ListRequest lr;
  lr.delimiter = "/";
  Result<ListResult> list = store_->List(lr);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(list->objects[0].key, "empty");
  ASSERT_EQ(list->common_prefixes.size(), 1u);
  EXPECT_EQ(list->common_prefixes[0], "dir/");
  lr = ListRequest{"dir/", "", "", 1};
  list = store_->List(lr);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(list->objects[0].key, "dir/a b+%@.bin");
  EXPECT_EQ(list->objects[0].size, data.size());
  ASSERT_TRUE(list->truncated);
  lr.continuation_token = list->next_continuation_token;
  list = store_->List(lr);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(list->objects[0].key, "dir/z");
  EXPECT_FALSE(list->truncated);

  // Copy, delete, missing key.
  Result<ObjectInfo> copy = store_->Copy("dir/a b+%@.bin", "copy", {});
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ(copy->size, data.size());
  EXPECT_EQ(store_->Copy("missing", "copy2", {}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->Delete("copy").ok());
  ASSERT_TRUE(store_->Delete("copy").ok());  // absent: still OK
  Status missing = store_->Head("copy").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
  missing = store_->Get(Req("copy"), buf.data()).status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
  EXPECT_NE(missing.message().find("copy"), std::string::npos) << missing.ToString();
}

TEST_F(S3SmokeTest, ConditionalCreate) {
  PutOptions cond;
  cond.if_none_match = true;
  Result<ObjectInfo> first = store_->Put("chunk", Body::FromMemory("one", 3), cond);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<ObjectInfo> second = store_->Put("chunk", Body::FromMemory("two!", 4), cond);
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists) << second.status().ToString();
  Result<ObjectInfo> head = store_->Head("chunk");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, 3u);
}

// Requests are spread over the HTTP loops (http_loops): streamed GETs deliver their bytes on more
// than one thread, and every byte is still the object's.
TEST_F(S3SmokeTest, RequestsSpreadOverHttpLoops) {
  S3Options o = options_;
  o.http_loops = 3;
  Result<std::shared_ptr<ObjectStore>> s = NewS3Store(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string data = Pattern(3 << 20, 7);
  ASSERT_TRUE((*s)->Put("spread", Body::FromMemory(data.data(), data.size())).ok());
  constexpr int kGets = 9;
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::vector<std::string> got(kGets);
  std::vector<std::promise<Result<uint64_t>>> done(kGets);
  for (int i = 0; i < kGets; ++i) {
    (*s)->GetStreamAsync(
        Req("spread", 0, data.size()),
        [&, i](const char* p, size_t n) {
          std::lock_guard<std::mutex> l(mu);
          threads.insert(std::this_thread::get_id());
          got[i].append(p, n);
          return Status::OK();
        },
        [&, i](Result<uint64_t> r) { done[i].set_value(std::move(r)); });
  }
  for (int i = 0; i < kGets; ++i) {
    Result<uint64_t> r = done[i].get_future().get();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(got[i], data) << "GET " << i;
  }
  EXPECT_GE(threads.size(), 2u);
  EXPECT_TRUE((*s)->Delete("spread").ok());
}

TEST_F(S3SmokeTest, MultipartFromFile) {
  const size_t kPart = 5 << 20;
  const std::string data = Pattern(2 * kPart + 12345, 7);
  char path[] = "/tmp/kvfs-s3-smoke-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));

  Result<std::string> id = store_->CreateMultipartUpload("big", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  // Parts in parallel through the async API.
  std::vector<std::promise<Result<std::string>>> promises(3);
  for (int i = 0; i < 3; ++i) {
    const uint64_t off = static_cast<uint64_t>(i) * kPart;
    const uint64_t len = std::min<uint64_t>(kPart, data.size() - off);
    store_->UploadPartAsync(
        "big", *id, i + 1, Body::FromFile(fd, off, len),
        [&promises, i](Result<std::string> r) { promises[i].set_value(std::move(r)); });
  }
  std::vector<CompletedPart> parts;
  for (int i = 0; i < 3; ++i) {
    Result<std::string> etag = promises[i].get_future().get();
    ASSERT_TRUE(etag.ok()) << etag.status().ToString();
    parts.push_back({i + 1, *etag});
  }
  close(fd);
  Result<ObjectInfo> done = store_->CompleteMultipartUpload("big", *id, parts, {});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->size, data.size());

  std::string buf(data.size(), '\0');
  Result<uint64_t> n = store_->Get(Req("big"), buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, data.size());
  EXPECT_TRUE(buf == data);

  // Conditional completion over the existing key; abort of an upload.
  id = store_->CreateMultipartUpload("big", {});
  ASSERT_TRUE(id.ok());
  Result<std::string> etag = store_->UploadPart("big", *id, 1, Body::FromMemory("x", 1));
  ASSERT_TRUE(etag.ok());
  PutOptions cond;
  cond.if_none_match = true;
  done = store_->CompleteMultipartUpload("big", *id, {{1, *etag}}, cond);
  EXPECT_EQ(done.status().code(), StatusCode::kAlreadyExists) << done.status().ToString();
  EXPECT_TRUE(store_->AbortMultipartUpload("big", *id).ok());
  EXPECT_TRUE(store_->AbortMultipartUpload("big", *id).ok());
}

TEST_F(S3SmokeTest, WrongSecretIsPermissionDenied) {
  S3Options bad = options_;
  bad.credentials.secret_access_key = "wrong-secret-wrong-secret-wrong-secret00";
  Result<std::shared_ptr<ObjectStore>> s = NewS3Store(bad);
  ASSERT_TRUE(s.ok());
  Status st = (*s)->CheckAccess();
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  EXPECT_NE(st.message().find(options_.credentials.access_key_id.substr(0, 8)), std::string::npos)
      << st.ToString();
  EXPECT_EQ(st.message().find(bad.credentials.secret_access_key), std::string::npos);
}

TEST_F(S3SmokeTest, MissingBucketIsNotFound) {
  S3Options other = options_;
  other.bucket = UniqueBucketName("kvfs-missing");
  Result<std::shared_ptr<ObjectStore>> s = NewS3Store(other);
  ASSERT_TRUE(s.ok());
  Status st = (*s)->CheckAccess();
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find(other.bucket), std::string::npos) << st.ToString();
  EXPECT_EQ((*s)->Head("x").status().code(), StatusCode::kNotFound);
}

TEST_F(S3SmokeTest, UnreachableEndpointIsUnavailable) {
  S3Options other = options_;
  other.endpoint = "http://127.0.0.1:1";  // nothing listens there
  other.max_attempts = 2;
  Result<std::shared_ptr<ObjectStore>> s = NewS3Store(other);
  ASSERT_TRUE(s.ok());
  Status st = (*s)->CheckAccess();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("127.0.0.1:1"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace kvfs
