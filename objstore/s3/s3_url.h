// Endpoint parsing and URL building for path-style and virtual-hosted S3 addressing.
// Pure functions, thread-safe.
#pragma once

#include <string>

#include "objstore/s3/sigv4.h"
#include "base/status.h"

namespace kvfs::s3 {

struct Endpoint {
  std::string scheme;     // "http" or "https"
  std::string host;       // host[:port], default ports removed: what the Host header carries
  std::string base_path;  // path prefix of the endpoint without trailing '/', usually ""

  std::string ToString() const { return scheme + "://" + host + base_path; }
};

// "https://s3.amazonaws.com", "http://127.0.0.1:7480", "minio:9000" (scheme from disable_tls).
// kInvalidArgument naming the value when it cannot be used.
Result<Endpoint> ParseEndpoint(const std::string& endpoint, bool disable_tls);

struct RequestTarget {
  std::string url;            // what curl fetches
  std::string host;           // Host header (signed)
  std::string canonical_uri;  // encoded path (signed)
};

// key "" addresses the bucket itself. The query is encoded exactly as CanonicalQueryString does.
RequestTarget BuildTarget(const Endpoint& ep, const std::string& bucket, bool path_style,
                          const std::string& key, const KeyValues& query);

// "s3://bucket/key" (or "s3://bucket") for messages.
std::string S3Uri(const std::string& bucket, const std::string& key);

}  // namespace kvfs::s3
