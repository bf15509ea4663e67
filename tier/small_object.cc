#include "tier/small_object.h"

#include <future>
#include <memory>

namespace kvfs {
namespace {

Result<std::string> ReadKnownSize(ObjectStore* store, const std::string& key, uint64_t size) {
  std::string text(size, '\0');
  GetRequest req;
  req.key = key;
  req.length = size;
  KVFS_ASSIGN_OR_RETURN(uint64_t got, store->Get(req, text.data()));
  text.resize(got);
  return text;
}

}  // namespace

Result<std::string> ReadSmallObject(ObjectStore* store, const std::string& key,
                                    uint64_t max_bytes) {
  // Streamed, so one request reads an object of unknown size; stores that need a range length
  // (the in-memory fake) are asked its size first.
  auto text = std::make_shared<std::string>();
  std::promise<Result<uint64_t>> done;
  std::future<Result<uint64_t>> result = done.get_future();
  GetRequest req;
  req.key = key;
  store->GetStreamAsync(
      req,
      [text, max_bytes, key](const char* data, size_t n) -> Status {
        if (text->size() + n > max_bytes) {
          return Status::ResourceExhausted("tier object " + key + " is larger than " +
                                           std::to_string(max_bytes) + " bytes");
        }
        text->append(data, n);
        return Status::OK();
      },
      [&done](Result<uint64_t> r) { done.set_value(std::move(r)); });
  Result<uint64_t> r = result.get();
  if (r.ok()) return std::move(*text);
  if (r.status().code() != StatusCode::kInvalidArgument || !text->empty()) return r.status();
  KVFS_ASSIGN_OR_RETURN(ObjectInfo info, store->Head(key));
  if (info.size > max_bytes) {
    return Status::ResourceExhausted("tier object " + key + " is larger than " +
                                     std::to_string(max_bytes) + " bytes");
  }
  return ReadKnownSize(store, key, info.size);
}

Result<ObjectInfo> WriteSmallObject(ObjectStore* store, const std::string& key,
                                    const std::string& text, bool if_none_match) {
  PutOptions opts;
  opts.if_none_match = if_none_match;
  return store->Put(key, Body::FromMemory(text.data(), text.size()), opts);
}

}  // namespace kvfs
