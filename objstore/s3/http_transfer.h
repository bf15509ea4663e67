// How one HttpExchange becomes a curl transfer: the options set on its easy handle (URL, TLS,
// time limits, method, headers) and the callbacks that move the bytes between curl and the
// exchange (response headers, body or sink, request body from memory or a file, rewinds).
// HttpEngine (http_engine.h) runs the transfers.
//
// Thread-compatible: an exchange is set up and driven by one thread, the engine's loop.
#pragma once

#include <curl/curl.h>

#include "objstore/s3/http_engine.h"

namespace kvfs::s3 {

// Sets up `easy` (fresh or reset) for `x` and points x->easy at it; x keeps the header list it
// sets (x->header_list). The time limit is what is left of x->deadline_ms at clock->NowMs().
void SetUpTransfer(CURL* easy, HttpExchange* x, const HttpEngine::Options& options, Clock* clock);

}  // namespace kvfs::s3
