// SigV4 against the examples of AWS's "Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk" (S3 API reference), plus URL building.
#include "objstore/s3/sigv4.h"

#include <gtest/gtest.h>

#include "objstore/s3/s3_url.h"

namespace kvfs::s3 {
namespace {

constexpr char kAccess[] = "AKIAIOSFODNN7EXAMPLE";
constexpr char kSecret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr char kHost[] = "examplebucket.s3.amazonaws.com";
constexpr char kDate[] = "20130524T000000Z";

SigV4Signature Sign(const SigV4Request& req) {
  return SignV4(req, kAccess, kSecret, "us-east-1", "s3", kDate);
}

TEST(SigV4, GetObjectWithRange) {
  SigV4Request req{"GET",
                   "/test.txt",
                   {},
                   {{"Host", kHost},
                    {"Range", "bytes=0-9"},
                    {"x-amz-content-sha256", kEmptySha256},
                    {"x-amz-date", kDate}},
                   kEmptySha256};
  SigV4Signature sig = Sign(req);
  EXPECT_EQ(sig.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sig.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(sig.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(sig.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4, PutObjectWithEscapedKey) {
  const std::string payload_hash = Sha256Hex("Welcome to Amazon S3.");
  EXPECT_EQ(payload_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigV4Request req{"PUT",
                   "/" + UriEncode("test$file.text", false),
                   {},
                   {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                    {"Host", kHost},
                    {"x-amz-date", kDate},
                    {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                    {"x-amz-content-sha256", payload_hash}},
                   payload_hash};
  SigV4Signature sig = Sign(req);
  EXPECT_EQ(req.canonical_uri, "/test%24file.text");
  EXPECT_EQ(sig.signed_headers, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(sig.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4, GetBucketLifecycle) {
  SigV4Request req{"GET",
                   "/",
                   {{"lifecycle", ""}},
                   {{"Host", kHost}, {"x-amz-content-sha256", kEmptySha256}, {"x-amz-date", kDate}},
                   kEmptySha256};
  SigV4Signature sig = Sign(req);
  EXPECT_NE(sig.canonical_request.find("\nlifecycle=\n"), std::string::npos);
  EXPECT_EQ(sig.signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4, ListObjectsSortsTheQuery) {
  SigV4Request req{"GET",
                   "/",
                   {{"prefix", "J"}, {"max-keys", "2"}},
                   {{"Host", kHost}, {"x-amz-content-sha256", kEmptySha256}, {"x-amz-date", kDate}},
                   kEmptySha256};
  SigV4Signature sig = Sign(req);
  EXPECT_NE(sig.canonical_request.find("\nmax-keys=2&prefix=J\n"), std::string::npos);
  EXPECT_EQ(sig.signature, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4, HeaderValuesAreTrimmedAndNamesLowered) {
  SigV4Request a{"GET", "/", {}, {{"X-Amz-Date", kDate}, {"Host", kHost}}, kEmptySha256};
  SigV4Request b{"GET",
                 "/",
                 {},
                 {{"host", "  " + std::string(kHost) + " "}, {"x-amz-date", kDate}},
                 kEmptySha256};
  EXPECT_EQ(Sign(a).signature, Sign(b).signature);
}

TEST(UriEncode, EncodesEverythingButUnreserved) {
  EXPECT_EQ(UriEncode("AZaz09-._~", true), "AZaz09-._~");
  EXPECT_EQ(UriEncode("a b+c%d@e=f&g", true), "a%20b%2Bc%25d%40e%3Df%26g");
  EXPECT_EQ(UriEncode("dir/sub/x", false), "dir/sub/x");
  EXPECT_EQ(UriEncode("dir/sub/x", true), "dir%2Fsub%2Fx");
  EXPECT_EQ(UriEncode("\xc3\xbc", false), "%C3%BC");  // UTF-8 bytes one by one
  EXPECT_EQ(UriEncode(std::string("\0\xff", 2), false), "%00%FF");
}

TEST(CanonicalQuery, SortsByEncodedNameAndKeepsEmptyValues) {
  EXPECT_EQ(CanonicalQueryString({{"uploads", ""}}), "uploads=");
  EXPECT_EQ(CanonicalQueryString({{"uploadId", "a/b+c"}, {"partNumber", "3"}}),
            "partNumber=3&uploadId=a%2Fb%2Bc");
}

TEST(AmzDate, FormatsUtc) { EXPECT_EQ(AmzDate(1369353600), kDate); }

TEST(Url, PathStyleAndVirtualHosted) {
  Result<Endpoint> ep = ParseEndpoint("http://127.0.0.1:7480", false);
  ASSERT_TRUE(ep.ok());
  RequestTarget t = BuildTarget(*ep, "bkt", true, "a b/c", {{"uploads", ""}});
  EXPECT_EQ(t.url, "http://127.0.0.1:7480/bkt/a%20b/c?uploads=");
  EXPECT_EQ(t.host, "127.0.0.1:7480");
  EXPECT_EQ(t.canonical_uri, "/bkt/a%20b/c");
  t = BuildTarget(*ep, "bkt", true, "", {});
  EXPECT_EQ(t.url, "http://127.0.0.1:7480/bkt");

  ep = ParseEndpoint("https://s3.amazonaws.com:443/", false);
  ASSERT_TRUE(ep.ok());
  t = BuildTarget(*ep, "examplebucket", false, "test$file.text", {});
  EXPECT_EQ(t.url, "https://examplebucket.s3.amazonaws.com/test%24file.text");
  EXPECT_EQ(t.host, "examplebucket.s3.amazonaws.com");
  EXPECT_EQ(t.canonical_uri, "/test%24file.text");
  t = BuildTarget(*ep, "examplebucket", false, "", {{"list-type", "2"}});
  EXPECT_EQ(t.url, "https://examplebucket.s3.amazonaws.com/?list-type=2");
}

TEST(Url, EndpointSchemes) {
  EXPECT_EQ(ParseEndpoint("minio:9000", true)->ToString(), "http://minio:9000");
  EXPECT_EQ(ParseEndpoint("minio:9000", false)->ToString(), "https://minio:9000");
  EXPECT_EQ(ParseEndpoint("ftp://x", false).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEndpoint("http://", false).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvfs::s3
