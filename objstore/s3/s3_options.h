// Settings of the S3 client. Filled by the daemon's config (src/config) and by tests; the S3
// layer never reads YAML or the command line itself.
#pragma once

#include <cstdint>
#include <string>

namespace kvfs {

// How a conditional create (PutOptions::if_none_match) is carried out.
enum class ConditionalCreateMode {
  kHeader,     // send If-None-Match: * and trust the server's 412 (AWS S3 since 2024, MinIO)
  kHeadCheck,  // HEAD first, then an unconditional PUT: a small race window, works everywhere
  kAuto,       // kHeader, but a 412 on a key that HEAD then reports absent falls back to a plain
               // PUT (Ceph RGW 16 answers 412 on new keys)
};

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;  // never logged
  std::string session_token;      // never logged; empty if none
  std::string source;             // where they came from, for messages: "config", "environment",
                                  // "profile default in ~/.aws/credentials"
};

struct S3Options {
  std::string bucket;
  std::string endpoint;  // "https://s3.us-east-1.amazonaws.com", "http://127.0.0.1:7480";
                         // empty: AWS_ENDPOINT_URL, else AWS's regional endpoint
  std::string region = "us-east-1";
  bool path_style = true;    // false: virtual-hosted (bucket.host)
  bool disable_tls = false;  // use http:// when the endpoint has no scheme
  bool verify_tls = true;    // TLS peer and host verification (on unless asked)
  std::string ca_bundle;     // empty: AWS_CA_BUNDLE, else the system's store
  bool s3express = false;    // S3 Express One Zone (directory buckets)
  // No region was given: ask the bucket (an unsigned HEAD answers with x-amz-bucket-region on
  // AWS) before the first request, and use its region. Servers that do not say keep `region`.
  bool discover_region = false;
  bool prefer_http2 = false;  // ask for h2 via ALPN; falls back to HTTP/1.1

  // Credentials given explicitly (config file). When empty they are resolved from the
  // environment, then AWS_PROFILE / default in the shared credentials and config files.
  S3Credentials credentials;
  std::string profile;  // empty: AWS_PROFILE, else "default"
  // A profile's credential_process that has not answered after this long is killed with its
  // process group and the fetch fails naming this setting (the AWS CLI waits forever).
  int credential_process_timeout_secs = 60;

  int max_inflight = 64;     // requests in flight at once (curl multi handles)
  int max_connections = 64;  // kept-alive connections in the pool
  // HTTP loop threads: calls are spread over them, each with its share of max_inflight and
  // max_connections, so receiving and checksumming bytes is not bound to one core.
  int http_loops = 2;
  int connect_timeout_ms = 5000;      // TCP + TLS connect
  int stall_timeout_ms = 10000;       // a transfer with no progress for this long is aborted
  int operation_timeout_ms = 100000;  // overall per operation, retries included
                                      // (LMCache's blocking_timeout_secs)
  int max_attempts = 5;               // attempts per request (1 = no retries)
  int backoff_base_ms = 50;           // first retry waits ~base, doubling, with full jitter
  int backoff_max_ms = 5000;
  // Circuit breaker (objstore/s3/circuit_breaker.h): after this many consecutive connection
  // failures or timeouts, requests fail at once for circuit_breaker_cooldown_ms, then one probe
  // goes out. 0: off.
  int circuit_breaker_failures = 5;
  int circuit_breaker_cooldown_ms = 5000;
  ConditionalCreateMode conditional_create = ConditionalCreateMode::kAuto;
};

}  // namespace kvfs
