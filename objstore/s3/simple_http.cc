#include "objstore/s3/simple_http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>

namespace kvfs::s3 {
namespace {

size_t Collect(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > (1u << 20)) return 0;  // not what was asked for: stop
  body->append(data, size * n);
  return size * n;
}

size_t CollectHeader(char* data, size_t size, size_t n, void* out) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(out);
  const std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string::npos && headers->size() < 200) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    const size_t b = value.find_first_not_of(" \t");
    const size_t e = value.find_last_not_of(" \t\r\n");
    (*headers)[name] = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  }
  return size * n;
}

}  // namespace

Result<SimpleHttpAnswer> SimpleHttp(const SimpleHttpRequest& req) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  curl_slist* list = nullptr;
  for (const auto& h : req.headers) list = curl_slist_append(list, h.c_str());
  SimpleHttpAnswer a;
  curl_easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  if (req.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  if (req.method == "POST" || req.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &CollectHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &a.headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, std::min(req.timeout_ms, 1000L));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (req.direct) curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  if (!req.ca_bundle.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, req.ca_bundle.c_str());
  if (!req.verify_tls) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.code);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    return Status::Unavailable(req.method + " " + req.url + ": " + curl_easy_strerror(rc));
  }
  return a;
}

}  // namespace kvfs::s3
