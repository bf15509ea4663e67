#include "objstore/s3/credential_sources.h"

#include <cstdlib>
#include <ctime>
#include <map>
#include <vector>

#include "objstore/s3/credentials.h"

namespace kvfs::s3 {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Get(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? std::string() : it->second;
}

std::string StsEndpoint(const S3Options& options) {
  std::string sts = Env("AWS_ENDPOINT_URL_STS");
  if (sts.empty()) sts = "https://sts." + options.region + ".amazonaws.com";
  while (!sts.empty() && sts.back() == '/') sts.pop_back();
  return sts;
}

std::string ContainerUri() {
  std::string uri = Env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (uri.empty() && !Env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").empty()) {
    uri = "http://169.254.170.2" + Env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  }
  return uri;
}

std::string ImdsEndpoint() {
  std::string imds = Env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (imds.empty()) imds = "http://169.254.169.254";
  while (!imds.empty() && imds.back() == '/') imds.pop_back();
  return imds;
}

bool ImdsV1Allowed() {
  const std::string v = Env("KVFS_IMDS_V1");
  return v == "1" || v == "true" || v == "TRUE";
}

std::string DefaultSessionName() { return "kvfs-" + std::to_string(time(nullptr)); }

using ProviderResult = Result<std::shared_ptr<CredentialProvider>>;

ProviderResult Refreshing(const std::string& source, CredentialFetch fetch) {
  KVFS_ASSIGN_OR_RETURN(auto p, RefreshingCredentialProvider::Create(source, std::move(fetch)));
  return std::shared_ptr<CredentialProvider>(std::move(p));
}

// The sources a role's credential_source and the chain itself both use.
ProviderResult ContainerProvider() {
  return Refreshing("container credentials (" + ContainerUri() + ")",
                    ContainerFetch(ContainerUri(), Env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
                                   Env("AWS_CONTAINER_AUTHORIZATION_TOKEN")));
}

ProviderResult ImdsProvider() {
  return Refreshing("EC2 instance metadata (" + ImdsEndpoint() + ")",
                    ImdsFetch(ImdsEndpoint(), ImdsV1Allowed()));
}

ProviderResult ProcessProvider(const std::string& profile, const std::string& command,
                               int timeout_secs) {
  const std::string what = "credential_process of profile " + profile;
  return Refreshing(what, ProcessFetch(command, what, timeout_secs * 1000));
}

// A profile with role_arn: AssumeRole signed with the credentials of its source_profile (static
// keys or a credential_process) or of its credential_source (Environment, Ec2InstanceMetadata,
// EcsContainer), refreshed like every temporary set.
ProviderResult ProfileRoleProvider(const S3Options& options, const std::string& name,
                                   const std::map<std::string, std::string>& kv) {
  const std::string where = "profile " + name;
  std::shared_ptr<CredentialProvider> source;
  const std::string source_profile = Get(kv, "source_profile");
  const std::string credential_source = Get(kv, "credential_source");
  if (!source_profile.empty()) {
    const auto src = ReadProfile(source_profile);
    if (!Get(src, "aws_access_key_id").empty() && !Get(src, "aws_secret_access_key").empty()) {
      source = std::make_shared<StaticCredentialProvider>(
          S3Credentials{Get(src, "aws_access_key_id"), Get(src, "aws_secret_access_key"),
                        Get(src, "aws_session_token"), "profile " + source_profile});
    } else if (!Get(src, "credential_process").empty()) {
      KVFS_ASSIGN_OR_RETURN(source, ProcessProvider(source_profile, Get(src, "credential_process"),
                                                    options.credential_process_timeout_secs));
    } else {
      return Status::PermissionDenied(where + ": source_profile " + source_profile +
                                      " has neither aws_access_key_id/aws_secret_access_key "
                                      "nor credential_process (chained roles are not supported)");
    }
  } else if (credential_source == "Environment") {
    if (Env("AWS_ACCESS_KEY_ID").empty() || Env("AWS_SECRET_ACCESS_KEY").empty()) {
      return Status::PermissionDenied(where +
                                      ": credential_source Environment, but "
                                      "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are unset");
    }
    source = std::make_shared<StaticCredentialProvider>(
        S3Credentials{Env("AWS_ACCESS_KEY_ID"), Env("AWS_SECRET_ACCESS_KEY"),
                      Env("AWS_SESSION_TOKEN"), "environment"});
  } else if (credential_source == "Ec2InstanceMetadata") {
    KVFS_ASSIGN_OR_RETURN(source, ImdsProvider());
  } else if (credential_source == "EcsContainer") {
    if (ContainerUri().empty()) {
      return Status::PermissionDenied(where +
                                      ": credential_source EcsContainer, but "
                                      "AWS_CONTAINER_CREDENTIALS_FULL_URI/_RELATIVE_URI are unset");
    }
    KVFS_ASSIGN_OR_RETURN(source, ContainerProvider());
  } else {
    return Status::PermissionDenied(
        where +
        ": role_arn needs source_profile or credential_source (Environment, "
        "Ec2InstanceMetadata or EcsContainer)" +
        (credential_source.empty() ? "" : "; got credential_source " + credential_source));
  }
  const std::string arn = Get(kv, "role_arn");
  std::string session = Get(kv, "role_session_name");
  if (session.empty()) session = DefaultSessionName();
  return Refreshing("role " + arn + " (" + where + ")",
                    AssumeRoleFetch(StsEndpoint(options), options.region, arn, session,
                                    Get(kv, "external_id"), source));
}

}  // namespace

