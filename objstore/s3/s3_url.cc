#include "objstore/s3/s3_url.h"

namespace kvfs::s3 {

std::string RedactEndpoint(const std::string& endpoint) {
  const size_t sep = endpoint.find("://");
  const size_t start = sep == std::string::npos ? 0 : sep + 3;
  const size_t end = endpoint.find_first_of("/?#", start);
  const size_t at = endpoint.rfind('@', end == std::string::npos ? std::string::npos : end - 1);
  if (at == std::string::npos || at < start) return endpoint;
  return endpoint.substr(0, start) + "<redacted>" + endpoint.substr(at);
}

Result<Endpoint> ParseEndpoint(const std::string& endpoint, bool disable_tls) {
  Endpoint ep;
  std::string rest = endpoint;
  const size_t sep = rest.find("://");
  if (sep == std::string::npos) {
    ep.scheme = disable_tls ? "http" : "https";
  } else {
    ep.scheme = rest.substr(0, sep);
    for (char& c : ep.scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    rest = rest.substr(sep + 3);
    if (ep.scheme != "http" && ep.scheme != "https") {
      return Status::InvalidArgument("S3 endpoint '" + RedactEndpoint(endpoint) +
                                     "': scheme must be http:// or https://");
    }
  }
  const size_t slash = rest.find('/');
  ep.host = rest.substr(0, slash);
  if (slash != std::string::npos) {
    ep.base_path = rest.substr(slash);
    while (!ep.base_path.empty() && ep.base_path.back() == '/') ep.base_path.pop_back();
  }
  if (ep.host.empty() || ep.host.find_first_of("?#@ ") != std::string::npos) {
    return Status::InvalidArgument(
        "S3 endpoint '" + RedactEndpoint(endpoint) + "' has no usable host name" +
        (ep.host.find('@') != std::string::npos ? " (user:password@ is not supported: give keys as "
                                                  "credentials)"
                                                : ""));
  }
  // curl omits default ports from the Host header; so do we, since Host is signed.
  const std::string default_port = ep.scheme == "https" ? ":443" : ":80";
  if (ep.host.size() > default_port.size() &&
      ep.host.compare(ep.host.size() - default_port.size(), default_port.size(), default_port) ==
          0 &&
      ep.host.back() != ']') {
    ep.host.resize(ep.host.size() - default_port.size());
  }
  return ep;
}

RequestTarget BuildTarget(const Endpoint& ep, const std::string& bucket, bool path_style,
                          const std::string& key, const KeyValues& query) {
  RequestTarget t;
  t.host = path_style ? ep.host : bucket + "." + ep.host;
  t.canonical_uri = ep.base_path;
  if (path_style) t.canonical_uri += "/" + UriEncode(bucket, true);
  // Bucket-level requests go to "/bucket" (path style) or "/" (virtual-hosted).
  if (!key.empty() || !path_style) t.canonical_uri += "/" + UriEncode(key, false);
  t.url = ep.scheme + "://" + t.host + t.canonical_uri;
  const std::string q = CanonicalQueryString(query);
  if (!q.empty()) t.url += "?" + q;
  return t;
}

std::string S3Uri(const std::string& bucket, const std::string& key) {
  return key.empty() ? "s3://" + bucket : "s3://" + bucket + "/" + key;
}

}  // namespace kvfs::s3
