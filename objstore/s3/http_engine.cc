#include "objstore/s3/http_engine.h"

#include <spdlog/spdlog.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/posix_io.h"

namespace kvfs::s3 {
namespace {

// curl_global_init is not thread-safe in every libcurl build; run it exactly once.
CURLcode GlobalInitOnce() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  return rc;
}

size_t OnHeader(char* buf, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const size_t len = size * n;
  std::string_view line(buf, len);
  if (line.starts_with("HTTP/")) {
    ex->response_headers.clear();  // a new response (e.g. after "100 Continue")
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  ex->response_headers[name] = std::string(value);
  return len;
}

size_t OnWrite(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &code);
  ex->http_status = code;  // the sink looks at it (and at the headers) on its first call
  if (code >= 200 && code < 300 && ex->sink) {
    if (!ex->sink(data, len)) {
      ex->sink_refused = true;
      return 0;  // aborts with CURLE_WRITE_ERROR
    }
    ex->sink_bytes += len;
    return len;
  }
  const size_t bound = code >= 200 && code < 300 ? kMaxCollectedBodyBytes : kMaxErrorBodyBytes;
  if (ex->body.size() + len > bound) {
    ex->body_overflow = true;
    return 0;
  }
  ex->body.append(data, len);
  return len;
}

size_t OnRead(char* buf, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const uint64_t remain = ex->upload.length - std::min(ex->upload_pos, ex->upload.length);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(remain, size * n));
  if (want == 0) return 0;
  if (ex->upload.data != nullptr) {
    std::memcpy(buf, ex->upload.data + ex->upload_pos, want);
    ex->upload_pos += want;
    return want;
  }
  Status st = PreadExact(ex->upload.fd, buf, want, ex->upload.offset + ex->upload_pos,
                         "the upload body file");
  if (!st.ok()) {
    ex->upload_error = st.message();
    return CURL_READFUNC_ABORT;
  }
  ex->upload_pos += want;
  return want;
}

// curl rewinds the body when it must resend it (e.g. a connection that died before the request
// went out on a reused connection).
int OnSeek(void* user, curl_off_t offset, int origin) {
  auto* ex = static_cast<HttpExchange*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > ex->upload.length) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  ex->upload_pos = static_cast<uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
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
  x->easy = e;
  x->upload_pos = 0;
  curl_easy_setopt(e, CURLOPT_URL, x->url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, x);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);  // keys may contain "./" or "//": send as signed
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->error_buffer);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                   options_.prefer_http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
  if (!options_.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_bundle.c_str());
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(x->connect_timeout_ms));
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(1, (x->stall_timeout_ms + 999) / 1000)));
  int64_t timeout_ms = x->total_timeout_ms;
  if (x->deadline_ms > 0) {
    // What is left of the deadline after the wait in the queue (at least 1 ms: 0 means none).
    const int64_t left = std::max<int64_t>(1, x->deadline_ms - clock_->NowMs());
    timeout_ms = timeout_ms > 0 ? std::min(timeout_ms, left) : left;
  }
  if (timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  }
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);

  if (x->method == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else if (x->method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (x->method == "PUT") {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(x->has_upload ? x->upload.length : 0));
  } else if (x->method == "POST") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(x->has_upload ? x->upload.length : 0));
  } else {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method.c_str());
  }
  if (x->method == "PUT" || x->method == "POST") {
    if (!x->has_upload) x->upload = Body::FromMemory("", 0);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, OnSeek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
  }

  // "Expect:" disables 100-continue (an extra round trip per upload); empty Accept and
  // Content-Type keep curl from adding headers the signature does not cover.
  curl_slist* list = nullptr;
  bool has_expect = false;
  for (const std::string& h : x->headers) {
    list = curl_slist_append(list, h.c_str());
    has_expect = has_expect || strncasecmp(h.c_str(), "expect:", 7) == 0;
  }
  if (!has_expect) list = curl_slist_append(list, "Expect:");
  list = curl_slist_append(list, "Accept:");
  if (x->method == "POST") list = curl_slist_append(list, "Content-Type:");
  x->header_list = list;
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);

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
