// The one place that turns an S3/HTTP failure into a kvfs Status. Pure functions, thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs::s3 {

// What an error message names. Never holds a secret.
struct RequestContext {
  std::string operation;  // "GET", "PUT", "HEAD", "LIST", "CompleteMultipartUpload", ...
  std::string bucket;
  std::string key;                 // "" for bucket-level requests
  std::string endpoint;            // "http://127.0.0.1:7480"
  std::string access_key_id;       // only its first 8 characters appear in messages
  std::string credentials_source;  // "environment", "config", ...
};

// "TESTACCE..." - enough to recognise a key, not enough to use it.
std::string AccessKeyHint(const std::string& access_key_id);

// Maps an HTTP status plus the S3 error document (code may be empty, e.g. for HEAD) to a Status
// carrying http_status / s3 code / request id and a message naming the operation and object:
//   404 NoSuchKey -> kNotFound, NoSuchBucket -> kNotFound naming bucket and endpoint,
//   403 InvalidAccessKeyId/SignatureDoesNotMatch/AccessDenied/... -> kPermissionDenied naming the
//   access key (hint only) and where it came from, 412 -> kPreconditionFailed,
//   5xx / 429 / SlowDown / RequestTimeout / 409 ConditionalRequestConflict -> kUnavailable, ...
Status MapHttpError(int http_status, const S3ErrorDoc& doc, const RequestContext& ctx);

// Maps a libcurl result code (with curl's error text) of a failed transfer. Connection trouble,
// resets, stalls and short bodies -> kUnavailable (retryable); TLS verification failures ->
// kPermissionDenied naming the endpoint and the CA bundle settings; bad URLs -> kInvalidArgument.
Status MapTransportError(int curl_code, const std::string& curl_message, const RequestContext& ctx);

}  // namespace kvfs::s3
