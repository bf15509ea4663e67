#include "objstore/s3/credential_sources.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <tinyxml2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "objstore/s3/credentials.h"
#include "objstore/s3/s3_xml.h"
#include "objstore/s3/sigv4.h"
#include "objstore/s3/simple_http.h"

namespace kvfs::s3 {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

using HttpAnswer = SimpleHttpAnswer;

Result<HttpAnswer> Exchange(const std::string& method, const std::string& url,
                            const std::vector<std::string>& headers, const std::string& body,
                            long timeout_ms, bool direct = false, const std::string& ca_bundle = "",
                            bool verify_tls = true) {
  SimpleHttpRequest req;
  req.method = method;
  req.url = url;
  req.headers = headers;
  req.body = body;
  req.timeout_ms = timeout_ms;
  req.direct = direct;
  req.ca_bundle = ca_bundle;
  req.verify_tls = verify_tls;
  return SimpleHttp(req);
}

Status HttpError(const std::string& what, const HttpAnswer& a) {
  const std::string snippet = a.body.substr(0, 200);
  const std::string msg =
      what + ": HTTP " + std::to_string(a.code) + (snippet.empty() ? "" : " (" + snippet + ")");
  if (a.code == 401 || a.code == 403 || a.code == 404) return Status::PermissionDenied(msg);
  return Status::Unavailable(msg);
}

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::PermissionDenied("cannot read the token file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  if (t.empty()) return Status::PermissionDenied("the token file " + path + " is empty");
  return t;
}

Result<SystemTime> Expiration(const std::string& text, const std::string& what) {
  const int64_t secs = ParseIso8601(text);
  if (secs <= 0) {
    return Status::Internal(what + ": unreadable Expiration '" + text.substr(0, 40) + "'");
  }
  return std::chrono::system_clock::from_time_t(static_cast<time_t>(secs));
}

// The JSON shape both metadata services answer with.
Result<TemporaryCredentials> FromJson(const std::string& body, const std::string& what) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Internal(what + ": the answer is not a JSON object");
  auto str = [&](const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  if (j.contains("Code") && str("Code") != "Success") {
    return Status::PermissionDenied(what + ": Code " + str("Code") + ": " + str("Message"));
  }
  TemporaryCredentials t;
  t.creds.access_key_id = str("AccessKeyId");
  t.creds.secret_access_key = str("SecretAccessKey");
  t.creds.session_token = str("Token");
  if (t.creds.access_key_id.empty() || t.creds.secret_access_key.empty()) {
    return Status::Internal(what + ": the answer lacks AccessKeyId or SecretAccessKey");
  }
  if (!str("Expiration").empty()) {
    KVFS_ASSIGN_OR_RETURN(t.expiration, Expiration(str("Expiration"), what));
  }
  return t;
}

const tinyxml2::XMLElement* Child(const tinyxml2::XMLNode* n, const char* name) {
  return n ? n->FirstChildElement(name) : nullptr;
}

std::string Text(const tinyxml2::XMLElement* e) { return e && e->GetText() ? e->GetText() : ""; }

std::string FormEncode(const std::string& s) { return UriEncode(s, /*encode_slash=*/true); }

const tinyxml2::XMLElement* Path(const tinyxml2::XMLNode* n,
                                 std::initializer_list<const char*> names) {
  const tinyxml2::XMLElement* e = nullptr;
  for (const char* name : names) {
    e = Child(n, name);
    n = e;
  }
  return e;
}

// An XML answer carrying a <Credentials> element (STS AssumeRole and AssumeRoleWithWebIdentity,
// S3 Express CreateSession): `creds_path` leads to it, `error_path` to the error document.
Result<TemporaryCredentials> CredentialsFromXml(const HttpAnswer& a,
                                                std::initializer_list<const char*> error_path,
                                                std::initializer_list<const char*> creds_path,
                                                const std::string& what) {
  tinyxml2::XMLDocument doc;
  const bool parsed = doc.Parse(a.body.data(), a.body.size()) == tinyxml2::XML_SUCCESS;
  if (a.code != 200) {
    const auto* err = parsed ? Path(&doc, error_path) : nullptr;
    if (err != nullptr) {
      const std::string msg =
          what + ": " + Text(Child(err, "Code")) + ": " + Text(Child(err, "Message"));
      return a.code >= 500 ? Status::Unavailable(msg) : Status::PermissionDenied(msg);
    }
    return HttpError(what, a);
  }
  const auto* c = Path(&doc, creds_path);
  if (c == nullptr) return Status::Internal(what + ": no Credentials in the answer");
  TemporaryCredentials t;
  t.creds.access_key_id = Text(Child(c, "AccessKeyId"));
  t.creds.secret_access_key = Text(Child(c, "SecretAccessKey"));
  t.creds.session_token = Text(Child(c, "SessionToken"));
  if (t.creds.access_key_id.empty() || t.creds.secret_access_key.empty()) {
    return Status::Internal(what + ": the answer lacks AccessKeyId or SecretAccessKey");
  }
  KVFS_ASSIGN_OR_RETURN(t.expiration, Expiration(Text(Child(c, "Expiration")), what));
  return t;
}

// The STS answer of `action` (AssumeRole, AssumeRoleWithWebIdentity).
Result<TemporaryCredentials> FromStsXml(const HttpAnswer& a, const std::string& action,
                                        const std::string& what) {
  const std::string response = action + "Response", result = action + "Result";
  return CredentialsFromXml(a, {"ErrorResponse", "Error"},
                            {response.c_str(), result.c_str(), "Credentials"}, what);
}

// The header lines of a request signed by hand: curl sends Host itself, from the URL.
std::vector<std::string> SignedHeaderLines(const KeyValues& headers, const SigV4Signature& sig) {
  std::vector<std::string> lines;
  for (const auto& [k, v] : headers) {
    if (k != "Host") lines.push_back(k + ": " + v);
  }
  lines.push_back("Authorization: " + sig.authorization);
  return lines;
}

// "host" or "host:port" of an endpoint URL, as the Host header carries it.
Result<std::string> HostOf(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return Status::InvalidArgument("not a URL: " + url);
  const size_t start = scheme + 3;
  const size_t end = url.find('/', start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

CredentialFetch AssumeRoleFetch(const std::string& sts_endpoint, const std::string& region,
                                const std::string& role_arn, const std::string& session_name,
                                const std::string& external_id,
                                std::shared_ptr<CredentialProvider> source) {
  return [=]() -> Result<TemporaryCredentials> {
    const std::string what = "STS AssumeRole at " + sts_endpoint + " for " + role_arn;
    KVFS_ASSIGN_OR_RETURN(S3Credentials base, source->Get());
    KVFS_ASSIGN_OR_RETURN(std::string host, HostOf(sts_endpoint));
    std::string form = "Action=AssumeRole&Version=2011-06-15&RoleArn=" + FormEncode(role_arn) +
                       "&RoleSessionName=" + FormEncode(session_name);
    if (!external_id.empty()) form += "&ExternalId=" + FormEncode(external_id);
    const std::string amz_date = AmzDate(std::time(nullptr));
    KeyValues headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                         {"Host", host},
                         {"x-amz-date", amz_date}};
    if (!base.session_token.empty()) {
      headers.emplace_back("x-amz-security-token", base.session_token);
    }
    // Signed with the source's credentials for the service "sts", body hash included.
    const SigV4Signature sig =
        SignV4(SigV4Request{"POST", "/", {}, headers, Sha256Hex(form)}, base.access_key_id,
               base.secret_access_key, region, "sts", amz_date);
    std::vector<std::string> lines = SignedHeaderLines(headers, sig);
    lines.push_back("Accept: application/xml");
    KVFS_ASSIGN_OR_RETURN(HttpAnswer a, Exchange("POST", sts_endpoint + "/", lines, form, 5000));
    KVFS_ASSIGN_OR_RETURN(TemporaryCredentials t, FromStsXml(a, "AssumeRole", what));
    t.creds.source = "role " + role_arn + " (AssumeRole with " + source->source() + ")";
    return t;
  };
}

// Runs `command` through the shell, as the AWS CLI does (the setting is a command line), in a
// process group of its own, and returns what it prints. Past `timeout_ms` the whole group is
// killed: a command that never answers (a prompt nobody sees, a hung helper it started) would
// otherwise hang the mount, whose first fetch waits for it. The command line itself is never
// put into messages: it may carry a token or a password.
static Result<std::string> RunCredentialProcess(const std::string& command, const std::string& what,
                                                int timeout_ms) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::FromErrno(errno, what + ": pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);  // dup2 clears CLOEXEC
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a timeout kills what it started too
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  // posix_spawn, not fork: the daemon has threads, and the child must not touch their locks.
  const int err =
      posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    return Status::FromErrno(err, what + ": cannot start /bin/sh");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto left_ms = [&deadline] {
    auto d = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<int64_t>(0, d.count()));
  };
  std::string out;
  bool timed_out = false;
  for (;;) {  // until end of file: every process holding the pipe is done with it
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, left_ms());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      timed_out = true;
      break;
    }
    char buf[4096];
    const ssize_t got = n > 0 ? read(fds[0], buf, sizeof(buf)) : -1;
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(got));  // a bounded answer
  }
  close(fds[0]);
  int st = 0;
  while (!timed_out) {  // it closed its output; it still has to exit in time
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return Status::FromErrno(errno, what + ": waitpid");
    if (left_ms() == 0) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timed_out) {
    kill(-pid, SIGKILL);  // the group: the shell and whatever it started
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return Status::Unavailable(what + " did not answer within " +
                               std::to_string(timeout_ms / 1000) +
                               " s (credential_process_timeout_secs); it was killed");
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return Status::PermissionDenied(what + " failed (" +
                                    (WIFEXITED(st)
                                         ? "exit status " + std::to_string(WEXITSTATUS(st))
                                         : "killed by signal " + std::to_string(WTERMSIG(st))) +
                                    ")");
  }
  return out;
}

