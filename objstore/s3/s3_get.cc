#include "objstore/s3/s3_get.h"

#include <cstring>
#include <string_view>

#include "objstore/s3/s3_xml.h"

namespace kvfs::s3 {
namespace {

// State of one GET across its attempts. Touched only on the loop thread (one attempt at a time).
struct GetState {
  GetRequest req;
  ObjectStore::GetSink sink;
  uint64_t received = 0;  // bytes given to the sink so far, over all attempts
  std::string etag;       // pinned version (caller's if_match, else the first response's ETag)
  int64_t object_size = -1;

  // Per attempt.
  uint64_t attempt_start = 0;  // object offset this attempt asked for
  uint64_t skip = 0;           // leading bytes to drop (a 200 to a ranged request)
  bool saw_headers = false;
  bool info_reported = false;  // req.on_info called (once per GET, not per attempt)
  Status sink_error;
};

std::string Quote(const std::string& etag) { return "\"" + etag + "\""; }

// Validates the response headers of an attempt once (before its first body byte, or at its end
// for an empty body). Fills object_size, pins the ETag. Returns a non-OK status to stop.
Status OnHeaders(GetState* s, const HttpExchange& ex, const std::string& what) {
  s->saw_headers = true;
  const std::string etag = StripQuotes(ex.Header("etag"));
  if (!s->etag.empty() && !etag.empty() && etag != s->etag) {
    return Status::PreconditionFailed(what + ": the object changed while it was read (ETag " +
                                      etag + ", expected " + s->etag + ")");
  }
  if (s->etag.empty()) s->etag = etag;
  if (ex.http_status == 206) {
    uint64_t first = 0, last = 0;
    int64_t total = -1;
    if (!ParseContentRange(ex.Header("content-range"), &first, &last, &total) ||
        first != s->attempt_start) {
      return Status::Unavailable(what + ": bad Content-Range '" + ex.Header("content-range") +
                                 "' for a request from byte " + std::to_string(s->attempt_start));
    }
    s->skip = 0;
    if (total >= 0) s->object_size = total;
  } else {
    // A full 200 body: the server ignored or did not need the Range.
    s->skip = s->attempt_start;
    const std::string len = ex.Header("content-length");
    uint64_t size = 0;
    if (!len.empty() && !ParseObjectSize(len, &size)) {
      return Status::Internal(what + ": invalid Content-Length '" + len.substr(0, 32) + "'");
    }
    if (!len.empty()) s->object_size = static_cast<int64_t>(size);
    // Fine when the whole object is what was asked for; otherwise the reply would carry bytes
    // that were not asked for (a 256 MiB body per 16 MiB part): refuse it with a clear reason.
    const bool ranged = s->attempt_start > 0 || s->req.length != GetRequest::kToEnd;
    const uint64_t want_end =
        s->req.length == GetRequest::kToEnd ? UINT64_MAX : s->req.offset + s->req.length;
    if (ranged && (s->object_size < 0 || s->attempt_start > 0 ||
                   static_cast<uint64_t>(s->object_size) > want_end)) {
      return Status::IoError(
          what + ": the server ignored the Range header (HTTP 200 with the whole " +
          (s->object_size >= 0 ? std::to_string(s->object_size) + "-byte " : std::string()) +
          "object for a request from byte " + std::to_string(s->attempt_start) +
          "); kvfs needs ranged GETs (HTTP 206)");
    }
  }
  if (!s->info_reported && s->req.on_info) {
    s->info_reported = true;
    ObjectInfo info;
    info.key = s->req.key;
    info.etag = etag;
    if (s->object_size >= 0) info.size = static_cast<uint64_t>(s->object_size);
    KvfsMetadataFromHeaders(ex, &info);
    s->req.on_info(info);
  }
  return Status::OK();
}

}  // namespace

void KvfsMetadataFromHeaders(const HttpExchange& ex, ObjectInfo* info) {
  info->crc32c = ParseCrc32c(ex.Header(kChecksumMetaHeader));
  if (info->crc32c) info->slice_crcs = SliceCrcs::Parse(ex.Header(kSliceChecksumMetaHeader));
  info->kvfs_written = info->crc32c.has_value() || ex.Header(kWriterMetaHeader) == kWriterMetaValue;
  info->user_xattrs = ex.Header(kXattrsMetaHeader);  // absent: none
}

bool ParseContentRange(const std::string& value, uint64_t* first, uint64_t* last, int64_t* total) {
  // Strict: "bytes A-B/T" or "bytes A-B/*" with plain decimals (no sign, no wrap-around of "-1"
  // or of values past 2^63-1), A <= B < T.
  std::string_view v(value);
  if (!v.starts_with("bytes ")) return false;
  v.remove_prefix(6);
  const size_t dash = v.find('-');
  const size_t slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return false;
  }
  uint64_t a = 0, b = 0, t = 0;
  const std::string_view tot = v.substr(slash + 1);
  if (!ParseObjectSize(v.substr(0, dash), &a) ||
      !ParseObjectSize(v.substr(dash + 1, slash - dash - 1), &b) || b < a ||
      (tot != "*" && (!ParseObjectSize(tot, &t) || t <= b))) {
    return false;
  }
  *first = a;
  *last = b;
  *total = tot == "*" ? -1 : static_cast<int64_t>(t);
  return true;
}

