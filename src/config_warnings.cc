#include "src/config_warnings.h"

#include <sys/stat.h>

#include <cstdio>

#include "base/log.h"
#include "objstore/s3/credentials.h"
#include "objstore/s3/s3_url.h"

namespace kvfs {
namespace {

std::string EnvironmentVariableFor(const std::string& key) {
  if (key == "session_token") return "AWS_SESSION_TOKEN";
  return "AWS_SECRET_ACCESS_KEY";
}

constexpr const char* kCredentialsFile =
    "the AWS credentials file (~/.aws/credentials or $AWS_SHARED_CREDENTIALS_FILE, mode 0600)";

}  // namespace

std::string SecretOnCommandLineWarning(const std::string& key) {
  return key +
         " is given on the command line, where every local user can read it (ps, "
         "/proc/PID/cmdline, and /etc/fstab if it comes from there): keep it in " +
         kCredentialsFile + ", the environment (" + EnvironmentVariableFor(key) +
         ") or a config file only root can read";
}

std::string ReadableSecretFileWarning(const std::string& path, mode_t mode,
                                      const std::vector<std::string>& keys) {
  if ((mode & (S_IRGRP | S_IROTH)) == 0 || keys.empty()) return "";
  std::string names;
  for (const std::string& k : keys) names += (names.empty() ? "" : ", ") + k;
  char octal[8];
  std::snprintf(octal, sizeof(octal), "%04o", static_cast<unsigned>(mode & 07777));
  return "config file " + path + " holds " + names + " and is readable by " +
         ((mode & S_IROTH) != 0 ? "every local user" : "its group") + " (mode " + octal +
         "): run 'chmod 600 " + path + "', or keep the keys in " + kCredentialsFile +
         " or the environment";
}

std::vector<std::string> TransportWarnings(const KvfsConfig& config) {
  std::vector<std::string> out;
  if (config.source_kind != SourceKind::kS3) return out;
  const std::string endpoint = s3::RedactEndpoint(s3::ResolveEndpoint(config.s3));
  auto ep = s3::ParseEndpoint(endpoint, config.s3.disable_tls);
  if (ep.ok() && ep->scheme == "http") {
    out.push_back("endpoint " + ep->ToString() +
                  " is plain http://: requests signed with your credentials, the session token "
                  "if any, and the chunks cross the network unencrypted and can be read or "
                  "changed on the way; use https:// unless the network is trusted");
  }
  if (!config.s3.verify_tls) {
    out.push_back(
        "verify_tls is false: the store's TLS certificate is not checked, so anyone on the "
        "network path can pose as " +
        endpoint +
        ", read the session token and read or change chunks; set ca_bundle to trust a private "
        "CA instead");
  }
  return out;
}

std::vector<std::string> SecurityWarnings(const KvfsConfig& config) {
  std::vector<std::string> out = config.warnings;
  for (std::string& w : TransportWarnings(config)) out.push_back(std::move(w));
  // The metrics page has no TLS and no authentication; on every interface anyone who reaches the
  // node reads the store's name, traffic and errors (and can hold its few connections).
  if (config.metrics_listen.rfind("0.0.0.0:", 0) == 0) {
    out.push_back("metrics_listen " + config.metrics_listen +
                  " serves /metrics on every interface, without TLS or authentication; bind it "
                  "to 127.0.0.1 or a private interface");
  }
  return out;
}

void LogSecurityWarnings(const KvfsConfig& config) {
  for (const std::string& w : SecurityWarnings(config)) LogWarn("kvfs: {}", w);
}

}  // namespace kvfs
