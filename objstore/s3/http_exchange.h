// HttpExchange: one HTTP request and its response, as the S3 client fills it and HttpEngine
// (http_engine.h) runs it, with the bounds on the bodies collected in memory.
//
// Thread-compatible: an exchange belongs to one thread at a time - its caller until Submit(),
// then the engine's loop thread, then its `done` callback.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "objstore/object_store.h"

namespace kvfs::s3 {

// Bounds on the bodies the engine collects in memory (HttpExchange::body): a 2xx document is an XML
// listing or multipart reply (a 1000-key listing of 1024-byte URL-encoded keys stays under 4 MiB),
// an error document is a few hundred bytes. Past the bound the transfer is aborted with
// body_overflow set, so a server sending an object or garbage costs at most this much memory.
inline constexpr size_t kMaxCollectedBodyBytes = 8 << 20;
inline constexpr size_t kMaxErrorBodyBytes = 64 << 10;

// One HTTP request and its response. The caller fills the request part, the engine the response
// part, then hands the whole object to `done` on the loop thread.
struct HttpExchange {
  // ---- request
  std::string method;  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  Body upload;                       // body of PUT / POST (memory or pread from a file)
  bool has_upload = false;
  // Receives the body of a 2xx response, chunk by chunk, straight from curl's buffer (no copy).
  // Return false to abort the transfer. When unset, the body is collected into `body`.
  std::function<bool(const char* data, size_t n)> sink;
  int64_t connect_timeout_ms = 5000;
  int64_t stall_timeout_ms = 10000;  // aborted when no byte moves for this long
  int64_t total_timeout_ms = 0;      // 0: none
  // Engine-clock time by which the exchange must end, waiting in the queue included: one that
  // is still queued then ends with CURLE_OPERATION_TIMEDOUT without being sent, and a running
  // transfer's timeout is clipped to it. 0: none.
  int64_t deadline_ms = 0;

  // ---- response
  long http_status = 0;                                 // 0 if no response arrived
  std::map<std::string, std::string> response_headers;  // lower-case names
  std::string body;            // collected body (non-sink responses and every error response)
  int curl_code = CURLE_OK;    // transfer result
  std::string curl_error;      // curl's error text when curl_code != CURLE_OK
  bool cancelled = false;      // the engine shut down before the transfer finished
  bool sink_refused = false;   // the sink returned false
  bool body_overflow = false;  // collected body exceeded its bound (kMax*BodyBytes)
  std::string upload_error;    // reading the upload body failed (pread)
  uint64_t sink_bytes = 0;     // bytes handed to the sink

  std::function<void(std::unique_ptr<HttpExchange>)> done;

  // ---- engine internals (loop thread only)
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  uint64_t upload_pos = 0;
  char error_buffer[CURL_ERROR_SIZE] = {0};

  std::string Header(const std::string& lower_name) const {
    auto it = response_headers.find(lower_name);
    return it == response_headers.end() ? "" : it->second;
  }
};

}  // namespace kvfs::s3
