// One blocking HTTP exchange, for the few requests that stand apart from the S3 data path:
// credential endpoints (instance metadata, container credentials, STS, CreateSession) and the
// bucket-region probe. No pool, short timeouts and no retries here: their callers retry.
// Thread-safe (each call has its own curl handle).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace kvfs::s3 {

struct SimpleHttpRequest {
  std::string method = "GET";  // GET, PUT, POST, HEAD
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  long timeout_ms = 2000;
  bool direct = false;  // never through an HTTP proxy (link-local metadata services, as the SDKs)
  std::string ca_bundle;
  bool verify_tls = true;
};

struct SimpleHttpAnswer {
  long code = 0;
  std::string body;                            // at most 1 MiB: these answers are a few KiB
  std::map<std::string, std::string> headers;  // names in lower case
};

// kUnavailable naming the method and URL when no HTTP answer came back.
Result<SimpleHttpAnswer> SimpleHttp(const SimpleHttpRequest& req);

}  // namespace kvfs::s3
