// AWS Signature Version 4 for S3 requests, on OpenSSL. Pure functions, thread-safe.
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvfs::s3 {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// SHA-256 of the empty string: the payload hash of requests without a body.
inline constexpr char kEmptySha256[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// Payload hash for bodies we do not hash: hashing an 80 MiB chunk before sending it would read it
// twice. S3 still checks the body length; integrity on the wire is TCP's/TLS's job.
inline constexpr char kUnsignedPayload[] = "UNSIGNED-PAYLOAD";

std::string Sha256Hex(std::string_view data);
std::string HexEncode(const unsigned char* p, size_t n);

// Percent-encodes every byte except the unreserved characters A-Z a-z 0-9 - . _ ~ (and '/' when
// !encode_slash), upper-case hex, as SigV4 and S3 require. Keys are encoded with
// encode_slash=false; query names and values with encode_slash=true.
std::string UriEncode(std::string_view s, bool encode_slash);

// "20130524T000000Z" for a Unix time (UTC).
std::string AmzDate(std::time_t t);

// The canonical query string: names and values encoded, sorted by name then value, joined by '&'
// ("uploads" becomes "uploads="). Also used as the query of the URL actually sent, so the server
// sees exactly what was signed.
std::string CanonicalQueryString(const KeyValues& query);

struct SigV4Request {
  std::string method;         // "GET"
  std::string canonical_uri;  // the encoded path as sent: "/bucket/test%24file.text"
  KeyValues query;            // raw (unencoded) names and values
  KeyValues headers;          // headers to sign, any case; must include host and x-amz-date
  std::string payload_hash;   // hex SHA-256 of the body, kEmptySha256 or kUnsignedPayload
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "host;range;x-amz-content-sha256;x-amz-date"
  std::string signature;       // hex
  std::string authorization;   // value of the Authorization header
};

// amz_date is the x-amz-date value ("20130524T000000Z"); service is "s3".
SigV4Signature SignV4(const SigV4Request& req, const std::string& access_key_id,
                      const std::string& secret_access_key, const std::string& region,
                      const std::string& service, const std::string& amz_date);

}  // namespace kvfs::s3
