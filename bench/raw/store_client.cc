// The raw client on kvfs's own S3 store: the limit the daemon's object path can reach.
#include <latch>
#include <vector>

#include "base/mutex.h"
#include "bench/raw/raw_client.h"
#include "objstore/s3/s3_store.h"

namespace kvbench {
namespace {

using kvfs::Result;
using kvfs::Status;

// Thin adapter; thread-safe because the shared store is (each worker still gets its own adapter).
class StoreClient : public RawClient {
 public:
  explicit StoreClient(std::shared_ptr<kvfs::ObjectStore> store) : store_(std::move(store)) {}

  Status Put(const std::string& key, const char* data, uint64_t n) override {
    auto r = store_->Put(key, kvfs::Body::FromMemory(data, n));
    return r.ok() ? Status::OK() : r.status();
  }

  Status Get(const std::string& key, char* dst, uint64_t size, uint64_t part) override {
    size_t n = static_cast<size_t>((size + part - 1) / part);
    std::latch done(static_cast<std::ptrdiff_t>(n));
    kvfs::Mutex mu;
    Status first;  // first failure, guarded by mu
    for (size_t i = 0; i < n; ++i) {
      kvfs::GetRequest req;
      req.key = key;
      req.offset = i * part;
      req.length = std::min(part, size - req.offset);
      uint64_t want = req.length;
      store_->GetAsync(req, dst + req.offset, [&, want](Result<uint64_t> r) {
        if (!r.ok() || *r != want) {
          kvfs::MutexLock l(&mu);
          if (first.ok()) {
            first = r.ok() ? Status::IoError("GET " + key + ": short read") : r.status();
          }
        }
        done.count_down();
      });
    }
    done.wait();
    return first;
  }

  Result<bool> Exists(const std::string& key) override {
    auto r = store_->Head(key);
    if (r.ok()) return true;
    if (r.status().code() == kvfs::StatusCode::kNotFound) return false;
    return r.status();
  }

 private:
  std::shared_ptr<kvfs::ObjectStore> store_;
};

}  // namespace

Result<RawClientFactory> StoreClientFactory(const RawConfig& cfg) {
  kvfs::S3Options o;
  o.bucket = cfg.bucket;
  o.endpoint = cfg.endpoint;
  o.region = cfg.region;
  o.path_style = true;
  o.credentials.access_key_id = cfg.access_key;
  o.credentials.secret_access_key = cfg.secret_key;
  o.credentials.source = "raw_s3 environment";
  auto store = kvfs::NewS3Store(o);
  if (!store.ok()) return store.status();
  std::shared_ptr<kvfs::ObjectStore> s = std::move(store).value();
  return RawClientFactory([s] { return std::make_unique<StoreClient>(s); });
}

}  // namespace kvbench