ObjectStore::GetSink MemorySink(char* dst) {
  uint64_t at = 0;
  return [dst, at](const char* data, size_t n) mutable {
    std::memcpy(dst + at, data, n);
    at += n;
    return Status::OK();
  };
}

void StartGet(S3Client* client, const GetRequest& req, ObjectStore::GetSink sink,
              ObjectStore::GetCallback done) {
  auto s = std::make_shared<GetState>();
  s->req = req;
  s->sink = std::move(sink);
  s->etag = StripQuotes(req.if_match);

  auto call = std::make_shared<S3Call>();
  call->operation = "GET";
  call->method = "GET";
  call->key = req.key;
  const std::string what = "GET " + S3Uri(client->options().bucket, req.key);

  call->prepare = [s, what](KeyValues* headers, HttpExchange* ex) {
    s->attempt_start = s->req.offset + s->received;
    s->skip = 0;
    s->saw_headers = false;
    s->sink_error = Status::OK();
    if (s->req.length != GetRequest::kToEnd) {
      const uint64_t remaining = s->req.length - s->received;
      headers->emplace_back("Range", "bytes=" + std::to_string(s->attempt_start) + "-" +
                                         std::to_string(s->attempt_start + remaining - 1));
    } else if (s->attempt_start > 0) {
      headers->emplace_back("Range", "bytes=" + std::to_string(s->attempt_start) + "-");
    }
    if (!s->etag.empty()) headers->emplace_back("If-Match", Quote(s->etag));
    ex->sink = [s, ex, what](const char* data, size_t n) {
      if (!s->saw_headers) {
        s->sink_error = OnHeaders(s.get(), *ex, what);
        if (!s->sink_error.ok()) return false;
      }
      if (s->skip > 0) {
        const size_t drop = static_cast<size_t>(std::min<uint64_t>(s->skip, n));
        s->skip -= drop;
        data += drop;
        n -= drop;
      }
      if (n == 0) return true;
      // kToEnd: the caller knows the size; nothing to check against here.
      if (n > s->req.length - s->received) {
        s->sink_error = Status::Internal(what + ": the server sent more bytes than requested");
        return false;
      }
      s->sink_error = s->sink(data, n);
      if (!s->sink_error.ok()) return false;
      s->received += n;
      return true;
    };
  };

  call->check = [s, client, call_ptr = call.get(), what](const HttpExchange& ex) -> Status {
    if (ex.sink_refused) return s->sink_error;
    if (ex.http_status == 416 && ex.curl_code == CURLE_OK) {
      return Status::OK();  // the range starts at or past the end: nothing (more) to read
    }
    if (ex.http_status == 412 && ex.curl_code == CURLE_OK) {
      Status st = Status::PreconditionFailed(
          what + ": the object no longer has ETag " + s->etag +
          (s->req.if_match.empty() ? " (it changed while it was read)" : ""));
      st.SetHttp(412, "PreconditionFailed", ex.Header("x-amz-request-id"));
      return st;
    }
    Status st = client->DefaultCheck(*call_ptr, ex);
    if (!st.ok()) return st;  // transport errors are retryable: the next attempt resumes
    if (!s->saw_headers) {
      st = OnHeaders(s.get(), ex, what);
      if (!st.ok()) return st;
    }
    // The transfer ended cleanly; make sure it delivered everything it announced.
    uint64_t want_end =
        s->req.length == GetRequest::kToEnd ? UINT64_MAX : s->req.offset + s->req.length;
    if (s->object_size >= 0) want_end = std::min<uint64_t>(want_end, s->object_size);
    if (want_end == UINT64_MAX) return Status::OK();  // size unknown: trust the clean end
    const uint64_t have_end = s->req.offset + s->received;
    if (have_end < want_end) {
      return Status::Unavailable(what + ": short body, got bytes up to " +
                                 std::to_string(have_end) + " of " + std::to_string(want_end));
    }
    return Status::OK();
  };

  call->done = [s, done = std::move(done)](Status st, std::unique_ptr<HttpExchange>) {
    if (st.ok()) {
      done(s->received);
    } else {
      done(std::move(st));
    }
  };
  client->Execute(std::move(call));
}

}  // namespace kvfs::s3
