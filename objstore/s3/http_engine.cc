#include "objstore/s3/http_engine.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"

namespace kvfs::s3 {
namespace {

// curl_global_init is not thread-safe in every libcurl build; run it exactly once.
CURLcode GlobalInitOnce() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  return rc;
}

}  // namespace

Result<std::unique_ptr<HttpEngine>> HttpEngine::Create(const Options& options) {
  const CURLcode rc = GlobalInitOnce();
  if (rc != CURLE_OK) {
    return Status::Internal(std::string("curl_global_init failed: ") + curl_easy_strerror(rc));
  }
  std::unique_ptr<HttpEngine> engine(new HttpEngine(options));
  if (engine->multi_ == nullptr) return Status::Internal("curl_multi_init failed");
  engine->thread_ = std::thread([e = engine.get()] { e->Loop(); });
  return engine;
}

HttpEngine::HttpEngine(const Options& options)
    : options_(options), clock_(options.clock ? options.clock : Clock::Real()) {
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return;
  curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                    static_cast<long>(std::max(1, options_.max_connections)));
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS,
                    static_cast<long>(std::max(1, options_.max_connections)));
  curl_multi_setopt(multi_, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
}

void HttpEngine::Shutdown() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (multi_ != nullptr) curl_multi_wakeup(multi_);
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

HttpEngine::~HttpEngine() {
  Shutdown();
  for (CURL* e : idle_handles_) curl_easy_cleanup(e);
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
}

void HttpEngine::Submit(std::unique_ptr<HttpExchange> ex) {
  {
    MutexLock lock(&mu_);
    if (!stopping_) {
      submitted_.push_back(std::move(ex));
      ex = nullptr;
    }
  }
  if (ex) {
    ex->cancelled = true;
    auto done = std::move(ex->done);
    done(std::move(ex));
    return;
  }
  curl_multi_wakeup(multi_);
}

void HttpEngine::RunAfter(int64_t delay_ms, std::function<void()> fn) {
  {
    MutexLock lock(&mu_);
    if (!stopping_) {
      timers_.push_back(
          {clock_->NowMs() + std::max<int64_t>(0, delay_ms), timer_seq_++, std::move(fn)});
      std::push_heap(timers_.begin(), timers_.end(), TimerLater());
      fn = nullptr;
    }
  }
  if (fn) {
    fn();
    return;
  }
  curl_multi_wakeup(multi_);
}

CURL* HttpEngine::TakeEasyHandle() {
  if (idle_handles_.empty()) return curl_easy_init();
  CURL* e = idle_handles_.back();
  idle_handles_.pop_back();
  curl_easy_reset(e);
  return e;
}

void HttpEngine::StartTransfer(std::unique_ptr<HttpExchange> ex) {
  CURL* e = TakeEasyHandle();
  HttpExchange* x = ex.get();
  SetUpTransfer(e, x, options_, clock_);

  const CURLMcode mrc = curl_multi_add_handle(multi_, e);
  running_.emplace(e, std::move(ex));
  if (mrc != CURLM_OK) FinishTransfer(e, CURLE_FAILED_INIT);
}

void HttpEngine::FinishTransfer(CURL* easy, CURLcode result) {
  auto it = running_.find(easy);
  if (it == running_.end()) return;
  std::unique_ptr<HttpExchange> ex = std::move(it->second);
  running_.erase(it);
  curl_multi_remove_handle(multi_, easy);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &ex->http_status);
  ex->curl_code = result;
  if (result != CURLE_OK) {
    ex->curl_error = ex->error_buffer[0] ? ex->error_buffer : curl_easy_strerror(result);
  }
  curl_slist_free_all(ex->header_list);
  ex->header_list = nullptr;
  ex->easy = nullptr;
  idle_handles_.push_back(easy);
  auto done = std::move(ex->done);
  done(std::move(ex));
}

