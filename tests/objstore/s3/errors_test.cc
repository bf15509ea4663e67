#include <curl/curl.h>
#include <gtest/gtest.h>

#include "objstore/s3/s3_errors.h"

namespace kvfs::s3 {
namespace {

RequestContext Ctx() {
  return RequestContext{
      "GET", "bkt", "dir/key", "http://127.0.0.1:7480", "TESTACCESSKEY0000001", "environment"};
}

Status Map(int http, const std::string& code, const std::string& message = "msg") {
  return MapHttpError(http, S3ErrorDoc{code, message, "req-1", ""}, Ctx());
}

TEST(ErrorMap, NotFoundNamesBucketAndKey) {
  Status st = Map(404, "NoSuchKey");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("s3://bkt/dir/key"), std::string::npos) << st.message();
  EXPECT_EQ(st.http_status(), 404);
  EXPECT_EQ(st.s3_code(), "NoSuchKey");
  EXPECT_EQ(st.request_id(), "req-1");

  st = Map(404, "NoSuchBucket");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("bucket 'bkt' does not exist at http://127.0.0.1:7480"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(Map(404, "").code(), StatusCode::kNotFound);  // HEAD: no body
}

TEST(ErrorMap, CredentialsAreNamedButNeverTheSecret) {
  for (const char* code : {"InvalidAccessKeyId", "SignatureDoesNotMatch"}) {
    Status st = Map(403, code);
    EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
    EXPECT_NE(st.message().find("S3 rejected the credentials (access key TESTACCE..."),
              std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find(code), std::string::npos);
    EXPECT_EQ(st.message().find("TESTACCESSKEY0000001"), std::string::npos);
  }
  EXPECT_EQ(Map(403, "AccessDenied").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Map(403, "RequestTimeTooSkewed").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Map(400, "ExpiredToken").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Map(403, "").code(), StatusCode::kPermissionDenied);
}

TEST(ErrorMap, TransientErrorsAreRetryable) {
  for (int http : {500, 502, 503, 504, 429}) {
    Status st = Map(http, "");
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << http;
    EXPECT_TRUE(st.retryable());
  }
  EXPECT_EQ(Map(503, "SlowDown").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Map(400, "RequestTimeout").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Map(200, "InternalError").code(), StatusCode::kUnavailable);  // error inside a 200
  EXPECT_EQ(Map(409, "ConditionalRequestConflict").code(), StatusCode::kUnavailable);
}

TEST(ErrorMap, OtherCodes) {
  EXPECT_EQ(Map(412, "PreconditionFailed").code(), StatusCode::kPreconditionFailed);
  EXPECT_EQ(Map(304, "").code(), StatusCode::kPreconditionFailed);
  EXPECT_EQ(Map(409, "BucketAlreadyOwnedByYou").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Map(400, "KeyTooLongError").code(), StatusCode::kNameTooLong);
  EXPECT_EQ(Map(400, "BadDigest").code(), StatusCode::kDataLoss);
  EXPECT_EQ(Map(501, "NotImplemented").code(), StatusCode::kNotSupported);
  EXPECT_EQ(Map(400, "InvalidArgument").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Map(400, "AuthorizationHeaderMalformed").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Map(404, "NoSuchUpload").code(), StatusCode::kNotFound);
  EXPECT_FALSE(Map(400, "InvalidArgument").retryable());
}

TEST(ErrorMap, Transport) {
  Status st = MapTransportError(CURLE_COULDNT_CONNECT, "Failed to connect", Ctx());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("http://127.0.0.1:7480"), std::string::npos);
  EXPECT_EQ(MapTransportError(CURLE_RECV_ERROR, "", Ctx()).code(), StatusCode::kUnavailable);
  EXPECT_EQ(MapTransportError(CURLE_PARTIAL_FILE, "", Ctx()).code(), StatusCode::kUnavailable);
  EXPECT_EQ(MapTransportError(CURLE_PEER_FAILED_VERIFICATION, "", Ctx()).code(),
            StatusCode::kPermissionDenied);
}

TEST(ErrorMap, AccessKeyHint) {
  EXPECT_EQ(AccessKeyHint("AKIAIOSFODNN7EXAMPLE"), "AKIAIOSF...");
  EXPECT_EQ(AccessKeyHint(""), "(none)");
}

}  // namespace
}  // namespace kvfs::s3
