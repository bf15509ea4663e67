#include "objstore/s3/s3_client.h"

#include <algorithm>
#include <ctime>
#include <future>

#include "base/deadline.h"
#include "base/log.h"
#include "objstore/s3/credential_sources.h"
#include "objstore/s3/credentials.h"
#include "objstore/s3/simple_http.h"

namespace kvfs::s3 {

void S3Call::SetBody(std::string data) {
  owned_body = std::move(data);
  body = Body::FromMemory(owned_body.data(), owned_body.size());
  has_body = true;
}

S3Client::~S3Client() { Shutdown(); }

void S3Client::Shutdown() {
  for (const auto& e : engines_) e->Shutdown();
}

RequestContext S3Client::Context(const std::string& operation, const std::string& key) const {
  Result<S3Credentials> creds = credentials_->Get();
  return RequestContext{operation,
                        options_.bucket,
                        key,
                        endpoint_.ToString(),
                        creds.ok() ? creds->access_key_id : "",
                        credentials_->source()};
}

void S3Client::Execute(std::shared_ptr<S3Call> call) {
  call->started_ms = clock()->NowMs();
  call->deadline_ms = call->started_ms + std::max(1, options_.operation_timeout_ms);
  call->deadline_source = "operation_timeout_ms=" + std::to_string(options_.operation_timeout_ms);
  // The caller's own deadline (a FUSE request's blocking_timeout), converted to this clock.
  if (const int64_t thread_deadline = ThreadDeadlineMs(); thread_deadline > 0) {
    const int64_t at = call->started_ms + std::max<int64_t>(1, thread_deadline - MonotonicMs());
    if (at < call->deadline_ms) {
      call->deadline_ms = at;
      call->deadline_source = ThreadDeadlineSource();
    }
  }
  call->loop = next_loop_.fetch_add(1, std::memory_order_relaxed) % engines_.size();
  StartAttempt(std::move(call));
}

S3Client::Reply S3Client::ExecuteSync(std::shared_ptr<S3Call> call) {
  std::promise<Reply> promise;
  auto future = promise.get_future();
  auto user_done = std::move(call->done);
  call->done = [&promise, user_done](Status st, std::unique_ptr<HttpExchange> ex) {
    if (user_done) user_done(st, nullptr);
    promise.set_value(Reply{std::move(st), std::move(ex)});
  };
  Execute(std::move(call));
  return future.get();
}

StoreStats S3Client::Stats() const {
  StoreStats s;
  s.requests = requests_.load(std::memory_order_relaxed);
  s.retries = retries_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  s.in_flight = in_flight_.load(std::memory_order_relaxed);
  const CircuitBreaker::Stats b = breaker_.stats();
  s.breaker_opens = b.opens;
  s.breaker_rejected = b.rejected;
  s.breaker_open = b.open ? 1 : 0;
  return s;
}

void S3Client::StartAttempt(std::shared_ptr<S3Call> call) {
  int64_t probe_in_ms = 0;
  if (!breaker_.Allow(clock()->NowMs(), &probe_in_ms)) {
    Status st = Status::Unavailable(
        call->operation + " " + S3Uri(options_.bucket, call->key) + ": S3 endpoint " +
        endpoint_.ToString() + " is not answering (" +
        std::to_string(options_.circuit_breaker_failures) +
        " consecutive connection failures or timeouts); failing fast, next probe in " +
        std::to_string(probe_in_ms) + " ms (circuit_breaker_cooldown_ms=" +
        std::to_string(options_.circuit_breaker_cooldown_ms) + ")");
    // On the loop thread, like every completion: the caller may hold locks its callback takes.
    LoopOf(*call)->RunAfter(0, [this, call, st] { Finish(call, st, nullptr); });
    return;
  }
  // S3 Express: CopyObject (and HeadBucket) are signed with the IAM credentials, every other
  // request with the session's; elsewhere both are the same provider.
  const bool session = options_.s3express && call->operation.rfind("COPY", 0) != 0;
  CredentialProvider* const provider = session ? data_credentials_.get() : credentials_.get();
  Result<S3Credentials> creds = provider->Get();
  if (!creds.ok()) {  // expired and not refreshed: fail, never sign with what we know is stale
    Status st(creds.status().code(), call->operation + " " + S3Uri(options_.bucket, call->key) +
                                         ": " + creds.status().message());
    LoopOf(*call)->RunAfter(0, [this, call, st] { Finish(call, st, nullptr); });
    return;
  }
  ++call->attempts;
  requests_.fetch_add(1, std::memory_order_relaxed);
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  auto ex = std::make_unique<HttpExchange>();
  ex->method = call->method;
  ex->connect_timeout_ms = options_.connect_timeout_ms;
  ex->stall_timeout_ms = options_.stall_timeout_ms;
  ex->total_timeout_ms = std::max<int64_t>(1, call->deadline_ms - clock()->NowMs());
  ex->deadline_ms = call->deadline_ms;
  if (call->has_body) {
    ex->upload = call->body;
    ex->has_upload = true;
  }

  KeyValues headers = call->headers;
  if (call->prepare) call->prepare(&headers, ex.get());

  const RequestTarget target =
      BuildTarget(endpoint_, options_.bucket, options_.path_style, call->key, call->query);
  ex->url = target.url;
  std::string payload_hash = kEmptySha256;
  if (call->has_body && call->body.length > 0) {
    payload_hash = !call->owned_body.empty() ? Sha256Hex(call->owned_body) : kUnsignedPayload;
  }
  const std::string amz_date = AmzDate(std::time(nullptr));
  headers.emplace_back("Host", target.host);
  headers.emplace_back("x-amz-date", amz_date);
  headers.emplace_back("x-amz-content-sha256", payload_hash);
  if (!creds->session_token.empty()) {
    headers.emplace_back(session ? "x-amz-s3session-token" : "x-amz-security-token",
                         creds->session_token);
  }
  SigV4Request sreq{call->method, target.canonical_uri, call->query, headers, payload_hash};
  const SigV4Signature sig =
      SignV4(sreq, creds->access_key_id, creds->secret_access_key, options_.region,
             options_.s3express ? "s3express" : "s3", amz_date);
  for (const auto& [k, v] : headers) ex->headers.push_back(k + ": " + v);
  ex->headers.push_back("Authorization: " + sig.authorization);

  ex->done = [this, call](std::unique_ptr<HttpExchange> done_ex) {
    OnAttemptDone(call, std::move(done_ex));
  };
  LoopOf(*call)->Submit(std::move(ex));
}

Status S3Client::DefaultCheck(const S3Call& call, const HttpExchange& ex) const {
  // Only failures name the request's context (it reads the credentials): built on demand.
  auto ctx = [&] { return Context(call.operation, call.key); };
  if (ex.cancelled) {
    return Status::Cancelled(call.operation + " " + S3Uri(options_.bucket, call.key) +
                             ": the S3 store is shutting down");
  }
  if (!ex.upload_error.empty()) {
    return Status::IoError(call.operation + " " + S3Uri(options_.bucket, call.key) + ": " +
                           ex.upload_error);
  }
  if (ex.body_overflow && ex.http_status >= 200 && ex.http_status < 300) {
    return Status::Internal(call.operation + " " + S3Uri(options_.bucket, call.key) +
                            ": the response body is larger than " +
                            std::to_string(kMaxCollectedBodyBytes >> 20) +
                            " MiB, far more than any S3 document; not read further");
  }
  if (ex.body_overflow) {
    // An error reply with a body past the bound: classified by its status alone (a 503 stays
    // retryable), its document unread.
    S3ErrorDoc doc;
    doc.message =
        "error body larger than " + std::to_string(kMaxErrorBodyBytes >> 10) + " KiB, not read";
    doc.request_id = ex.Header("x-amz-request-id");
    return MapHttpError(static_cast<int>(ex.http_status), doc, ctx());
  }
  if (ex.curl_code != CURLE_OK) {
    if (ex.curl_code == CURLE_OPERATION_TIMEDOUT && clock()->NowMs() + 50 >= call.deadline_ms) {
      return Status::DeadlineExceeded(call.operation + " " + S3Uri(options_.bucket, call.key) +
                                      " at " + endpoint_.ToString() + ": not done within " +
                                      call.deadline_source + " (" + std::to_string(call.attempts) +
                                      " attempts)");
    }
    return MapTransportError(ex.curl_code, ex.curl_error, ctx());
  }
  if (ex.http_status >= 200 && ex.http_status < 300) return Status::OK();
  // AWS names the bucket's region when a request went to the wrong one (301 PermanentRedirect,
  // 400 AuthorizationHeaderMalformed): say so, with the setting that fixes it.
  const std::string bucket_region = ex.Header("x-amz-bucket-region");
  if (!bucket_region.empty() && bucket_region != options_.region) {
    return Status::InvalidArgument(call.operation + " " + S3Uri(options_.bucket, call.key) +
                                   ": the bucket is in region " + bucket_region +
                                   ", not in the configured region " + options_.region +
                                   " (set region: " + bucket_region + ")");
  }
  S3ErrorDoc doc;
  ParseErrorXml(ex.body, &doc);
  if (doc.request_id.empty()) doc.request_id = ex.Header("x-amz-request-id");
  return MapHttpError(static_cast<int>(ex.http_status), doc, ctx());
}

void S3Client::OnAttemptDone(std::shared_ptr<S3Call> call, std::unique_ptr<HttpExchange> ex) {
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  NoteAttempt(*ex);
  Status st = call->check ? call->check(*ex) : DefaultCheck(*call, *ex);
  if (st.ok() || ex->cancelled || st.code() == StatusCode::kCancelled) {
    Finish(call, std::move(st), std::move(ex));
    return;
  }
  if (call->retry && st.retryable()) {
    std::optional<int64_t> delay = policy_->NextDelayMs(st, call->attempts, call->deadline_ms);
    if (delay) {
      LogDebug("s3: {} {} attempt {} failed, retrying in {} ms: {}", call->operation,
               S3Uri(options_.bucket, call->key), call->attempts, *delay, st.ToString());
      retries_.fetch_add(1, std::memory_order_relaxed);
      LoopOf(*call)->RunAfter(*delay, [this, call] { StartAttempt(call); });
      return;
    }
    if (call->attempts < policy_->options().max_attempts &&
        st.code() != StatusCode::kDeadlineExceeded) {
      // Attempts remain but the deadline does not leave room for another one.
      Status dl = Status::DeadlineExceeded(
          st.message() + "; gave up after " + std::to_string(call->attempts) +
          " attempts: " + call->deadline_source + " would pass before the next one");
      dl.SetHttp(st.http_status(), st.s3_code(), st.request_id());
      st = dl;
    } else if (call->attempts > 1 && st.code() != StatusCode::kDeadlineExceeded) {
      st = st.Annotate("after " + std::to_string(call->attempts) + " attempts");
    }
  }
  Finish(call, std::move(st), std::move(ex));
}

void S3Client::NoteAttempt(const HttpExchange& ex) {
  if (ex.cancelled || ex.sink_refused || !ex.upload_error.empty()) {
    breaker_.OnNeutral();
    return;
  }
  switch (ex.curl_code) {
    case CURLE_OK:
      breaker_.OnSuccess();
      return;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      // No answer at all; a reply that broke off mid-body (PARTIAL_FILE) came from a live server.
      if (ex.http_status == 0) {
        breaker_.OnFailure(clock()->NowMs());
      } else {
        breaker_.OnSuccess();
      }
      return;
    default:
      breaker_.OnNeutral();
  }
}

void S3Client::Finish(const std::shared_ptr<S3Call>& call, Status st,
                      std::unique_ptr<HttpExchange> ex) {
  switch (st.code()) {
    case StatusCode::kOk:
    case StatusCode::kNotFound:       // a miss is an answer (lookups of absent chunks)
    case StatusCode::kAlreadyExists:  // a lost conditional create is an answer too
    case StatusCode::kCancelled:
      break;
    default:
      errors_.fetch_add(1, std::memory_order_relaxed);
  }
  auto done = std::move(call->done);
  call->done = nullptr;
  call->prepare = nullptr;  // hooks may capture state that refers back to the call
  call->check = nullptr;
  if (done) done(std::move(st), std::move(ex));
}

// ---------------------------------------------------------------------------------------------
// S3Client::Create: opening a client - the bucket's region when none was given, the endpoint, the
// credential chain (and, for S3 Express directory buckets, the session credentials that sign data
// requests), the retry policy and the HTTP engine. The requests themselves are in s3_client.cc.

namespace {

// The bucket's region as AWS states it: an unsigned HEAD of the bucket answers (200, 301, 403)
// with x-amz-bucket-region. "" when the server does not say or cannot be reached (the mount's
// access check then reports what is wrong).
std::string AskBucketRegion(const S3Options& options) {
  Result<Endpoint> ep = ParseEndpoint(ResolveEndpoint(options), options.disable_tls);
  if (!ep.ok()) return "";
  const RequestTarget t = BuildTarget(*ep, options.bucket, options.path_style, "", {});
  SimpleHttpRequest req;
  req.method = "HEAD";
  req.url = t.url;
  req.timeout_ms = 5000;
  req.ca_bundle = ResolveCaBundle(options);
  req.verify_tls = options.verify_tls;
  Result<SimpleHttpAnswer> a = SimpleHttp(req);
  if (!a.ok()) return "";
  auto it = a->headers.find("x-amz-bucket-region");
  return it == a->headers.end() ? "" : it->second;
}

}  // namespace

Result<std::unique_ptr<S3Client>> S3Client::Create(const S3Options& given) {
  if (given.bucket.empty()) return Status::InvalidArgument("S3 bucket name is empty");
  S3Options options = given;
  if (options.discover_region) {
    const std::string region = AskBucketRegion(options);
    if (!region.empty() && region != options.region) {
      LogInfo("kvfs: bucket {} is in region {} (no region was set); using it", options.bucket,
              region);
      options.region = region;
    }
  }
  KVFS_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(ResolveEndpoint(options), options.disable_tls));
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<CredentialProvider> creds,
                        ResolveCredentialProvider(options));
  LogInfo("kvfs: S3 credentials from {}", creds->source());
  std::shared_ptr<CredentialProvider> data_creds = creds;
  if (options.s3express) {
    // Directory buckets authorize data requests with session credentials from CreateSession,
    // renewed before their 5 minutes run out.
    const RequestTarget t =
        BuildTarget(ep, options.bucket, options.path_style, "", {{"session", ""}});
    ExpressSessionTarget target{t.url,
                                t.host,
                                t.canonical_uri,
                                options.region,
                                ResolveCaBundle(options),
                                options.verify_tls};
    KVFS_ASSIGN_OR_RETURN(data_creds, RefreshingCredentialProvider::Create(
                                          "S3 Express session of " + options.bucket +
                                              " (CreateSession with " + creds->source() + ")",
                                          ExpressSessionFetch(target, creds)));
    LogInfo("kvfs: {}", data_creds->source());
  }
  std::unique_ptr<S3Client> client(
      new S3Client(options, std::move(ep), std::move(creds), std::move(data_creds)));
  // The loops split the request and connection bounds exactly, so the totals stay what the
  // settings say (a max_inflight or max_connections of 1 means one loop).
  const int loops = std::clamp(
      options.http_loops, 1, std::max(1, std::min(options.max_inflight, options.max_connections)));
  const int inflight = std::max(loops, options.max_inflight);
  const int connections = std::max(loops, options.max_connections);
  for (int i = 0; i < loops; i++) {
    HttpEngine::Options eo;
    eo.max_inflight = inflight / loops + (i < inflight % loops ? 1 : 0);
    eo.max_connections = connections / loops + (i < connections % loops ? 1 : 0);
    eo.verify_tls = options.verify_tls;
    eo.ca_bundle = ResolveCaBundle(options);
    eo.prefer_http2 = options.prefer_http2;
    eo.clock = client->clock();
    KVFS_ASSIGN_OR_RETURN(std::unique_ptr<HttpEngine> engine, HttpEngine::Create(eo));
    client->engines_.push_back(std::move(engine));
  }
  return client;
}

S3Client::S3Client(const S3Options& options, Endpoint endpoint,
                   std::shared_ptr<CredentialProvider> credentials,
                   std::shared_ptr<CredentialProvider> data_credentials)
    : options_(options),
      endpoint_(std::move(endpoint)),
      credentials_(std::move(credentials)),
      data_credentials_(std::move(data_credentials)),
      breaker_(CircuitBreaker::Options{options.circuit_breaker_failures,
                                       options.circuit_breaker_cooldown_ms}) {
  RetryPolicy::Options po;
  po.max_attempts = std::max(1, options.max_attempts);
  po.base_ms = options.backoff_base_ms;
  po.max_ms = options.backoff_max_ms;
  policy_ = std::make_unique<RetryPolicy>(po, Clock::Real());
}

}  // namespace kvfs::s3
