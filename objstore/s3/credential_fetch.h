// The fetches of the credential sources that ask a service over HTTP (credential_sources.h says
// which source is tried when): STS AssumeRole and AssumeRoleWithWebIdentity, the container
// credentials endpoint, EC2 instance metadata (IMDSv2), and S3 Express CreateSession. Each
// returns a CredentialFetch for a RefreshingCredentialProvider and names its endpoint in its
// errors. Exposed for tests.
//
// Thread-safety: the fetches are stateless apart from what they capture; safe to call from any
// thread.
#pragma once

#include <memory>
#include <string>

#include "objstore/s3/credential_provider.h"

namespace kvfs::s3 {

CredentialFetch ImdsFetch(const std::string& endpoint, bool allow_v1);
CredentialFetch ContainerFetch(const std::string& uri, const std::string& token_file,
                               const std::string& token);
CredentialFetch AssumeRoleFetch(const std::string& sts_endpoint, const std::string& region,
                                const std::string& role_arn, const std::string& session_name,
                                const std::string& external_id,
                                std::shared_ptr<CredentialProvider> source);

// Where an S3 Express One Zone directory bucket's CreateSession goes (GET BUCKET/?session on its
// zonal endpoint), and the TLS settings of the store.
struct ExpressSessionTarget {
  std::string url;            // ".../?session"
  std::string host;           // Host header
  std::string canonical_uri;  // "/" (virtual-hosted) or "/bucket" (path style, emulators)
  std::string region;
  std::string ca_bundle;
  bool verify_tls = true;
};
// The session credentials (5 minutes) CreateSession hands out, asked for with `base` (IAM).
CredentialFetch ExpressSessionFetch(const ExpressSessionTarget& target,
                                    std::shared_ptr<CredentialProvider> base);
CredentialFetch WebIdentityFetch(const std::string& sts_endpoint, const std::string& role_arn,
                                 const std::string& session_name, const std::string& token_file);

// An Expiration timestamp of a credentials answer ("2026-11-26T10:00:00Z"); `what` names the
// answer in the error.
Result<SystemTime> ParseExpiration(const std::string& text, const std::string& what);

}  // namespace kvfs::s3
