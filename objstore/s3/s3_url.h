// Endpoint parsing and URL building for path-style and virtual-hosted S3 addressing.
// Pure functions, thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "objstore/s3/sigv4.h"

namespace kvfs::s3 {

struct Endpoint {
  std::string scheme;     // "http" or "https"
  std::string host;       // host[:port], default ports removed: what the Host header carries
  std::string base_path;  // path prefix of the endpoint without trailing '/', usually ""

  std::string ToString() const { return scheme + "://" + host + base_path; }
};

// `endpoint` as it may be shown: userinfo ("http://user:secret@host") replaced by "<redacted>@".
// kvfs never sends userinfo (credentials are signed keys), but users paste such URLs, and the
// password must not reach messages, logs or --dump-config.
std::string RedactEndpoint(const std::string& endpoint);

// "https://s3.amazonaws.com", "http://127.0.0.1:7480", "minio:9000" (scheme from disable_tls).
// kInvalidArgument naming the value (redacted) when it cannot be used.
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
