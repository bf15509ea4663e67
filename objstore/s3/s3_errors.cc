#include "objstore/s3/s3_errors.h"

#include <curl/curl.h>

#include "objstore/s3/s3_url.h"

namespace kvfs::s3 {
namespace {

std::string What(const RequestContext& ctx) {
  return ctx.operation + " " + S3Uri(ctx.bucket, ctx.key);
}

std::string Detail(const S3ErrorDoc& doc) {
  if (doc.code.empty() && doc.message.empty()) return "";
  std::string d = doc.code;
  if (!doc.message.empty()) d += (d.empty() ? "" : ": ") + doc.message;
  return " (" + d + ")";
}

std::string Who(const RequestContext& ctx) {
  std::string who = "access key " + AccessKeyHint(ctx.access_key_id);
  if (!ctx.credentials_source.empty()) who += " from " + ctx.credentials_source;
  return who;
}

bool IsOneOf(const std::string& code, std::initializer_list<const char*> codes) {
  for (const char* c : codes) {
    if (code == c) return true;
  }
  return false;
}

}  // namespace

std::string AccessKeyHint(const std::string& access_key_id) {
  if (access_key_id.empty()) return "(none)";
  return access_key_id.substr(0, 8) + "...";
}

Status MapHttpError(int http_status, const S3ErrorDoc& doc, const RequestContext& ctx) {
  const std::string& code = doc.code;
  const std::string what = What(ctx);
  Status st;

  if (IsOneOf(code, {"SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable",
                     "Throttling", "ThrottlingException", "RequestThrottled",
                     "ConditionalRequestConflict", "OperationAborted", "IncompleteBody"}) ||
      http_status == 408 || http_status == 429 || (http_status >= 500 && http_status != 501)) {
    st = Status::Unavailable(what + ": server busy or failing, HTTP " +
                             std::to_string(http_status) + Detail(doc));
  } else if (IsOneOf(code, {"InvalidAccessKeyId", "SignatureDoesNotMatch"})) {
    st = Status::PermissionDenied("S3 rejected the credentials (" + Who(ctx) + ") at " +
                                  ctx.endpoint + ": " + code);
  } else if (code == "RequestTimeTooSkewed") {
    st = Status::PermissionDenied(what + ": the local clock differs too much from the server's" +
                                  Detail(doc));
  } else if (IsOneOf(code, {"ExpiredToken", "InvalidToken", "TokenRefreshRequired"})) {
    st = Status::PermissionDenied("S3 rejected the session token (" + Who(ctx) + "): " + code);
  } else if (code == "AuthorizationHeaderMalformed") {
    st = Status::InvalidArgument(what +
                                 ": the server rejected the signature scope; is the "
                                 "region setting right?" +
                                 Detail(doc));
  } else if (http_status == 403 || http_status == 401) {
    st = Status::PermissionDenied(what + ": access denied for " + Who(ctx) + Detail(doc));
  } else if (code == "NoSuchBucket") {
    st = Status::NotFound("bucket '" + ctx.bucket + "' does not exist at " + ctx.endpoint);
  } else if (code == "NoSuchUpload") {
    st = Status::NotFound(what + ": the multipart upload no longer exists" + Detail(doc));
  } else if (http_status == 404) {
    st = Status::NotFound(what + ": not found" + Detail(doc));
  } else if (http_status == 412 || http_status == 304) {
    st = Status::PreconditionFailed(what + ": precondition failed (the object exists or changed)" +
                                    Detail(doc));
  } else if (IsOneOf(code, {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"})) {
    st = Status::AlreadyExists("bucket '" + ctx.bucket + "' already exists" + Detail(doc));
  } else if (code == "KeyTooLongError") {
    st = Status::NameTooLong(what + ": key too long" + Detail(doc));
  } else if (IsOneOf(code, {"BadDigest", "InvalidDigest", "XAmzContentSHA256Mismatch"})) {
    st = Status::DataLoss(what + ": the server received different bytes" + Detail(doc));
  } else if (IsOneOf(code, {"EntityTooLarge"})) {
    st = Status::ResourceExhausted(what + ": object too large" + Detail(doc));
  } else if (http_status == 501 || http_status == 405 || code == "NotImplemented") {
    st = Status::NotSupported(what + ": not supported by the server" + Detail(doc));
  } else if (http_status == 400 || http_status == 409 || http_status == 411 || http_status == 416) {
    st = Status::InvalidArgument(what + ": the server refused the request, HTTP " +
                                 std::to_string(http_status) + Detail(doc));
  } else {
    st = Status::Internal(what + ": unexpected HTTP " + std::to_string(http_status) + Detail(doc));
  }
  st.SetHttp(http_status, code, doc.request_id);
  return st;
}

Status MapTransportError(int curl_code, const std::string& curl_message,
                         const RequestContext& ctx) {
  const std::string what = What(ctx);
  const std::string detail = curl_message.empty()
                                 ? std::string(curl_easy_strerror(static_cast<CURLcode>(curl_code)))
                                 : curl_message;
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
      return Status::PermissionDenied(what + ": TLS verification of " + ctx.endpoint + " failed (" +
                                      detail +
                                      "); set ca_bundle / AWS_CA_BUNDLE to the right CA file");
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return Status::InvalidArgument(what + ": bad S3 endpoint " + ctx.endpoint + " (" + detail +
                                     ")");
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
      return Status::Unavailable(what + ": cannot reach S3 endpoint " + ctx.endpoint + " (" +
                                 detail + ")");
    case CURLE_OPERATION_TIMEDOUT:
      return Status::Unavailable(what + ": transfer timed out or stalled (" + detail + ")");
    default:
      return Status::Unavailable(what + ": transfer failed (" + detail + ")");
  }
}

}  // namespace kvfs::s3
