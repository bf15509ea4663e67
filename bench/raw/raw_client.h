// The operations the raw store limit measures, with no filesystem in between. Two
// implementations: kvfs's own S3 client (objstore/s3) and a plain libcurl client used while the
// kvfs client is not available.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace kvbench {

struct RawConfig {
  std::string endpoint;  // http://127.0.0.1:7480
  std::string bucket;
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;  // never printed
};

// One worker's connection to the store. Not thread-safe: each worker thread owns one.
class RawClient {
 public:
  virtual ~RawClient() = default;
  // One whole-object PUT.
  virtual kvfs::Status Put(const std::string& key, const char* data, uint64_t n) = 0;
  // Reads [0, size) into dst as ranged GETs of `part` bytes, all in flight at once.
  virtual kvfs::Status Get(const std::string& key, char* dst, uint64_t size, uint64_t part) = 0;
  // HEAD: true if the key exists.
  virtual kvfs::Result<bool> Exists(const std::string& key) = 0;
};

using RawClientFactory = std::function<std::unique_ptr<RawClient>()>;

// libcurl easy/multi handles, SigV4 by libcurl (CURLOPT_AWS_SIGV4).
RawClientFactory CurlClientFactory(const RawConfig& cfg);

// kvfs's S3 store (NewS3Store), shared by all workers. Fails (e.g. kNotSupported) when the
// store cannot be created; `description` names the client for the results.
kvfs::Result<RawClientFactory> StoreClientFactory(const RawConfig& cfg);

}  // namespace kvbench
