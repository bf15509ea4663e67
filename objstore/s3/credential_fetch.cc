#include "objstore/s3/credential_fetch.h"

#include <tinyxml2.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <vector>

#include "objstore/s3/json_object.h"
#include "objstore/s3/s3_xml.h"
#include "objstore/s3/sigv4.h"
#include "objstore/s3/simple_http.h"

namespace kvfs::s3 {
namespace {

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

// The JSON shape both metadata services answer with.
Result<TemporaryCredentials> FromJson(const std::string& body, const std::string& what) {
  const std::optional<JsonObject> j = JsonObject::Parse(body);
  if (!j) return Status::Internal(what + ": the answer is not a JSON object");
  auto str = [&](const char* k) { return j->String(k); };
  if (j->Has("Code") && str("Code") != "Success") {
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
    KVFS_ASSIGN_OR_RETURN(t.expiration, ParseExpiration(str("Expiration"), what));
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
  KVFS_ASSIGN_OR_RETURN(t.expiration, ParseExpiration(Text(Child(c, "Expiration")), what));
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

Result<SystemTime> ParseExpiration(const std::string& text, const std::string& what) {
  const int64_t secs = ParseIso8601(text);
  if (secs <= 0) {
    return Status::Internal(what + ": unreadable Expiration '" + text.substr(0, 40) + "'");
  }
  return std::chrono::system_clock::from_time_t(static_cast<time_t>(secs));
}

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

}  // namespace kvfs::s3
