// Object-store conformance: multipart uploads (5 MiB+ parts, content checked), abort, and
// conditional completion.

#include "base/mutex.h"
#include "objstore/upload_gc.h"
#include "tests/objstore/conformance_fixture.h"

namespace kvfs::testing {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// Uploads `data` in parts of `part_size` (the last one shorter), all parts in flight at once.
Result<std::vector<CompletedPart>> UploadParts(ObjectStore& store, const std::string& key,
                                               const std::string& upload_id,
                                               const std::string& data, uint64_t part_size) {
  size_t n = (data.size() + part_size - 1) / part_size;
  std::vector<Result<std::string>> etags(n, Status::Internal("part not done"));
  Mutex mu;
  CondVar cv;
  size_t done = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t off = i * part_size;
    uint64_t len = std::min<uint64_t>(part_size, data.size() - off);
    store.UploadPartAsync(key, upload_id, static_cast<int>(i + 1),
                          Body::FromMemory(data.data() + off, len), [&, i](Result<std::string> r) {
                            MutexLock l(&mu);
                            etags[i] = std::move(r);
                            ++done;
                            cv.SignalAll();
                          });
  }
  MutexLock l(&mu);
  cv.Wait(&mu, [&] { return done == n; });
  std::vector<CompletedPart> parts;
  for (size_t i = 0; i < n; ++i) {
    if (!etags[i].ok()) return etags[i].status().Annotate("part " + std::to_string(i + 1));
    parts.push_back({static_cast<int>(i + 1), *etags[i]});
  }
  return parts;
}

TEST_P(ConformanceTest, MultipartUploadContent) {
  const std::string data = RandomBytes(11 * kMiB + 12345, 11);  // 5 MiB, 5 MiB, 1 MiB + 12345
  auto id = store().CreateMultipartUpload("mp/object", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(store().Head("mp/object").status().code(), StatusCode::kNotFound)
      << "the object appears only on complete";
  auto parts = UploadParts(store(), "mp/object", *id, data, 5 * kMiB);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 3u);
  auto info = store().CompleteMultipartUpload("mp/object", *id, *parts, {});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, data.size());

  auto head = store().Head("mp/object");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, data.size());
  auto whole = GetString("mp/object");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(*whole == data) << "multipart content differs";
  // A range across the first part boundary.
  auto across = GetString("mp/object", 5 * kMiB - 100, 200);
  ASSERT_TRUE(across.ok()) << across.status().ToString();
  EXPECT_TRUE(*across == data.substr(5 * kMiB - 100, 200));
}

TEST_P(ConformanceTest, MultipartSinglePartAndReplacedPart) {
  auto id = store().CreateMultipartUpload("one", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::string v1 = RandomBytes(1000, 1), v2 = RandomBytes(2000, 2);
  ASSERT_TRUE(store().UploadPart("one", *id, 1, Body::FromMemory(v1.data(), v1.size())).ok());
  auto etag2 = store().UploadPart("one", *id, 1, Body::FromMemory(v2.data(), v2.size()));
  ASSERT_TRUE(etag2.ok()) << etag2.status().ToString();
  auto info = store().CompleteMultipartUpload("one", *id, {{1, *etag2}}, {});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_TRUE(*GetString("one") == v2) << "the last upload of a part number wins";
}

TEST_P(ConformanceTest, MultipartAbort) {
  auto id = store().CreateMultipartUpload("aborted", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::string part = RandomBytes(1000, 5);
  auto etag = store().UploadPart("aborted", *id, 1, Body::FromMemory(part.data(), part.size()));
  ASSERT_TRUE(etag.ok()) << etag.status().ToString();
  Status abort = store().AbortMultipartUpload("aborted", *id);
  ASSERT_TRUE(abort.ok()) << abort.ToString();
  EXPECT_EQ(store().Head("aborted").status().code(), StatusCode::kNotFound);
  auto complete = store().CompleteMultipartUpload("aborted", *id, {{1, *etag}}, {});
  EXPECT_FALSE(complete.ok()) << "complete after abort must fail";
  EXPECT_EQ(store().Head("aborted").status().code(), StatusCode::kNotFound);
  auto late = store().UploadPart("aborted", *id, 2, Body::FromMemory(part.data(), part.size()));
  EXPECT_EQ(late.status().code(), StatusCode::kNotFound) << late.status().ToString();
}

// What a writer or daemon that died mid-upload leaves: found under its prefix and aborted once
// old enough; a younger one (maybe another node's live upload) is left alone.
TEST_P(ConformanceTest, UnfinishedUploadsListedAndStaleOnesAborted) {
  const std::string part = RandomBytes(5 * kMiB, 5);
  auto id = store().CreateMultipartUpload("gc/left", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(
      store().UploadPart("gc/left", *id, 1, Body::FromMemory(part.data(), part.size())).ok());
  auto list = store().ListUnfinishedUploads("gc/");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].key, "gc/left");
  EXPECT_EQ((*list)[0].upload_id, *id);
  const int64_t now = time(nullptr);
  EXPECT_LT(std::abs((*list)[0].initiated_sec - now), 3600) << "Initiated not parsed";
  auto other = store().ListUnfinishedUploads("elsewhere/");
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->empty());

  auto young = AbortStaleUploads(store(), "gc/", 3600, now);
  ASSERT_TRUE(young.ok()) << young.status().ToString();
  EXPECT_EQ(young->aborted, 0);
  EXPECT_EQ(young->young, 1);
  auto old = AbortStaleUploads(store(), "gc/", 60, now + 3600);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->aborted, 1);
  list = store().ListUnfinishedUploads("gc/");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST_P(ConformanceTest, MultipartTooSmallPartIsRejected) {
  auto id = store().CreateMultipartUpload("small", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::string part = RandomBytes(1000, 6);
  auto p1 = store().UploadPart("small", *id, 1, Body::FromMemory(part.data(), part.size()));
  auto p2 = store().UploadPart("small", *id, 2, Body::FromMemory(part.data(), part.size()));
  ASSERT_TRUE(p1.ok() && p2.ok());
  auto complete = store().CompleteMultipartUpload("small", *id, {{1, *p1}, {2, *p2}}, {});
  EXPECT_FALSE(complete.ok()) << "parts but the last must be >= 5 MiB";
  EXPECT_EQ(store().Head("small").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store().AbortMultipartUpload("small", *id).ok());
}

TEST_P(ConformanceTest, MultipartConditionalCompleteOnExistingKey) {
  ASSERT_TRUE(PutString("taken", "original").ok());
  auto id = store().CreateMultipartUpload("taken", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::string part = RandomBytes(1000, 7);
  auto etag = store().UploadPart("taken", *id, 1, Body::FromMemory(part.data(), part.size()));
  ASSERT_TRUE(etag.ok());
  PutOptions create;
  create.if_none_match = true;
  auto complete = store().CompleteMultipartUpload("taken", *id, {{1, *etag}}, create);
  EXPECT_EQ(complete.status().code(), StatusCode::kAlreadyExists) << complete.status().ToString();
  EXPECT_EQ(*GetString("taken"), "original");
  store().AbortMultipartUpload("taken", *id);  // may already be gone; either is fine
}

}  // namespace
}  // namespace kvfs::testing
