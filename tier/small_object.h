// Whole reads and writes of the tier's own small objects (records, status, lease).
//
// Thread-safety: functions; safe wherever the store's synchronous calls are.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "objstore/object_store.h"

namespace kvfs {

// The whole object, at most `max_bytes` (kResourceExhausted beyond: a record no collector could
// hold in memory is refused, not read). kNotFound when absent.
Result<std::string> ReadSmallObject(ObjectStore* store, const std::string& key, uint64_t max_bytes);

// Writes `text` as the object (overwriting), or creates it only if absent (kAlreadyExists if it
// is there).
Result<ObjectInfo> WriteSmallObject(ObjectStore* store, const std::string& key,
                                    const std::string& text, bool if_none_match = false);

}  // namespace kvfs
