// The fallback raw client: libcurl with its own SigV4 signing. Keys are percent-encoded in the
// URL (curl signs the path as given; RGW re-encodes '@' as %40 when it checks the signature).
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "bench/raw/raw_client.h"

namespace kvbench {
namespace {

using kvfs::Result;
using kvfs::Status;

std::string Encode(const std::string& key) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// A destination window for one GET.
struct Sink {
  char* dst;
  uint64_t cap;
  uint64_t got = 0;
};

size_t WriteCb(char* p, size_t sz, size_t n, void* ud) {
  auto* s = static_cast<Sink*>(ud);
  size_t len = sz * n;
  if (s->got + len > s->cap) return 0;  // more than asked: abort the transfer
  std::memcpy(s->dst + s->got, p, len);
  s->got += len;
  return len;
}

size_t DiscardCb(char*, size_t sz, size_t n, void*) { return sz * n; }

struct Source {
  const char* data;
  uint64_t n;
  uint64_t pos = 0;
};

size_t ReadCb(char* p, size_t sz, size_t n, void* ud) {
  auto* s = static_cast<Source*>(ud);
  size_t len = std::min<uint64_t>(sz * n, s->n - s->pos);
  std::memcpy(p, s->data + s->pos, len);
  s->pos += len;
  return len;
}

// Not thread-safe: one per worker thread. Keeps its handles (and so its connections) across
// requests.
class CurlClient : public RawClient {
 public:
  explicit CurlClient(const RawConfig& cfg) : cfg_(cfg) {
    sigv4_ = "aws:amz:" + cfg.region + ":s3";
    userpwd_ = cfg.access_key + ":" + cfg.secret_key;
    headers_ = curl_slist_append(nullptr, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    multi_ = curl_multi_init();
    single_ = NewHandle();
  }
  ~CurlClient() override {
    for (CURL* h : parts_) curl_easy_cleanup(h);
    curl_easy_cleanup(single_);
    curl_multi_cleanup(multi_);
    curl_slist_free_all(headers_);
  }

  Status Put(const std::string& key, const char* data, uint64_t n) override {
    Source src{data, n};
    Reset(single_, key);
    curl_easy_setopt(single_, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(single_, CURLOPT_READFUNCTION, ReadCb);
    curl_easy_setopt(single_, CURLOPT_READDATA, &src);
    curl_easy_setopt(single_, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(n));
    // An "Expect:" header line to suppress 100-continue would be signed by curl's SigV4 but not
    // sent (403); a zero wait does the same without touching the header list.
    curl_easy_setopt(single_, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
    curl_easy_setopt(single_, CURLOPT_WRITEFUNCTION, DiscardCb);
    return Check(single_, curl_easy_perform(single_), "PUT " + key, 200);
  }

  Status Get(const std::string& key, char* dst, uint64_t size, uint64_t part) override {
    size_t n = static_cast<size_t>((size + part - 1) / part);
    while (parts_.size() < n) parts_.push_back(NewHandle());
    std::vector<Sink> sinks(n);
    std::vector<std::string> ranges(n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t off = i * part, len = std::min(part, size - off);
      sinks[i] = Sink{dst + off, len};
      ranges[i] = std::to_string(off) + "-" + std::to_string(off + len - 1);
      Reset(parts_[i], key);
      curl_easy_setopt(parts_[i], CURLOPT_RANGE, ranges[i].c_str());
      curl_easy_setopt(parts_[i], CURLOPT_WRITEFUNCTION, WriteCb);
      curl_easy_setopt(parts_[i], CURLOPT_WRITEDATA, &sinks[i]);
      curl_multi_add_handle(multi_, parts_[i]);
    }
    int running = 0;
    do {
      curl_multi_perform(multi_, &running);
      if (running) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    } while (running);
    for (size_t i = 0; i < n; ++i) curl_multi_remove_handle(multi_, parts_[i]);
    // A transport error leaves the response code at 0 or the body short: both are caught here.
    Status st;
    for (size_t i = 0; i < n && st.ok(); ++i) {
      long code = 0;
      curl_easy_getinfo(parts_[i], CURLINFO_RESPONSE_CODE, &code);
      if (code != 206 && code != 200) {
        st = Status::IoError("GET " + key + " range " + ranges[i] + ": HTTP " +
                             std::to_string(code));
      } else if (sinks[i].got != sinks[i].cap) {
        st = Status::IoError("GET " + key + " range " + ranges[i] + ": short body (" +
                             std::to_string(sinks[i].got) + " bytes)");
      }
    }
    return st;
  }

  Result<bool> Exists(const std::string& key) override {
    Reset(single_, key);
    curl_easy_setopt(single_, CURLOPT_NOBODY, 1L);
    CURLcode rc = curl_easy_perform(single_);
    long code = 0;
    curl_easy_getinfo(single_, CURLINFO_RESPONSE_CODE, &code);
    if (rc == CURLE_OK && code == 404) return false;
    KVFS_RETURN_IF_ERROR(Check(single_, rc, "HEAD " + key, 200));
    return true;
  }

 private:
  CURL* NewHandle() {
    CURL* h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    return h;
  }

  void Reset(CURL* h, const std::string& key) {
    curl_easy_reset(h);  // keeps the connection
    url_ = cfg_.endpoint + "/" + cfg_.bucket + "/" + Encode(key);
    curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4_.c_str());
    curl_easy_setopt(h, CURLOPT_USERPWD, userpwd_.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  }

  Status Check(CURL* h, CURLcode rc, const std::string& what, long want) {
    if (rc != CURLE_OK) return Status::IoError(what + ": " + curl_easy_strerror(rc));
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != want) return Status::IoError(what + ": HTTP " + std::to_string(code));
    return Status::OK();
  }

  RawConfig cfg_;
  std::string sigv4_, userpwd_, url_;
  curl_slist* headers_ = nullptr;
  CURLM* multi_ = nullptr;
  CURL* single_ = nullptr;
  std::vector<CURL*> parts_;
};

}  // namespace

RawClientFactory CurlClientFactory(const RawConfig& cfg) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  return [cfg] { return std::make_unique<CurlClient>(cfg); };
}

}  // namespace kvbench