Result<std::shared_ptr<CredentialProvider>> ResolveCredentialProvider(const S3Options& options) {
  std::vector<std::string> tried;
  auto fixed = [](S3Credentials c) -> std::shared_ptr<CredentialProvider> {
    return std::make_shared<StaticCredentialProvider>(std::move(c));
  };
  // 1-2: keys in the config or the environment.
  const bool env_keys = !Env("AWS_ACCESS_KEY_ID").empty() && !Env("AWS_SECRET_ACCESS_KEY").empty();
  const bool config_keys =
      !options.credentials.access_key_id.empty() && !options.credentials.secret_access_key.empty();
  if (config_keys || env_keys) {
    KVFS_ASSIGN_OR_RETURN(S3Credentials c, ResolveCredentials(options));
    return fixed(std::move(c));
  }
  // 3: web identity (IRSA).
  const std::string token_file = Env("AWS_WEB_IDENTITY_TOKEN_FILE");
  const std::string role_arn = Env("AWS_ROLE_ARN");
  if (!token_file.empty() && !role_arn.empty()) {
    std::string session = Env("AWS_ROLE_SESSION_NAME");
    if (session.empty()) session = DefaultSessionName();
    return Refreshing("web identity (" + role_arn + ")",
                      WebIdentityFetch(StsEndpoint(options), role_arn, session, token_file));
  }
  tried.push_back(token_file.empty() && role_arn.empty()
                      ? "web identity (AWS_WEB_IDENTITY_TOKEN_FILE/AWS_ROLE_ARN unset)"
                      : "web identity (needs both AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN)");
  // 4: the profile: an assumed role, a credential process, or static keys.
  const std::string name = ProfileName(options);
  const std::map<std::string, std::string> kv = ReadProfile(name);
  if (!Get(kv, "role_arn").empty()) return ProfileRoleProvider(options, name, kv);
  if (!Get(kv, "credential_process").empty()) {
    return ProcessProvider(name, Get(kv, "credential_process"),
                           options.credential_process_timeout_secs);
  }
  Result<S3Credentials> profile = ResolveCredentials(options);
  if (profile.ok()) return fixed(std::move(profile).value());
  tried.insert(tried.begin(), profile.status().message());
  // 5: container credentials.
  if (!ContainerUri().empty()) return ContainerProvider();
  tried.push_back("container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI/_RELATIVE_URI unset)");
  // 6: instance metadata, unless turned off.
  std::string disabled = Env("AWS_EC2_METADATA_DISABLED");
  if (disabled == "true" || disabled == "TRUE" || disabled == "1") {
    tried.push_back("EC2 instance metadata (AWS_EC2_METADATA_DISABLED)");
  } else {
    ProviderResult p = ImdsProvider();
    if (p.ok()) return p;
    tried.push_back(p.status().message());
  }
  std::string msg = tried.front();  // "no S3 credentials found; tried: config ...; profile ..."
  for (size_t i = 1; i < tried.size(); ++i) msg += "; " + tried[i];
  return Status::PermissionDenied(msg);
}

}  // namespace kvfs::s3
