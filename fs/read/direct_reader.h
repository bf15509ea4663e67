// DirectReader: the simplest ChunkReader - every read is one ranged GET straight from the store,
// pinned to the ETag seen at open (If-Match) so a handle never mixes two versions of an object.
// No caching, no read-ahead: correct, and a baseline for the cached reader.
//
// Thread-safe: holds no mutable state.
#pragma once

#include <memory>

#include "fs/read/chunk_reader.h"
#include "objstore/object_store.h"

namespace kvfs {

std::shared_ptr<ChunkReader> NewDirectReader(std::shared_ptr<ObjectStore> store);

}  // namespace kvfs
