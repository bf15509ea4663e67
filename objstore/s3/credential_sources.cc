#include "objstore/s3/credential_sources.h"

#include <curl/curl.h>
#include <tinyxml2.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "objstore/s3/credentials.h"
#include "objstore/s3/s3_xml.h"
#include "objstore/s3/sigv4.h"

namespace kvfs::s3 {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct HttpAnswer {
  long code = 0;
  std::string body;
};

size_t Collect(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  // Credential answers are a few KiB; a bigger one is not what we asked for.
  if (body->size() + size * n > (1u << 20)) return 0;
  body->append(data, size * n);
  return size * n;
}

// One blocking exchange with a credential endpoint (metadata services are link-local, STS is
// one request per refresh): no pool, short timeouts, no retries here - the provider retries.
Result<HttpAnswer> Exchange(const std::string& method, const std::string& url,
                            const std::vector<std::string>& headers, const std::string& body,
                            long timeout_ms, bool direct = false) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  HttpAnswer a;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST" || method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 1000L));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // The metadata services are link-local: never through an HTTP proxy (as the SDKs do).
  if (direct) curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.code);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    return Status::Unavailable(method + " " + url + ": " + curl_easy_strerror(rc));
  }
  return a;
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

}  // namespace

CredentialFetch ImdsFetch(const std::string& endpoint) {
  return [endpoint]() -> Result<TemporaryCredentials> {
    const std::string what = "EC2 instance metadata at " + endpoint;
    // IMDSv2: a session token first; IMDSv1 (no token) is not used.
    KVFS_ASSIGN_OR_RETURN(
        HttpAnswer tok, Exchange("PUT", endpoint + "/latest/api/token",
                                 {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, "", 1000, true));
    if (tok.code != 200) return HttpError(what + ": PUT /latest/api/token", tok);
    const std::string auth = "X-aws-ec2-metadata-token: " + tok.body;
    const std::string base = endpoint + "/latest/meta-data/iam/security-credentials/";
    KVFS_ASSIGN_OR_RETURN(HttpAnswer role, Exchange("GET", base, {auth}, "", 1000, true));
    if (role.code != 200) return HttpError(what + ": no instance role (GET " + base + ")", role);
    std::string name = role.body.substr(0, role.body.find('\n'));
    if (name.empty()) return Status::PermissionDenied(what + ": no instance role attached");
    KVFS_ASSIGN_OR_RETURN(HttpAnswer creds, Exchange("GET", base + name, {auth}, "", 2000, true));
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
    tinyxml2::XMLDocument doc;
    const bool parsed = doc.Parse(a.body.data(), a.body.size()) == tinyxml2::XML_SUCCESS;
    if (a.code != 200) {
      const auto* err = parsed ? Child(Child(&doc, "ErrorResponse"), "Error") : nullptr;
      if (err != nullptr) {
        const std::string msg =
            what + ": " + Text(Child(err, "Code")) + ": " + Text(Child(err, "Message"));
        return a.code >= 500 ? Status::Unavailable(msg) : Status::PermissionDenied(msg);
      }
      return HttpError(what, a);
    }
    const auto* c = Child(
        Child(Child(&doc, "AssumeRoleWithWebIdentityResponse"), "AssumeRoleWithWebIdentityResult"),
        "Credentials");
    if (c == nullptr) return Status::Internal(what + ": no Credentials in the answer");
    TemporaryCredentials t;
    t.creds.access_key_id = Text(Child(c, "AccessKeyId"));
    t.creds.secret_access_key = Text(Child(c, "SecretAccessKey"));
    t.creds.session_token = Text(Child(c, "SessionToken"));
    if (t.creds.access_key_id.empty() || t.creds.secret_access_key.empty()) {
      return Status::Internal(what + ": the answer lacks AccessKeyId or SecretAccessKey");
    }
    KVFS_ASSIGN_OR_RETURN(t.expiration, Expiration(Text(Child(c, "Expiration")), what));
    t.creds.source = "web identity (" + role_arn + " via " + sts_endpoint + ")";
    return t;
  };
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
    std::string sts = Env("AWS_ENDPOINT_URL_STS");
    if (sts.empty()) sts = "https://sts." + options.region + ".amazonaws.com";
    std::string session = Env("AWS_ROLE_SESSION_NAME");
    if (session.empty()) session = "kvfs-" + std::to_string(time(nullptr));
    KVFS_ASSIGN_OR_RETURN(auto p, RefreshingCredentialProvider::Create(
                                      "web identity (" + role_arn + ")",
                                      WebIdentityFetch(sts, role_arn, session, token_file)));
    return std::shared_ptr<CredentialProvider>(std::move(p));
  }
  tried.push_back(token_file.empty() && role_arn.empty()
                      ? "web identity (AWS_WEB_IDENTITY_TOKEN_FILE/AWS_ROLE_ARN unset)"
                      : "web identity (needs both AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN)");
  // 4: profiles (and, again, the explanation of 1-2).
  Result<S3Credentials> profile = ResolveCredentials(options);
  if (profile.ok()) return fixed(std::move(profile).value());
  tried.insert(tried.begin(), profile.status().message());
  // 5: container credentials.
  std::string uri = Env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (uri.empty() && !Env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").empty()) {
    uri = "http://169.254.170.2" + Env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  }
  if (!uri.empty()) {
    KVFS_ASSIGN_OR_RETURN(auto p,
                          RefreshingCredentialProvider::Create(
                              "container credentials (" + uri + ")",
                              ContainerFetch(uri, Env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
                                             Env("AWS_CONTAINER_AUTHORIZATION_TOKEN"))));
    return std::shared_ptr<CredentialProvider>(std::move(p));
  }
  tried.push_back("container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI/_RELATIVE_URI unset)");
  // 6: instance metadata, unless turned off.
  std::string disabled = Env("AWS_EC2_METADATA_DISABLED");
  if (disabled == "true" || disabled == "TRUE" || disabled == "1") {
    tried.push_back("EC2 instance metadata (AWS_EC2_METADATA_DISABLED)");
  } else {
    std::string imds = Env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    if (imds.empty()) imds = "http://169.254.169.254";
    while (!imds.empty() && imds.back() == '/') imds.pop_back();
    auto p = RefreshingCredentialProvider::Create("EC2 instance metadata (" + imds + ")",
                                                  ImdsFetch(imds));
    if (p.ok()) return std::shared_ptr<CredentialProvider>(std::move(p).value());
    tried.push_back(p.status().message());
  }
  std::string msg = tried.front();  // "no S3 credentials found; tried: config ...; profile ..."
  for (size_t i = 1; i < tried.size(); ++i) msg += "; " + tried[i];
  return Status::PermissionDenied(msg);
}

}  // namespace kvfs::s3
