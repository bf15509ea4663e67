#include "objstore/object_store.h"

#include <cstdio>
#include <future>
#include <memory>

namespace kvfs {

std::string FormatCrc32c(uint32_t crc) {
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", crc);
  return buf;
}

std::optional<uint32_t> ParseCrc32c(const std::string& hex) {
  // Exactly 8 hex digits: anything else (another tool's value, damage) counts as no checksum.
  if (hex.size() != 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : hex) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = v << 4 | static_cast<uint32_t>(d);
  }
  return v;
}

// Each synchronous form parks the caller on a promise that the callback fulfils. The callback runs
// on the store's I/O thread (or inline), never on the waiting thread, so this cannot deadlock as
// long as callers respect the rule in the header (no synchronous calls from callbacks).
Result<uint64_t> ObjectStore::Get(const GetRequest& req, char* dst) {
  std::promise<Result<uint64_t>> p;
  auto f = p.get_future();
  GetAsync(req, dst, [&p](Result<uint64_t> r) { p.set_value(std::move(r)); });
  return f.get();
}

void ObjectStore::GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) {
  if (req.length == GetRequest::kToEnd) {
    done(Status::InvalidArgument("GET " + req.key + ": this store needs the length of a range"));
    return;
  }
  // shared_ptr: std::function needs a copyable callback.
  auto buf = std::shared_ptr<char[]>(new char[req.length]);
  GetAsync(req, buf.get(),
           [buf, sink = std::move(sink), done = std::move(done)](Result<uint64_t> got) {
             if (got.ok() && *got > 0) {
               Status st = sink(buf.get(), *got);
               if (!st.ok()) return done(std::move(st));
             }
             done(std::move(got));
           });
}

Result<ObjectInfo> ObjectStore::Put(const std::string& key, const Body& body,
                                    const PutOptions& opts) {
  std::promise<Result<ObjectInfo>> p;
  auto f = p.get_future();
  PutAsync(key, body, opts, [&p](Result<ObjectInfo> r) { p.set_value(std::move(r)); });
  return f.get();
}

Result<std::string> ObjectStore::UploadPart(const std::string& key, const std::string& upload_id,
                                            int part_number, const Body& body) {
  std::promise<Result<std::string>> p;
  auto f = p.get_future();
  UploadPartAsync(key, upload_id, part_number, body,
                  [&p](Result<std::string> r) { p.set_value(std::move(r)); });
  return f.get();
}

Status ObjectSizeChanged(const std::string& key, uint64_t listed_size, const std::string& detail) {
  return Status::PreconditionFailed("object " + key + " does not have its listed size " +
                                    std::to_string(listed_size) + " (it changed): " + detail);
}

}  // namespace kvfs