void HttpEngine::ExpireWaiting() {
  if (waiting_.empty()) return;
  const int64_t now = clock_->NowMs();
  std::deque<std::unique_ptr<HttpExchange>> keep;
  std::vector<std::unique_ptr<HttpExchange>> expired;
  for (auto& ex : waiting_) {
    if (ex->deadline_ms > 0 && ex->deadline_ms <= now) {
      expired.push_back(std::move(ex));
    } else {
      keep.push_back(std::move(ex));
    }
  }
  waiting_.swap(keep);
  for (auto& ex : expired) {
    ex->curl_code = CURLE_OPERATION_TIMEDOUT;
    ex->curl_error = "not sent: its deadline passed while it waited for one of the " +
                     std::to_string(options_.max_inflight) + " transfer slots (max_inflight)";
    auto done = std::move(ex->done);
    done(std::move(ex));
  }
}

void HttpEngine::Loop() {
  // Named so that `top -H` and perf tell the loops (which receive and checksum every byte) apart.
  pthread_setname_np(pthread_self(), "kvfs-http");
  std::vector<std::function<void()>> due;
  for (;;) {
    bool more_submitted = false;
    int64_t next_timer_ms = -1;
    {
      MutexLock lock(&mu_);
      if (stopping_) break;
      while (!submitted_.empty()) {
        waiting_.push_back(std::move(submitted_.front()));
        submitted_.pop_front();
      }
      const int64_t now = clock_->NowMs();
      while (!timers_.empty() && timers_.front().when_ms <= now) {
        std::pop_heap(timers_.begin(), timers_.end(), TimerLater());
        due.push_back(std::move(timers_.back().fn));
        timers_.pop_back();
      }
      if (!timers_.empty()) next_timer_ms = timers_.front().when_ms - now;
    }
    for (auto& fn : due) fn();
    due.clear();

    ExpireWaiting();
    while (!waiting_.empty() && static_cast<int>(running_.size()) < options_.max_inflight) {
      std::unique_ptr<HttpExchange> ex = std::move(waiting_.front());
      waiting_.pop_front();
      StartTransfer(std::move(ex));
    }

    int still_running = 0;
    curl_multi_perform(multi_, &still_running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
      if (msg->msg == CURLMSG_DONE) FinishTransfer(msg->easy_handle, msg->data.result);
    }

    {
      MutexLock lock(&mu_);
      more_submitted = !submitted_.empty() || stopping_;
    }
    // Callbacks above may have queued work: loop again without waiting.
    if (more_submitted ||
        (!waiting_.empty() && static_cast<int>(running_.size()) < options_.max_inflight)) {
      continue;
    }
    int timeout_ms = 1000;
    if (next_timer_ms >= 0)
      timeout_ms = static_cast<int>(std::min<int64_t>(timeout_ms, next_timer_ms));
    curl_multi_poll(multi_, nullptr, 0, timeout_ms, nullptr);
  }
  CancelEverything();
}

void HttpEngine::CancelEverything() {
  auto cancel = [](std::unique_ptr<HttpExchange> ex) {
    ex->cancelled = true;
    auto done = std::move(ex->done);
    done(std::move(ex));
  };
  while (!running_.empty()) {
    CURL* easy = running_.begin()->first;
    std::unique_ptr<HttpExchange> ex = std::move(running_.begin()->second);
    running_.erase(running_.begin());
    curl_multi_remove_handle(multi_, easy);
    curl_slist_free_all(ex->header_list);
    ex->header_list = nullptr;
    ex->easy = nullptr;
    idle_handles_.push_back(easy);
    cancel(std::move(ex));
  }
  // Cancelled callbacks and timers may queue more work; Submit/RunAfter now handle it inline, but
  // anything that got in before stopping_ was set is drained here.
  for (;;) {
    std::deque<std::unique_ptr<HttpExchange>> queued;
    std::vector<Timer> timers;
    {
      MutexLock lock(&mu_);
      queued.swap(submitted_);
      timers.swap(timers_);
    }
    while (!waiting_.empty()) {
      queued.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
    if (queued.empty() && timers.empty()) break;
    for (auto& ex : queued) cancel(std::move(ex));
    for (auto& t : timers) t.fn();
  }
}

}  // namespace kvfs::s3
