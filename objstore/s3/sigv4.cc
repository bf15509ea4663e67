#include "objstore/s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

#include "base/percent_encoding.h"

namespace kvfs::s3 {
namespace {

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string ToLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Canonical header values: leading/trailing spaces removed, inner runs of spaces collapsed.
std::string TrimValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string HexEncode(const unsigned char* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[p[i] >> 4];
    out[2 * i + 1] = kHex[p[i] & 15];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return HexEncode(md, sizeof(md));
}

std::string UriEncode(std::string_view s, bool encode_slash) {
  // SigV4: unreserved characters stay; '/' stays in paths (object keys), not in query values.
  return PercentEncode(s, [encode_slash](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
           (c == '/' && !encode_slash);
  });
}

std::string AmzDate(std::time_t t) {
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[20];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string CanonicalQueryString(const KeyValues& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  enc.reserve(query.size());
  for (const auto& [k, v] : query) enc.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out.push_back('&');
    out += k;
    out.push_back('=');
    out += v;
  }
  return out;
}

SigV4Signature SignV4(const SigV4Request& req, const std::string& access_key_id,
                      const std::string& secret_access_key, const std::string& region,
                      const std::string& service, const std::string& amz_date) {
  SigV4Signature sig;
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(req.headers.size());
  for (const auto& [k, v] : req.headers) headers.emplace_back(ToLower(k), TrimValue(v));
  std::sort(headers.begin(), headers.end());

  std::string canonical_headers;
  for (const auto& [k, v] : headers) {
    canonical_headers += k + ":" + v + "\n";
    if (!sig.signed_headers.empty()) sig.signed_headers.push_back(';');
    sig.signed_headers += k;
  }
  sig.canonical_request = req.method + "\n" + req.canonical_uri + "\n" +
                          CanonicalQueryString(req.query) + "\n" + canonical_headers + "\n" +
                          sig.signed_headers + "\n" + req.payload_hash;

  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  sig.string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(sig.canonical_request);

  std::string key = Hmac("AWS4" + secret_access_key, date);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string mac = Hmac(key, sig.string_to_sign);
  sig.signature = HexEncode(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  sig.authorization = "AWS4-HMAC-SHA256 Credential=" + access_key_id + "/" + scope +
                      ",SignedHeaders=" + sig.signed_headers + ",Signature=" + sig.signature;
  return sig;
}

}  // namespace kvfs::s3