CredentialFetch ProcessFetch(const std::string& command, const std::string& what, int timeout_ms) {
  return [command, what, timeout_ms]() -> Result<TemporaryCredentials> {
    KVFS_ASSIGN_OR_RETURN(std::string out, RunCredentialProcess(command, what, timeout_ms));
    nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("Version") || j["Version"] != 1) {
      return Status::Internal(what + ": the output is not a JSON object with \"Version\": 1");
    }
    auto str = [&](const char* k) {
      return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
    };
    TemporaryCredentials t;
    t.creds = {str("AccessKeyId"), str("SecretAccessKey"), str("SessionToken"), what};
    if (t.creds.access_key_id.empty() || t.creds.secret_access_key.empty()) {
      return Status::Internal(what + ": the output lacks AccessKeyId or SecretAccessKey");
    }
    if (!str("Expiration").empty()) {
      KVFS_ASSIGN_OR_RETURN(t.expiration, Expiration(str("Expiration"), what));
    }
    return t;
  };
}

CredentialFetch ExpressSessionFetch(const ExpressSessionTarget& target,
                                    std::shared_ptr<CredentialProvider> base) {
  return [target, base]() -> Result<TemporaryCredentials> {
    const std::string what = "S3 Express CreateSession at " + target.url;
    KVFS_ASSIGN_OR_RETURN(S3Credentials iam, base->Get());
    const std::string amz_date = AmzDate(std::time(nullptr));
    KeyValues headers = {{"Host", target.host},
                         {"x-amz-content-sha256", kEmptySha256},
                         {"x-amz-create-session-mode", "ReadWrite"},
                         {"x-amz-date", amz_date}};
    if (!iam.session_token.empty()) headers.emplace_back("x-amz-security-token", iam.session_token);
    // Signed with the IAM credentials for the service "s3express"; the session's own
    // credentials then sign every data request.
    const SigV4Signature sig =
        SignV4(SigV4Request{"GET", target.canonical_uri, {{"session", ""}}, headers, kEmptySha256},
               iam.access_key_id, iam.secret_access_key, target.region, "s3express", amz_date);
    KVFS_ASSIGN_OR_RETURN(
        HttpAnswer a, Exchange("GET", target.url, SignedHeaderLines(headers, sig), "", 5000, false,
                               target.ca_bundle, target.verify_tls));
    return CredentialsFromXml(a, {"Error"}, {"CreateSessionResult", "Credentials"}, what);
  };
}

