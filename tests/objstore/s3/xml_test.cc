#include <gtest/gtest.h>

#include "objstore/s3/s3_get.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs::s3 {
namespace {

TEST(Xml, ListObjectsV2WithPrefixesAndToken) {
  const char* body = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix>d/</Prefix><KeyCount>3</KeyCount><MaxKeys>3</MaxKeys>
  <Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>
  <Contents><Key>d/a.bin</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>
    <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size>
    <StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>d/b &amp; c</Key><Size>0</Size><ETag>"e"</ETag></Contents>
  <CommonPrefixes><Prefix>d/sub/</Prefix></CommonPrefixes>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
</ListBucketResult>)";
  Result<ListResult> r = ParseListObjectsV2(body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->objects.size(), 2u);
  EXPECT_EQ(r->objects[0].key, "d/a.bin");
  EXPECT_EQ(r->objects[0].size, 434234u);
  EXPECT_EQ(r->objects[0].etag, "fba9dede5f27731c9771645a39863328");
  EXPECT_EQ(r->objects[0].mtime_sec, 1255369830);
  EXPECT_EQ(r->objects[1].key, "d/b & c");
  EXPECT_EQ(r->common_prefixes, std::vector<std::string>{"d/sub/"});
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(Xml, ListObjectsV2UrlEncoded) {
  const char* body =
      "<ListBucketResult><EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
      "<Contents><Key>a+b%2Bc%25%C3%BC</Key><Size>1</Size></Contents>"
      "<CommonPrefixes><Prefix>x%2Fy/</Prefix></CommonPrefixes></ListBucketResult>";
  Result<ListResult> r = ParseListObjectsV2(body);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->objects[0].key, "a b+c%\xc3\xbc");
  EXPECT_EQ(r->common_prefixes[0], "x/y/");
  EXPECT_FALSE(r->truncated);
}

TEST(Xml, TruncatedListingWithoutTokenIsAnError) {
  Result<ListResult> r =
      ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>");
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_EQ(ParseListObjectsV2("<Foo/>").status().code(), StatusCode::kInternal);
  EXPECT_EQ(ParseListObjectsV2("not xml <").status().code(), StatusCode::kInternal);
}

TEST(Xml, ErrorDocument) {
  S3ErrorDoc e;
  ASSERT_TRUE(ParseErrorXml(R"(<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>NoSuchKey</Code><Message>The resource you requested does not exist</Message>
<Resource>/mybucket/myfoto.jpg</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>)",
                            &e));
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The resource you requested does not exist");
  EXPECT_EQ(e.request_id, "4442587FB7D0A2F9");
  EXPECT_EQ(e.resource, "/mybucket/myfoto.jpg");
  EXPECT_FALSE(ParseErrorXml("", &e));
  EXPECT_FALSE(ParseErrorXml("<ListBucketResult/>", &e));
}

TEST(Xml, InitiateMultipartUpload) {
  Result<std::string> id = ParseInitiateMultipartUpload(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
      "<UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>"
      "</InitiateMultipartUploadResult>");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA");
  EXPECT_FALSE(ParseInitiateMultipartUpload("<InitiateMultipartUploadResult/>").ok());
}

TEST(Xml, CompleteMultipartUploadResultAndErrorInside200) {
  Result<WriteResultDoc> r = ParseCompleteMultipartUpload(
      "<CompleteMultipartUploadResult><Location>http://b.s3.amazonaws.com/k</Location>"
      "<Bucket>b</Bucket><Key>k</Key><ETag>\"3858f62230ac3c915f300c664312c11f-9\"</ETag>"
      "</CompleteMultipartUploadResult>");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->is_error);
  EXPECT_EQ(r->etag, "3858f62230ac3c915f300c664312c11f-9");
  // Ceph RGW: empty ETag.
  r = ParseCompleteMultipartUpload(
      "<CompleteMultipartUploadResult><ETag></ETag></CompleteMultipartUploadResult>");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->etag, "");
  // A 200 whose body is an error.
  r = ParseCompleteMultipartUpload(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<Error><Code>InternalError</Code>"
      "<Message>We encountered an internal error. Please try again.</Message>"
      "<RequestId>656c76696e6727732072657175657374</RequestId></Error>");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->is_error);
  EXPECT_EQ(r->error.code, "InternalError");
}

TEST(Xml, CopyObjectResult) {
  Result<WriteResultDoc> r = ParseCopyObjectResult(
      "<CopyObjectResult><LastModified>2009-10-28T22:32:00.000Z</LastModified>"
      "<ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->etag, "9b2cf535f27731c974343645a3985328");
  EXPECT_EQ(r->mtime_sec, 1256769120);
  r = ParseCopyObjectResult("<Error><Code>SlowDown</Code></Error>");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->is_error);
}

TEST(Xml, ListMultipartUploads) {
  Result<UploadList> r = ParseListMultipartUploads(
      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
      "<Upload><Key>a</Key><UploadId>1</UploadId></Upload>"
      "<Upload><Key>b</Key><UploadId>2</UploadId></Upload></ListMultipartUploadsResult>");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->uploads.size(), 2u);
  EXPECT_EQ(r->uploads[1].key, "b");
  EXPECT_EQ(r->uploads[1].upload_id, "2");
}

