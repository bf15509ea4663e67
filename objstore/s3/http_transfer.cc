#include "objstore/s3/http_transfer.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

#include "base/posix_io.h"

namespace kvfs::s3 {
namespace {

size_t OnHeader(char* buf, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const size_t len = size * n;
  std::string_view line(buf, len);
  if (line.starts_with("HTTP/")) {
    ex->response_headers.clear();  // a new response (e.g. after "100 Continue")
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  ex->response_headers[name] = std::string(value);
  return len;
}

size_t OnWrite(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &code);
  ex->http_status = code;  // the sink looks at it (and at the headers) on its first call
  if (code >= 200 && code < 300 && ex->sink) {
    if (!ex->sink(data, len)) {
      ex->sink_refused = true;
      return 0;  // aborts with CURLE_WRITE_ERROR
    }
    ex->sink_bytes += len;
    return len;
  }
  const size_t bound = code >= 200 && code < 300 ? kMaxCollectedBodyBytes : kMaxErrorBodyBytes;
  if (ex->body.size() + len > bound) {
    ex->body_overflow = true;
    return 0;
  }
  ex->body.append(data, len);
  return len;
}

size_t OnRead(char* buf, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const uint64_t remain = ex->upload.length - std::min(ex->upload_pos, ex->upload.length);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(remain, size * n));
  if (want == 0) return 0;
  if (ex->upload.data != nullptr) {
    std::memcpy(buf, ex->upload.data + ex->upload_pos, want);
    ex->upload_pos += want;
    return want;
  }
  Status st = PreadExact(ex->upload.fd, buf, want, ex->upload.offset + ex->upload_pos,
                         "the upload body file");
  if (!st.ok()) {
    ex->upload_error = st.message();
    return CURL_READFUNC_ABORT;
  }
  ex->upload_pos += want;
  return want;
}

// curl rewinds the body when it must resend it (e.g. a connection that died before the request
// went out on a reused connection).
int OnSeek(void* user, curl_off_t offset, int origin) {
  auto* ex = static_cast<HttpExchange*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<uint64_t>(offset) > ex->upload.length) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  ex->upload_pos = static_cast<uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

}  // namespace

void SetUpTransfer(CURL* e, HttpExchange* x, const TransferSettings& options, Clock* clock) {
  x->easy = e;
  x->upload_pos = 0;
  curl_easy_setopt(e, CURLOPT_URL, x->url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, x);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);  // keys may contain "./" or "//": send as signed
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->error_buffer);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                   options.prefer_http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  // Transfers started together (a multipart's parts, a read's ranges) wait for the first
  // connection's ALPN answer and share it when it is h2, instead of each opening a connection
  // and a TLS handshake of its own before curl knows it could multiplex.
  if (options.prefer_http2) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, options.verify_tls ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, options.verify_tls ? 2L : 0L);
  if (!options.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_bundle.c_str());
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(x->connect_timeout_ms));
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(1, (x->stall_timeout_ms + 999) / 1000)));
  int64_t timeout_ms = x->total_timeout_ms;
  if (x->deadline_ms > 0) {
    // What is left of the deadline after the wait in the queue (at least 1 ms: 0 means none).
    const int64_t left = std::max<int64_t>(1, x->deadline_ms - clock->NowMs());
    timeout_ms = timeout_ms > 0 ? std::min(timeout_ms, left) : left;
  }
  if (timeout_ms > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  }
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);

  if (x->method == "GET") {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  } else if (x->method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (x->method == "PUT") {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(x->has_upload ? x->upload.length : 0));
  } else if (x->method == "POST") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(x->has_upload ? x->upload.length : 0));
  } else {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, x->method.c_str());
  }
  if (x->method == "PUT" || x->method == "POST") {
    if (!x->has_upload) x->upload = Body::FromMemory("", 0);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, OnSeek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
  }

  // "Expect:" disables 100-continue (an extra round trip per upload); empty Accept and
  // Content-Type keep curl from adding headers the signature does not cover.
  curl_slist* list = nullptr;
  bool has_expect = false;
  for (const std::string& h : x->headers) {
    list = curl_slist_append(list, h.c_str());
    has_expect = has_expect || strncasecmp(h.c_str(), "expect:", 7) == 0;
  }
  if (!has_expect) list = curl_slist_append(list, "Expect:");
  list = curl_slist_append(list, "Accept:");
  if (x->method == "POST") list = curl_slist_append(list, "Content-Type:");
  x->header_list = list;
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);
}

}  // namespace kvfs::s3