CredentialFetch ImdsFetch(const std::string& endpoint, bool allow_v1) {
  return [endpoint, allow_v1]() -> Result<TemporaryCredentials> {
    const std::string what = "EC2 instance metadata at " + endpoint;
    // IMDSv2: a session token first. IMDSv1 (no token) only when allowed (KVFS_IMDS_V1=1) and the
    // service does not offer tokens.
    KVFS_ASSIGN_OR_RETURN(
        HttpAnswer tok, Exchange("PUT", endpoint + "/latest/api/token",
                                 {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, "", 1000, true));
    std::vector<std::string> auth_headers;
    if (tok.code == 200) {
      auth_headers.push_back("X-aws-ec2-metadata-token: " + tok.body);
    } else if (!allow_v1 || !(tok.code == 403 || tok.code == 404 || tok.code == 405)) {
      return HttpError(what + ": PUT /latest/api/token" +
                           (allow_v1 ? "" : " (IMDSv1 is off; KVFS_IMDS_V1=1 allows it)"),
                       tok);
    }
    const std::string base = endpoint + "/latest/meta-data/iam/security-credentials/";
    KVFS_ASSIGN_OR_RETURN(HttpAnswer role, Exchange("GET", base, auth_headers, "", 1000, true));
    if (role.code != 200) return HttpError(what + ": no instance role (GET " + base + ")", role);
    std::string name = role.body.substr(0, role.body.find('\n'));
    if (name.empty()) return Status::PermissionDenied(what + ": no instance role attached");
    KVFS_ASSIGN_OR_RETURN(HttpAnswer creds,
                          Exchange("GET", base + name, auth_headers, "", 2000, true));
    if (creds.code != 200) return HttpError(what + ": credentials of role " + name, creds);
    KVFS_ASSIGN_OR_RETURN(TemporaryCredentials t, FromJson(creds.body, what));
    t.creds.source = "EC2 instance role " + name + " (instance metadata)";
    return t;
  };
}

CredentialFetch ContainerFetch(const std::string& uri, const std::string& token_file,
                               const std::string& token) {
  return [uri, token_file, token]() -> Result<TemporaryCredentials> {
    const std::string what = "container credentials at " + uri;
    std::vector<std::string> headers;
    if (!token_file.empty()) {
      KVFS_ASSIGN_OR_RETURN(std::string t, ReadToken(token_file));  // rotated: read each time
      headers.push_back("Authorization: " + t);
    } else if (!token.empty()) {
      headers.push_back("Authorization: " + token);
    }
    KVFS_ASSIGN_OR_RETURN(HttpAnswer a, Exchange("GET", uri, headers, "", 2000, true));
    if (a.code != 200) return HttpError(what, a);
    KVFS_ASSIGN_OR_RETURN(TemporaryCredentials t, FromJson(a.body, what));
    t.creds.source = "container credentials (" + uri + ")";
    return t;
  };
}

CredentialFetch WebIdentityFetch(const std::string& sts_endpoint, const std::string& role_arn,
                                 const std::string& session_name, const std::string& token_file) {
  return [=]() -> Result<TemporaryCredentials> {
    const std::string what =
        "STS AssumeRoleWithWebIdentity at " + sts_endpoint + " for " + role_arn;
    KVFS_ASSIGN_OR_RETURN(std::string token, ReadToken(token_file));
    // Unsigned: the web identity token is the proof.
    const std::string form =
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + FormEncode(role_arn) +
        "&RoleSessionName=" + FormEncode(session_name) + "&WebIdentityToken=" + FormEncode(token);
    KVFS_ASSIGN_OR_RETURN(HttpAnswer a, Exchange("POST", sts_endpoint + "/",
                                                 {"Content-Type: application/x-www-form-urlencoded",
                                                  "Accept: application/xml"},
                                                 form, 5000));
    KVFS_ASSIGN_OR_RETURN(TemporaryCredentials t, FromStsXml(a, "AssumeRoleWithWebIdentity", what));
    t.creds.source = "web identity (" + role_arn + " via " + sts_endpoint + ")";
    return t;
  };
}

namespace {

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
