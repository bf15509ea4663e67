// Parsing of S3's XML responses (tinyxml2) and building of request bodies. Pure functions,
// thread-safe. Parsers return kInternal naming the document when the XML is malformed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "objstore/object_store.h"

namespace kvfs::s3 {

// <Error><Code/><Message/><RequestId/><Resource/></Error>
struct S3ErrorDoc {
  std::string code;
  std::string message;
  std::string request_id;
  std::string resource;
};

// True and fills *out when `body` is an S3 <Error> document (also one sent inside a 200).
bool ParseErrorXml(std::string_view body, S3ErrorDoc* out);

// ListBucketResult of ListObjectsV2, with keys/prefixes URL-decoded when the response says
// <EncodingType>url</EncodingType>.
Result<ListResult> ParseListObjectsV2(std::string_view body);

// InitiateMultipartUploadResult -> UploadId.
Result<std::string> ParseInitiateMultipartUpload(std::string_view body);

// A 200 answer to CompleteMultipartUpload or CopyObject: either the result (ETag, possibly empty
// as Ceph RGW sends it; LastModified for copies) or an <Error> document that S3 may send after the
// 200 status line when the operation fails late.
struct WriteResultDoc {
  bool is_error = false;
  S3ErrorDoc error;
  std::string etag;       // without quotes
  int64_t mtime_sec = 0;  // LastModified, 0 if absent
};
Result<WriteResultDoc> ParseCompleteMultipartUpload(std::string_view body);
Result<WriteResultDoc> ParseCopyObjectResult(std::string_view body);

// ListMultipartUploadsResult (unfinished uploads: start-up clean-up, test bucket helpers).
struct PendingUpload {
  std::string key;
  std::string upload_id;
  int64_t initiated_sec = 0;  // <Initiated>, 0 if absent or bad
};
struct UploadList {
  std::vector<PendingUpload> uploads;
  bool truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};
Result<UploadList> ParseListMultipartUploads(std::string_view body);

// <CompleteMultipartUpload><Part><PartNumber/><ETag/></Part>...</CompleteMultipartUpload>
std::string BuildCompleteMultipartXml(const std::vector<CompletedPart>& parts);

// Helpers shared with header parsing.
// A size as S3 sends it (<Size>, Content-Length): decimal digits only, at most 2^63-1 (the largest
// file size, off_t). False for anything else: "-1", "18446744073709551616", "12abc", "".
bool ParseObjectSize(std::string_view s, uint64_t* out);
std::string StripQuotes(std::string_view etag);  // "\"abc\"" -> "abc"
int64_t ParseIso8601(std::string_view s);        // "2009-10-12T17:50:30.000Z" -> Unix s; 0 if bad
std::string UrlDecode(std::string_view s);       // %XX and '+' (as S3's encoding-type=url uses)

}  // namespace kvfs::s3
