#include "objstore/s3/credential_provider.h"

#include <algorithm>
#include <ctime>

#include "base/log.h"

namespace kvfs::s3 {
namespace {

std::string UtcText(SystemTime t) {
  const time_t tt = std::chrono::system_clock::to_time_t(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Result<std::shared_ptr<RefreshingCredentialProvider>> RefreshingCredentialProvider::Create(
    std::string source, CredentialFetch fetch, Options options) {
  Result<TemporaryCredentials> first = fetch();
  if (!first.ok()) {
    return Status(first.status().code(),
                  "S3 credentials from " + source + ": " + first.status().message());
  }
  if (first->creds.source.empty()) first->creds.source = source;
  return std::shared_ptr<RefreshingCredentialProvider>(new RefreshingCredentialProvider(
      std::move(source), std::move(fetch), options, std::move(first).value()));
}

RefreshingCredentialProvider::RefreshingCredentialProvider(std::string source,
                                                           CredentialFetch fetch, Options options,
                                                           TemporaryCredentials first)
    : source_(std::move(source)), fetch_(std::move(fetch)), options_(options) {
  {
    MutexLock l(&mu_);
    current_ = std::move(first);
    fetched_at_ = std::chrono::system_clock::now();
  }
  thread_ = std::thread([this] { Loop(); });
}

RefreshingCredentialProvider::~RefreshingCredentialProvider() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

SystemTime RefreshingCredentialProvider::RefreshAtLocked() const {
  if (current_.expiration == SystemTime::max()) return SystemTime::max();
  const auto lifetime = current_.expiration - fetched_at_;
  const auto margin = std::min<std::chrono::system_clock::duration>(options_.margin, lifetime / 2);
  return current_.expiration - margin;
}

Result<S3Credentials> RefreshingCredentialProvider::Get() {
  MutexLock l(&mu_);
  if (std::chrono::system_clock::now() >= current_.expiration) {
    return Status::PermissionDenied("S3 credentials from " + source_ + " expired at " +
                                    UtcText(current_.expiration) + " and could not be refreshed" +
                                    (last_error_.empty() ? "" : ": " + last_error_));
  }
  return current_.creds;
}

uint64_t RefreshingCredentialProvider::refreshes() const {
  MutexLock l(&mu_);
  return refreshes_;
}

void RefreshingCredentialProvider::Loop() {
  auto retry = options_.retry_min;
  MutexLock l(&mu_);
  for (;;) {
    SystemTime at = RefreshAtLocked();
    // Sleep until the refresh time; wake up at least once a minute so a clock step (suspend,
    // NTP) cannot make us oversleep an expiry.
    while (!stop_ && std::chrono::system_clock::now() < at) {
      const auto wait = std::min<std::chrono::system_clock::duration>(
          at - std::chrono::system_clock::now(), std::chrono::minutes(1));
      cv_.WaitFor(&mu_, wait);
      at = RefreshAtLocked();
    }
    if (stop_) return;
    Result<TemporaryCredentials> next(Status::Internal("not fetched"));
    {
      MutexUnlock u(&mu_);  // requests keep signing with the current set meanwhile
      next = fetch_();
    }
    if (stop_) return;
    if (next.ok()) {
      if (next->creds.source.empty()) next->creds.source = source_;
      current_ = std::move(next).value();
      fetched_at_ = std::chrono::system_clock::now();
      last_error_.clear();
      refreshes_++;
      retry = options_.retry_min;
      LogDebug("kvfs: S3 credentials from {} refreshed; valid until {}", source_,
               UtcText(current_.expiration));
      continue;
    }
    last_error_ = next.status().message();
    const bool expired = std::chrono::system_clock::now() >= current_.expiration;
    LogWarn("kvfs: refreshing the S3 credentials from {} failed ({}); {}; retrying in {} ms",
            source_, last_error_,
            expired ? "they have expired: requests fail with EPERM until a refresh works"
                    : "the current ones stay valid until " + UtcText(current_.expiration),
            retry.count());
    const auto until = std::chrono::steady_clock::now() + retry;
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      cv_.WaitFor(&mu_, until - std::chrono::steady_clock::now());
    }
    if (stop_) return;
    retry = std::min(retry * 2, options_.retry_max);
  }
}

}  // namespace kvfs::s3
