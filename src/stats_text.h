// The text `kvfs stats MOUNTPOINT` prints: one "name value" pair a line (Prometheus-like, easy to
// grep and to scrape). Pure function; thread-safe.
#pragma once

#include <string>

#include "cache/chunk_cache.h"
#include "fs/read/cached_reader.h"
#include "objstore/object_store.h"

namespace kvfs {

std::string FormatStats(const ReaderStats& reader, const CacheStats& cache,
                        const StoreStats& store);

}  // namespace kvfs
