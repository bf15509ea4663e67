// What the downloads of a CachedReader share: the store, the worker threads, the counters, and
// the owner to tell when a download ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "fs/read/work_pool.h"
#include "objstore/object_store.h"

namespace kvfs {

class ObjectFetch;

// Counters of the read path. Thread-safe (atomics).
struct ReaderCounters {
  std::atomic<uint64_t> opens{0};
  std::atomic<uint64_t> hits{0};      // opens served from a complete cache entry
  std::atomic<uint64_t> misses{0};    // opens that started a download
  std::atomic<uint64_t> joins{0};     // opens that joined a download in progress (single flight)
  std::atomic<uint64_t> streamed{0};  // opens read without caching (too big, cache off or full)
  std::atomic<uint64_t> bytes_from_cache{0};  // read by handles from complete entries
  std::atomic<uint64_t> bytes_from_store{0};  // received by ranged GETs
  std::atomic<uint64_t> get_requests{0};
  std::atomic<uint64_t> fetches_in_flight{0};
  std::atomic<uint64_t> parts_in_flight{0};
  std::atomic<uint64_t> fetch_failures{0};  // downloads that ended in an error
  // Downloads whose bytes did not match the checksum recorded with the object (EIO to readers).
  std::atomic<uint64_t> verify_failures{0};
  // Downloads completed without a recorded checksum to check (multipart uploads, other writers)
  // or with verification off.
  std::atomic<uint64_t> unverified{0};
  std::atomic<uint64_t> read_errors{0};  // Read/ReadFd calls that returned an error
};

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
  WorkPool* workers = nullptr;
  ReaderCounters* counters = nullptr;
  FetchOwner* owner = nullptr;
  int max_parallel_parts = 8;
  // Check each download against the CRC32C recorded with the object (ObjectInfo::crc32c) before
  // any byte of it is served or cached (`verify: auto`).
  bool verify = true;
};

}  // namespace kvfs
