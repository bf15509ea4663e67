#include "fs/read/direct_reader.h"

#include <algorithm>

namespace kvfs {

namespace {

class DirectHandle : public ReadHandle {
 public:
  DirectHandle(std::shared_ptr<ObjectStore> store, ObjectInfo info)
      : store_(std::move(store)), info_(std::move(info)) {}

  Result<uint64_t> Read(uint64_t offset, uint64_t size, char* buf) override {
    if (offset >= info_.size || size == 0) return uint64_t{0};
    uint64_t want = std::min(size, info_.size - offset);
    GetRequest req;
    req.key = info_.key;
    req.offset = offset;
    req.length = want;
    req.if_match = info_.etag;
    KVFS_ASSIGN_OR_RETURN(uint64_t got, store_->Get(req, buf));
    if (got != want) {
      // The object is shorter than it was at open: it changed under the handle.
      return ObjectSizeChanged(info_.key, info_.size,
                               "GET of " + std::to_string(want) + " bytes at " +
                                   std::to_string(offset) + " returned " + std::to_string(got));
    }
    return got;
  }

 private:
  const std::shared_ptr<ObjectStore> store_;
  const ObjectInfo info_;
};

class DirectReader : public ChunkReader {
 public:
  explicit DirectReader(std::shared_ptr<ObjectStore> store) : store_(std::move(store)) {}

  Result<std::unique_ptr<ReadHandle>> Open(const std::string& key,
                                           const ObjectInfo& info) override {
    ObjectInfo copy = info;
    copy.key = key;
    return std::unique_ptr<ReadHandle>(new DirectHandle(store_, std::move(copy)));
  }

 private:
  const std::shared_ptr<ObjectStore> store_;
};

}  // namespace

std::shared_ptr<ChunkReader> NewDirectReader(std::shared_ptr<ObjectStore> store) {
  return std::make_shared<DirectReader>(std::move(store));
}

}  // namespace kvfs
