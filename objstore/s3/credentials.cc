#include "objstore/s3/credentials.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <vector>

namespace kvfs::s3 {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string HomeDir() {
  std::string home = Env("HOME");
  if (!home.empty()) return home;
  struct passwd pw;
  struct passwd* res = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &res) == 0 && res) return pw.pw_dir;
  return "";
}

// Reads the key/values of section `section` from an INI-style AWS file. Returns false if the file
// cannot be opened; *found tells whether the section exists.
bool ReadIniSection(const std::string& path, const std::string& section,
                    std::map<std::string, std::string>* out, bool* found) {
  std::ifstream in(path);
  if (!in) return false;
  *found = false;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      inside = Trim(line.substr(1, line.size() - 2)) == section;
      *found = *found || inside;
      continue;
    }
    if (!inside) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    (*out)[Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return true;
}

// Looks up `profile` in one file; appends what was tried to *tried.
bool FromFile(const std::string& path, const std::string& section, const std::string& label,
              S3Credentials* creds, std::vector<std::string>* tried) {
  std::map<std::string, std::string> kv;
  bool found = false;
  if (!ReadIniSection(path, section, &kv, &found)) {
    tried->push_back(label + " (file not readable)");
    return false;
  }
  if (!found) {
    tried->push_back(label + " (no [" + section + "] section)");
    return false;
  }
  creds->access_key_id = kv["aws_access_key_id"];
  creds->secret_access_key = kv["aws_secret_access_key"];
  creds->session_token = kv["aws_session_token"];
  if (creds->access_key_id.empty() || creds->secret_access_key.empty()) {
    tried->push_back(label + " ([" + section +
                     "] lacks aws_access_key_id or aws_secret_access_key)");
    return false;
  }
  creds->source = "[" + section + "] in " + path;
  return true;
}

}  // namespace

Result<S3Credentials> ResolveCredentials(const S3Options& options) {
  std::vector<std::string> tried;
  const S3Credentials& given = options.credentials;
  if (!given.access_key_id.empty() && !given.secret_access_key.empty()) {
    S3Credentials c = given;
    if (c.source.empty()) c.source = "config";
    return c;
  }
  tried.push_back(given.access_key_id.empty() && given.secret_access_key.empty()
                      ? "config (no keys set)"
                      : "config (only one of access key id and secret set)");

  const std::string env_id = Env("AWS_ACCESS_KEY_ID");
  const std::string env_secret = Env("AWS_SECRET_ACCESS_KEY");
  if (!env_id.empty() && !env_secret.empty()) {
    return S3Credentials{env_id, env_secret, Env("AWS_SESSION_TOKEN"), "environment"};
  }
  tried.push_back(env_id.empty() && env_secret.empty()
                      ? "environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY unset)"
                      : "environment (only one of AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY set)");

  std::string profile = Env("AWS_PROFILE");
  if (profile.empty()) profile = options.profile;
  if (profile.empty()) profile = "default";
  const std::string home = HomeDir();

  std::string cred_file = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (cred_file.empty() && !home.empty()) cred_file = home + "/.aws/credentials";
  S3Credentials c;
  if (!cred_file.empty() &&
      FromFile(cred_file, profile, "profile '" + profile + "' in " + cred_file, &c, &tried)) {
    return c;
  }

  std::string config_file = Env("AWS_CONFIG_FILE");
  if (config_file.empty() && !home.empty()) config_file = home + "/.aws/config";
  const std::string section = profile == "default" ? "default" : "profile " + profile;
  if (!config_file.empty() &&
      FromFile(config_file, section, "profile '" + profile + "' in " + config_file, &c, &tried)) {
    return c;
  }

  std::string msg = "no S3 credentials found; tried: ";
  for (size_t i = 0; i < tried.size(); ++i) msg += (i ? "; " : "") + tried[i];
  return Status::PermissionDenied(msg);
}

std::string ProfileName(const S3Options& options) {
  std::string profile = Env("AWS_PROFILE");
  if (profile.empty()) profile = options.profile;
  if (profile.empty()) profile = "default";
  return profile;
}

std::map<std::string, std::string> ReadProfile(const std::string& profile) {
  const std::string home = HomeDir();
  std::string config_file = Env("AWS_CONFIG_FILE");
  if (config_file.empty() && !home.empty()) config_file = home + "/.aws/config";
  std::string cred_file = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (cred_file.empty() && !home.empty()) cred_file = home + "/.aws/credentials";
  std::map<std::string, std::string> kv;
  bool found = false;
  if (!config_file.empty()) {
    ReadIniSection(config_file, profile == "default" ? "default" : "profile " + profile, &kv,
                   &found);
  }
  if (!cred_file.empty()) ReadIniSection(cred_file, profile, &kv, &found);
  return kv;
}

std::string DescribeCredentialSource(const S3Options& options) {
  if (!options.credentials.access_key_id.empty() &&
      !options.credentials.secret_access_key.empty()) {
    return options.credentials.source.empty() ? "config" : options.credentials.source;
  }
  if (!Env("AWS_ACCESS_KEY_ID").empty() && !Env("AWS_SECRET_ACCESS_KEY").empty()) {
    return "environment (AWS_ACCESS_KEY_ID)";
  }
  if (!Env("AWS_WEB_IDENTITY_TOKEN_FILE").empty() && !Env("AWS_ROLE_ARN").empty()) {
    return "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN " + Env("AWS_ROLE_ARN") + ")";
  }
  const std::string profile_name = ProfileName(options);
  const auto kv = ReadProfile(profile_name);
  auto get = [&kv](const char* key) {
    auto it = kv.find(key);
    return it == kv.end() ? std::string() : it->second;
  };
  if (!get("role_arn").empty()) {
    return "role " + get("role_arn") + " (profile " + profile_name + ", AssumeRole)";
  }
  if (!get("credential_process").empty()) return "credential_process of profile " + profile_name;
  Result<S3Credentials> profile = ResolveCredentials(options);
  if (profile.ok()) return profile->source;
  if (!Env("AWS_CONTAINER_CREDENTIALS_FULL_URI").empty() ||
      !Env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").empty()) {
    return "container credentials (AWS_CONTAINER_CREDENTIALS_*_URI)";
  }
  const std::string disabled = Env("AWS_EC2_METADATA_DISABLED");
  if (disabled == "true" || disabled == "TRUE" || disabled == "1") return "none found";
  return "EC2 instance metadata, if it answers (no other source is configured)";
}

std::string EndpointFromEnvironment() {
  std::string ep = Env("AWS_ENDPOINT_URL_S3");
  return ep.empty() ? Env("AWS_ENDPOINT_URL") : ep;
}

std::string ResolveEndpoint(const S3Options& options) {
  if (!options.endpoint.empty()) return options.endpoint;
  if (std::string ep = EndpointFromEnvironment(); !ep.empty()) return ep;
  return "https://s3." + (options.region.empty() ? std::string("us-east-1") : options.region) +
         ".amazonaws.com";
}

std::string ResolveCaBundle(const S3Options& options) {
  if (!options.ca_bundle.empty()) return options.ca_bundle;
  return Env("AWS_CA_BUNDLE");
}

}  // namespace kvfs::s3
