// HttpEngine: one libcurl multi loop on a dedicated thread that runs many HTTP transfers at once
// over kept-alive connections, plus timers (for retry back-off) on the same thread.
//
// Thread-safety: Submit() and RunAfter() may be called from any thread, including from callbacks
// on the loop thread. Everything else is private to the loop thread. Completion callbacks and
// timers run on the loop thread; they must not block.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "objstore/object_store.h"
#include "objstore/s3/backoff.h"

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

class HttpEngine {
 public:
  struct Options {
    int max_inflight = 64;     // transfers running at once; the rest wait in a queue
    int max_connections = 64;  // kept-alive connections in the pool
    bool verify_tls = true;
    std::string ca_bundle;  // CURLOPT_CAINFO when non-empty
    bool prefer_http2 = false;
    Clock* clock = nullptr;  // for timers; Clock::Real() when null
  };

  // Initialises libcurl (once per process) and starts the loop thread.
  static Result<std::unique_ptr<HttpEngine>> Create(const Options& options);
  // Cancels every queued, running and scheduled transfer (their `done` runs with cancelled=true,
  // timers run so their owners can notice), then joins the loop thread. Idempotent; the engine
  // object stays valid (Submit/RunAfter keep working, cancelling inline) until destroyed.
  void Shutdown() EXCLUDES(mu_);
  ~HttpEngine();  // Shutdown(), then frees the curl handles

  HttpEngine(const HttpEngine&) = delete;
  HttpEngine& operator=(const HttpEngine&) = delete;

  // Queues a transfer. After shutdown began, `done` runs at once on the calling thread with
  // cancelled=true.
  void Submit(std::unique_ptr<HttpExchange> ex) EXCLUDES(mu_);
  // Runs `fn` on the loop thread after `delay_ms`. After shutdown began, runs it at once on the
  // calling thread (it will find the engine stopped when it submits).
  void RunAfter(int64_t delay_ms, std::function<void()> fn) EXCLUDES(mu_);

  Clock* clock() const { return clock_; }

 private:
  struct Timer {
    int64_t when_ms;
    uint64_t seq;  // FIFO among equal times
    std::function<void()> fn;
  };
  struct TimerLater {
    bool operator()(const Timer& a, const Timer& b) const {
      return a.when_ms != b.when_ms ? a.when_ms > b.when_ms : a.seq > b.seq;
    }
  };

  explicit HttpEngine(const Options& options);
  void Loop() EXCLUDES(mu_);
  void StartTransfer(std::unique_ptr<HttpExchange> ex);
  void FinishTransfer(CURL* easy, CURLcode result);
  // Ends the queued exchanges whose deadline has passed (CURLE_OPERATION_TIMEDOUT, never sent).
  void ExpireWaiting();
  void CancelEverything() EXCLUDES(mu_);
  CURL* TakeEasyHandle();

  const Options options_;
  Clock* const clock_;

  Mutex mu_;
  std::deque<std::unique_ptr<HttpExchange>> submitted_ GUARDED_BY(mu_);
  std::vector<Timer> timers_ GUARDED_BY(mu_);  // heap ordered by TimerLater
  uint64_t timer_seq_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;

  // Loop thread only (and the constructor/destructor around it).
  CURLM* multi_ = nullptr;
  std::deque<std::unique_ptr<HttpExchange>> waiting_;  // over max_inflight
  std::unordered_map<CURL*, std::unique_ptr<HttpExchange>> running_;
  std::vector<CURL*> idle_handles_;

  std::thread thread_;
};

}  // namespace kvfs::s3
