#include "objstore/object_store.h"

#include <future>

namespace kvfs {

// Each synchronous form parks the caller on a promise that the callback fulfils. The callback runs
// on the store's I/O thread (or inline), never on the waiting thread, so this cannot deadlock as
// long as callers respect the rule in the header (no synchronous calls from callbacks).
Result<uint64_t> ObjectStore::Get(const GetRequest& req, char* dst) {
  std::promise<Result<uint64_t>> p;
  auto f = p.get_future();
  GetAsync(req, dst, [&p](Result<uint64_t> r) { p.set_value(std::move(r)); });
  return f.get();
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

}  // namespace kvfs
