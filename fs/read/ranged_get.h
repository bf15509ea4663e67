// Parallel ranged GETs of one byte range straight into a caller's buffer: the read path for
// objects that are not cached (larger than the cache, cache off or full). Memory: none beyond
// the caller's buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"

namespace kvfs {

struct RangedGetOptions {
  uint64_t part_size = 16 << 20;
  int max_parallel = 8;
};

// Reads [offset, offset+length) of `info`'s object (clipped to info.size) into buf, with
// If-Match on info.etag when known. Returns the byte count; ObjectSizeChanged (kPreconditionFailed)
// if the object is shorter than listed. Blocks until every request has completed.
// `on_info` (may be empty) gets what each GET's reply says of the object (GetRequest::on_info).
Result<uint64_t> ParallelRangedGet(ObjectStore* store, const ObjectInfo& info, uint64_t offset,
                                   uint64_t length, char* buf, const RangedGetOptions& opts,
                                   uint64_t* requests,
                                   std::function<void(const ObjectInfo&)> on_info = nullptr);

}  // namespace kvfs
