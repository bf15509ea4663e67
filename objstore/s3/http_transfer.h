// How one HttpExchange becomes a curl transfer: the options set on its easy handle (URL, TLS,
// time limits, method, headers) and the callbacks that move the bytes between curl and the
// exchange (response headers, body or sink, request body from memory or a file, rewinds).
// HttpEngine (http_engine.h) runs the transfers.
//
// Thread-compatible: an exchange is set up and driven by one thread, the engine's loop.
#pragma once

#include <curl/curl.h>

#include <string>

#include "objstore/s3/backoff.h"
#include "objstore/s3/http_exchange.h"

namespace kvfs::s3 {

// The connection settings every transfer of an engine shares (HttpEngine::Options has them).
struct TransferSettings {
  bool verify_tls = true;
  std::string ca_bundle;  // CURLOPT_CAINFO when non-empty
  bool prefer_http2 = false;
};

// Sets up `easy` (fresh or reset) for `x` and points x->easy at it; x keeps the header list it
// sets (x->header_list). The time limit is what is left of x->deadline_ms at clock->NowMs().
void SetUpTransfer(CURL* easy, HttpExchange* x, const TransferSettings& settings, Clock* clock);

}  // namespace kvfs::s3
