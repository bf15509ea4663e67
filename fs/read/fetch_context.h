// What the downloads of a CachedReader share: the store, the worker threads, the counters, and
// the owner to tell when a download ends.
#pragma once

#include <cstdint>
#include <string>

#include "base/executor.h"
#include "fs/read/reader_stats.h"
#include "objstore/object_store.h"

namespace kvfs {

class ObjectFetch;

// Implemented by CachedReader. Called with no lock of the fetch held.
class FetchOwner {
 public:
  virtual ~FetchOwner() = default;
  // `f` takes no new openers from now on (complete and committed, or failed).
  virtual void FetchFinished(const std::string& key, const ObjectFetch* f) = 0;
  // `f` has no request outstanding and will start none (its last use of the shared services).
  virtual void FetchDrained() = 0;
};

struct FetchContext {
  ObjectStore* store = nullptr;
  uint64_t part_size = 16ull << 20;  // bytes per ranged GET
  Executor* workers = nullptr;
  ReaderCounters* counters = nullptr;
  FetchOwner* owner = nullptr;
  int max_parallel_parts = 8;
  // Check each download against the CRC32C recorded with the object (ObjectInfo::crc32c) before
  // any byte of it is served or cached (`verify: auto`).
  bool verify = true;
};

}  // namespace kvfs
