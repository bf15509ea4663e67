// Resolution of the S3 credentials, endpoint and CA bundle from options, environment and the AWS
// shared files. Reads the process environment and files; safe to call from any thread as long as
// nobody modifies the environment concurrently.
#pragma once

#include <map>
#include <string>

#include "base/status.h"
#include "objstore/s3/s3_options.h"

namespace kvfs::s3 {

// In order, the first complete set wins:
//  1. options.credentials (config file), if access key and secret are both set;
//  2. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
//  3. profile AWS_PROFILE, else options.profile, else "default": first in the shared credentials
//     file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, section "[name]"), then in the
//     config file (AWS_CONFIG_FILE or ~/.aws/config, section "[profile name]" or "[default]").
// S3Credentials::source says which one was used. When none is complete: kPermissionDenied listing
// everything tried (names of variables and files, never values).
Result<S3Credentials> ResolveCredentials(const S3Options& options);

// The profile kvfs uses: AWS_PROFILE, else options.profile, else "default".
std::string ProfileName(const S3Options& options);

// The settings of `profile`: the config file's section (AWS_CONFIG_FILE or ~/.aws/config,
// "[profile NAME]", "[default]") overlaid by the credentials file's "[NAME]" (AWS_SHARED_
// CREDENTIALS_FILE or ~/.aws/credentials). Empty when neither file has it.
std::map<std::string, std::string> ReadProfile(const std::string& profile);

// Which source of the chain (credential_sources.h) would be used, judged from the configuration,
// the environment and the shared files alone (nothing is contacted): for --dump-config. Never a
// value.
std::string DescribeCredentialSource(const S3Options& options);

// The endpoint the AWS SDKs' environment convention names: AWS_ENDPOINT_URL_S3, else
// AWS_ENDPOINT_URL, else "".
std::string EndpointFromEnvironment();

// options.endpoint, else EndpointFromEnvironment(), else "https://s3.<region>.amazonaws.com".
std::string ResolveEndpoint(const S3Options& options);

// options.ca_bundle, else AWS_CA_BUNDLE, else "" (the system's store).
std::string ResolveCaBundle(const S3Options& options);

}  // namespace kvfs::s3