TEST(Xml, BuildCompleteMultipart) {
  EXPECT_EQ(BuildCompleteMultipartXml({{1, "abc"}, {2, "\"def\""}}),
            "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Part><PartNumber>1</PartNumber><ETag>\"abc\"</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>\"def\"</ETag></Part>"
            "</CompleteMultipartUpload>");
}

TEST(Headers, ContentRange) {
  uint64_t a = 0, b = 0;
  int64_t total = 0;
  ASSERT_TRUE(ParseContentRange("bytes 0-9/10", &a, &b, &total));
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 9u);
  EXPECT_EQ(total, 10);
  ASSERT_TRUE(ParseContentRange("bytes 5-9/*", &a, &b, &total));
  EXPECT_EQ(total, -1);
  EXPECT_FALSE(ParseContentRange("bytes */10", &a, &b, &total));
  EXPECT_FALSE(ParseContentRange("", &a, &b, &total));
}

TEST(Headers, StripQuotesAndDates) {
  EXPECT_EQ(StripQuotes("\"abc\""), "abc");
  EXPECT_EQ(StripQuotes("abc"), "abc");
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:10.000Z"), 10);
  EXPECT_EQ(ParseIso8601("garbage"), 0);
}

// Found by tests/fuzz (fuzz_s3_xml): a year that overflows int once 1900 is subtracted was UB.
TEST(Headers, DatesOutOfRangeAreBadNotUndefined) {
  EXPECT_EQ(ParseIso8601("-2147483648-01-01T00:00:00.000Z"), 0);
  EXPECT_EQ(ParseIso8601("2024-2147483647-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseIso8601("99999999999-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseIso8601("2024-13-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseIso8601("2009-10-12T17:50:30.000Z"), 1255369830);
  Result<WriteResultDoc> copy = ParseCopyObjectResult(
      "<CopyObjectResult><LastModified>-2147483648-01-01T00:00:00.000Z</LastModified>"
      "<ETag>\"e\"</ETag></CopyObjectResult>");
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->mtime_sec, 0);
  EXPECT_EQ(copy->etag, "e");
}

TEST(Sizes, OnlyPlainDecimalsUpToTheLargestFileSize) {
  uint64_t v = 7;
  EXPECT_TRUE(ParseObjectSize("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseObjectSize("16777216", &v));
  EXPECT_EQ(v, 16777216u);
  EXPECT_TRUE(ParseObjectSize("9223372036854775807", &v));
  EXPECT_EQ(v, 9223372036854775807u);
  for (const char* bad :
       {"", "-1", "+1", " 1", "1 ", "0x10", "12abc", "abc", "1e9", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "99999999999999999999999"}) {
    v = 7;
    EXPECT_FALSE(ParseObjectSize(bad, &v)) << bad;
    EXPECT_EQ(v, 7u) << bad;
  }
}

TEST(Xml, ListingWithAbsurdSizeIsAnError) {
  for (const char* size : {"-1", "18446744073709551616", "abc", ""}) {
    const std::string body = std::string("<ListBucketResult><IsTruncated>false</IsTruncated>") +
                             "<Contents><Key>k1</Key><Size>" + size +
                             "</Size></Contents></ListBucketResult>";
    Result<ListResult> r = ParseListObjectsV2(body);
    ASSERT_FALSE(r.ok()) << size;
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    EXPECT_NE(r.status().message().find("'k1'"), std::string::npos) << r.status().ToString();
  }
  // A <Contents> without <Size> is as broken as one with a bad size.
  EXPECT_FALSE(
      ParseListObjectsV2("<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>")
          .ok());
}

TEST(Xml, AbsurdTokensAreErrors) {
  const std::string long_id(9000, 'u');
  Result<std::string> id =
      ParseInitiateMultipartUpload("<InitiateMultipartUploadResult><UploadId>" + long_id +
                                   "</UploadId></InitiateMultipartUploadResult>");
  EXPECT_EQ(id.status().code(), StatusCode::kInternal);
  EXPECT_NE(id.status().message().find("UploadId"), std::string::npos);
  Result<ListResult> list = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>" + long_id +
      "</NextContinuationToken></ListBucketResult>");
  EXPECT_EQ(list.status().code(), StatusCode::kInternal);
  EXPECT_NE(list.status().message().find("NextContinuationToken"), std::string::npos);
}

TEST(Headers, ContentRangeIsStrict) {
  uint64_t a = 1, b = 1;
  int64_t total = 1;
  for (const char* bad : {"bytes 0-9/-1", "bytes 0-9/18446744073709551616", "bytes -5-9/10",
                          "bytes 0-18446744073709551615/10", "bytes 9-0/10", "bytes 0-9/9",
                          "bytes 0-9/10x", "bytes 0-9", "bytes 0x0-9/10", "items 0-9/10"}) {
    EXPECT_FALSE(ParseContentRange(bad, &a, &b, &total)) << bad;
  }
  EXPECT_EQ(a, 1u);
  ASSERT_TRUE(ParseContentRange("bytes 0-9223372036854775806/9223372036854775807", &a, &b, &total));
  EXPECT_EQ(total, INT64_MAX);
}

}  // namespace
}  // namespace kvfs::s3
