// Fuzz target for objstore/s3/s3_xml: every parser of S3's XML responses (a server, or anything
// between it and us, controls these bytes), and the slice checksums and user attributes kvfs reads
// from a reply's metadata (base/slice_crcs, base/user_xattrs). Each parser runs on every input;
// none may crash, leak or hit undefined behaviour, and what they return must be usable: a listing
// that says it is truncated carries a continuation token, an initiated upload has an id, sizes fit
// a file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/slice_crcs.h"
#include "base/user_xattrs.h"
#include "objstore/s3/s3_xml.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  using namespace kvfs::s3;

  S3ErrorDoc err;
  (void)ParseErrorXml(body, &err);

  kvfs::Result<kvfs::ListResult> list = ParseListObjectsV2(body);
  if (list.ok()) {
    if (list->truncated) FUZZ_CHECK(!list->next_continuation_token.empty());
    for (const kvfs::ObjectInfo& o : list->objects) {
      FUZZ_CHECK(o.size <= static_cast<uint64_t>(INT64_MAX));
    }
  }

  kvfs::Result<std::string> upload_id = ParseInitiateMultipartUpload(body);
  if (upload_id.ok()) FUZZ_CHECK(!upload_id->empty());

  (void)ParseCompleteMultipartUpload(body);
  (void)ParseCopyObjectResult(body);
  (void)ParseListMultipartUploads(body);

  // The helpers, on the raw bytes too.
  (void)ParseIso8601(body);
  (void)UrlDecode(body);
  (void)StripQuotes(body);
  uint64_t object_size = 0;
  if (ParseObjectSize(body, &object_size)) FUZZ_CHECK(object_size <= uint64_t{INT64_MAX});

  // A slice checksum value that parses describes itself exactly, and is usable against any size.
  std::optional<kvfs::SliceCrcs> slices = kvfs::SliceCrcs::Parse(body);
  if (slices) {
    FUZZ_CHECK(kvfs::SliceCrcs::Parse(slices->Format()) == slices);
    FUZZ_CHECK(!slices->crcs.empty() && slices->crcs.size() <= kvfs::SliceCrcs::kMaxSlices);
    for (uint64_t size : {object_size, slices->slice_size * slices->crcs.size(), uint64_t{1}}) {
      if (slices->Fits(size)) (void)slices->Whole(size);
    }
  }
  // User attributes that decode encode back to the same text, within the bound.
  kvfs::Result<kvfs::UserXattrs> attrs = kvfs::UserXattrs::Decode(body);
  if (attrs.ok()) {
    FUZZ_CHECK(attrs->Encode() == body);
    FUZZ_CHECK(body.size() <= kvfs::UserXattrs::kMaxEncodedBytes);
  }
  return 0;
}
