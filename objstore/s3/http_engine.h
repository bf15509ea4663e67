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
#include "objstore/s3/http_exchange.h"
#include "objstore/s3/http_transfer.h"

namespace kvfs::s3 {

class HttpEngine {
 public:
  // The transfers' connection settings (verify_tls, ca_bundle, prefer_http2), and the engine's.
  struct Options : TransferSettings {
    int max_inflight = 64;     // transfers running at once; the rest wait in a queue
    int max_connections = 64;  // kept-alive connections in the pool
    Clock* clock = nullptr;    // for timers; Clock::Real() when null
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
