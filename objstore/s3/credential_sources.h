// Where temporary AWS credentials come from on the machines inference runs on, and the order the
// AWS SDKs try them in:
//   1. keys in the config, 2. AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN),
//   3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME] ->
//      STS AssumeRoleWithWebIdentity (EKS IRSA); STS at AWS_ENDPOINT_URL_STS, else
//      https://sts.<region>.amazonaws.com,
//   4. the shared files' profile (credentials.h): role_arn with source_profile or
//      credential_source (STS AssumeRole, signed with the source's credentials),
//      credential_process (a command printing the credentials as JSON), or static keys,
//   5. container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI (on
//      169.254.170.2), with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or _TOKEN (ECS, EKS Pod
//      Identity),
//   6. EC2 instance metadata, IMDSv2 (token PUT, then the role's credentials; IMDSv1 only with
//      KVFS_IMDS_V1=1, when the service offers no token), at
//      AWS_EC2_METADATA_SERVICE_ENDPOINT else http://169.254.169.254; off with
//      AWS_EC2_METADATA_DISABLED=true.
// Temporary credentials (3, 4 when a role or a process, 5, 6) are refreshed in the background
// (credential_provider.h); token files are read again on every refresh, since Kubernetes rotates
// them.
//
// Thread-safety: the fetch functions are stateless apart from what they capture; safe to call
// from any thread. They read the environment when resolving only.
#pragma once

#include <memory>
#include <string>

#include "objstore/s3/credential_fetch.h"    // the sources' fetches
#include "objstore/s3/credential_process.h"  // credential_process
#include "objstore/s3/credential_provider.h"
#include "objstore/s3/s3_options.h"

namespace kvfs::s3 {

// The provider of the first source in the order above that is configured and answers. When none
// does: kPermissionDenied listing every source tried and why (names of variables and files, never
// values).
Result<std::shared_ptr<CredentialProvider>> ResolveCredentialProvider(const S3Options& options);

}  // namespace kvfs::s3
