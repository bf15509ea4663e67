// Credential providers of the S3 client: the credentials every request is signed with, fixed
// (keys from the config, the environment or a profile) or temporary and refreshed in the
// background before they expire (instance roles, container credentials, web identity).
//
// Thread-safe: Get() may be called from any thread at any time; it never waits on the network.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "objstore/s3/s3_options.h"

namespace kvfs::s3 {

class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  // The credentials to sign a request with now. Never knowingly expired ones: once temporary
  // credentials have expired and no refresh succeeded, kPermissionDenied naming the source and
  // the last refresh error.
  virtual Result<S3Credentials> Get() = 0;
  // Where the credentials come from, for logs and messages (never a value).
  virtual std::string source() const = 0;
};

class StaticCredentialProvider : public CredentialProvider {
 public:
  explicit StaticCredentialProvider(S3Credentials creds) : creds_(std::move(creds)) {}
  Result<S3Credentials> Get() override { return creds_; }
  std::string source() const override { return creds_.source; }

 private:
  const S3Credentials creds_;
};

using SystemTime = std::chrono::system_clock::time_point;

struct TemporaryCredentials {
  S3Credentials creds;
  SystemTime expiration = SystemTime::max();  // max: never expires
};

// Fetches a fresh set (one HTTP exchange or a few); called on the provider's thread.
using CredentialFetch = std::function<Result<TemporaryCredentials>()>;

class RefreshingCredentialProvider : public CredentialProvider {
 public:
  struct Options {
    // Refresh this long before expiry (as the AWS SDKs do), or halfway through the credentials'
    // lifetime when that is shorter (sessions of a few minutes, the tests' few seconds).
    std::chrono::seconds margin{300};
    // A failed refresh is retried after retry_min, doubling up to retry_max.
    std::chrono::milliseconds retry_min{1000};
    std::chrono::milliseconds retry_max{30000};
  };

  // Fetches once, synchronously: an error there (no such source, wrong token) is the mount's
  // error. Then refreshes on its own thread until destroyed.
  static Result<std::shared_ptr<RefreshingCredentialProvider>> Create(std::string source,
                                                                      CredentialFetch fetch,
                                                                      Options options);
  static Result<std::shared_ptr<RefreshingCredentialProvider>> Create(std::string source,
                                                                      CredentialFetch fetch) {
    return Create(std::move(source), std::move(fetch), Options());
  }
  ~RefreshingCredentialProvider() override;

  Result<S3Credentials> Get() override;
  std::string source() const override { return source_; }
  uint64_t refreshes() const;  // successful fetches after the first

 private:
  RefreshingCredentialProvider(std::string source, CredentialFetch fetch, Options options,
                               TemporaryCredentials first);
  void Loop();
  SystemTime RefreshAtLocked() const REQUIRES(mu_);

  const std::string source_;
  const CredentialFetch fetch_;
  const Options options_;
  mutable Mutex mu_;
  CondVar cv_;
  TemporaryCredentials current_ GUARDED_BY(mu_);
  SystemTime fetched_at_ GUARDED_BY(mu_);
  std::string last_error_ GUARDED_BY(mu_);
  uint64_t refreshes_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kvfs::s3
