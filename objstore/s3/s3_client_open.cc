// S3Client::Create: opening a client - the bucket's region when none was given, the endpoint, the
// credential chain (and, for S3 Express directory buckets, the session credentials that sign data
// requests), the retry policy and the HTTP engine. The requests themselves are in s3_client.cc.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "objstore/s3/credential_sources.h"
#include "objstore/s3/credentials.h"
#include "objstore/s3/s3_client.h"
#include "objstore/s3/simple_http.h"

namespace kvfs::s3 {

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
      spdlog::info("kvfs: bucket {} is in region {} (no region was set); using it", options.bucket,
                   region);
      options.region = region;
    }
  }
  KVFS_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(ResolveEndpoint(options), options.disable_tls));
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<CredentialProvider> creds,
                        ResolveCredentialProvider(options));
  spdlog::info("kvfs: S3 credentials from {}", creds->source());
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
    spdlog::info("kvfs: {}", data_creds->source());
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
