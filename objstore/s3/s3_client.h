// S3Client: runs S3 requests on the HttpEngine - builds the URL, signs every attempt (SigV4),
// retries transient failures on engine timers with back-off, and enforces the per-operation
// deadline: operation_timeout_ms, or the calling thread's deadline (base/deadline.h, the FUSE
// request's blocking_timeout) when that is earlier. A circuit breaker refuses attempts at once
// while the endpoint is down (circuit_breaker_failures). The ObjectStore methods (s3_store.cc) and
// the GET state machine (s3_get.cc) are built on it.
//
// Calls go round-robin to `http_loops` HttpEngines (loop threads); all attempts, timers and hooks
// of a call run on its loop (one thread at a time), different calls' bytes on different cores.
//
// Thread-safe: Execute() may be called from any thread; calls' hooks run on their loop thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "objstore/s3/backoff.h"
#include "objstore/s3/circuit_breaker.h"
#include "objstore/s3/credential_provider.h"
#include "objstore/s3/http_engine.h"
#include "objstore/s3/s3_errors.h"
#include "objstore/s3/s3_options.h"
#include "objstore/s3/s3_url.h"
#include "objstore/s3/sigv4.h"

namespace kvfs::s3 {

// One logical S3 request (all of its attempts). Fill the request fields, then Execute().
struct S3Call {
  std::string operation;  // for messages: "GET", "PUT", "LIST", ...
  std::string method;
  std::string key;    // "" for bucket-level requests
  KeyValues query;    // raw names and values
  KeyValues headers;  // extra request headers; all signed
  Body body;          // request body (not owned unless SetBody was used)
  bool has_body = false;
  bool retry = true;  // false: a single attempt (the caller handles non-idempotent steps)

  // Per-attempt hook, on the loop thread: may add headers for this attempt (they are signed) and
  // set ex->sink. Runs before signing.
  std::function<void(KeyValues* attempt_headers, HttpExchange* ex)> prepare;
  // Classifies a finished attempt; default: DefaultCheck(). Retryable results are retried.
  std::function<Status(const HttpExchange& ex)> check;
  // Runs once with the final Status and the last exchange (null if none ran). Loop thread (or
  // the caller's thread when the store is shutting down).
  std::function<void(Status status, std::unique_ptr<HttpExchange> ex)> done;

  // A body owned by the call (small XML documents); hashed for the signature.
  void SetBody(std::string data);

  // ---- state, owned by S3Client
  std::string owned_body;
  int attempts = 0;
  int64_t deadline_ms = 0;
  int64_t started_ms = 0;
  std::string deadline_source;  // the setting that set deadline_ms, for messages
  size_t loop = 0;              // index of the HttpEngine that runs every attempt
};

class S3Client {
 public:
  // Resolves endpoint, credentials and CA bundle; starts the engine.
  static Result<std::unique_ptr<S3Client>> Create(const S3Options& options);
  ~S3Client();  // Shutdown()
  // Cancels what is queued or in flight (callbacks see kCancelled) and stops the loop thread.
  // Idempotent; afterwards every request fails at once with kCancelled.
  void Shutdown();

  void Execute(std::shared_ptr<S3Call> call);

  // Execute and wait. Must not be called on the loop thread (from a callback).
  struct Reply {
    Status status;
    std::unique_ptr<HttpExchange> ex;  // may be null
  };
  Reply ExecuteSync(std::shared_ptr<S3Call> call);

  // The standard classification: cancelled -> kCancelled; transport errors -> MapTransportError
  // (kDeadlineExceeded when the operation's deadline cut it); non-2xx -> MapHttpError.
  Status DefaultCheck(const S3Call& call, const HttpExchange& ex) const;

  RequestContext Context(const std::string& operation, const std::string& key) const;
  const S3Options& options() const { return options_; }
  const Endpoint& endpoint() const { return endpoint_; }
  CredentialProvider* credentials() const { return credentials_.get(); }
  // Runs `fn` after `delay_ms` on a loop thread (the first loop's), for steps that are not one
  // call's retry: see HttpEngine::RunAfter.
  void RunAfter(int64_t delay_ms, std::function<void()> fn) {
    engines_.front()->RunAfter(delay_ms, std::move(fn));
  }
  Clock* clock() const { return policy_->clock(); }
  RetryPolicy* policy() const { return policy_.get(); }
  StoreStats Stats() const;

 private:
  S3Client(const S3Options& options, Endpoint endpoint,
           std::shared_ptr<CredentialProvider> credentials,
           std::shared_ptr<CredentialProvider> data_credentials);
  HttpEngine* LoopOf(const S3Call& call) const { return engines_[call.loop].get(); }
  void StartAttempt(std::shared_ptr<S3Call> call);
  void OnAttemptDone(std::shared_ptr<S3Call> call, std::unique_ptr<HttpExchange> ex);
  void Finish(const std::shared_ptr<S3Call>& call, Status st, std::unique_ptr<HttpExchange> ex);
  // Tells the breaker what a finished attempt says about the endpoint.
  void NoteAttempt(const HttpExchange& ex);

  const S3Options options_;
  const Endpoint endpoint_;
  // Asked on every attempt (they rotate): the IAM credentials, and those that sign data requests
  // (an S3 Express session's; the same provider elsewhere).
  const std::shared_ptr<CredentialProvider> credentials_;
  const std::shared_ptr<CredentialProvider> data_credentials_;
  std::unique_ptr<RetryPolicy> policy_;
  CircuitBreaker breaker_;
  // Counters (relaxed atomics: statistics only).
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<size_t> next_loop_{0};
  // Last: destroyed first, while the rest is still valid. Never empty after Create.
  std::vector<std::unique_ptr<HttpEngine>> engines_;
};

}  // namespace kvfs::s3
