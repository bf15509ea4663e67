// TierStatus: the tier as the collector's last pass saw it, kept in the status object so every
// node (statvfs, kvfs du, metrics) reads the same numbers with one GET per interval.
//
// Text, one "name value" per line; unknown lines are ignored (newer collectors may add some).
// A new field is one line in KVFS_TIER_STATUS_FIELDS.
//
// Thread-safety: a plain value; functions.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace kvfs {

// X(type, name, meaning)
#define KVFS_TIER_STATUS_FIELDS(X)                                                 \
  X(uint64_t, bytes, "chunk bytes under the prefix after the pass")                \
  X(uint64_t, chunks, "chunks after the pass")                                     \
  X(uint64_t, capacity, "store_capacity the collector applies")                    \
  X(int64_t, max_age_secs, "store_max_age the collector applies")                  \
  X(std::string, holder, "the collector's node id")                                \
  X(uint64_t, epoch, "its lease epoch")                                            \
  X(int64_t, time, "server Unix time of the pass")                                 \
  X(uint64_t, passes, "passes this collector made")                                \
  X(uint64_t, removed_capacity, "chunks this collector removed over the capacity") \
  X(uint64_t, removed_age, "chunks this collector removed for their age")          \
  X(uint64_t, removed_bytes, "bytes this collector removed")                       \
  X(uint64_t, over_capacity_protected, "bytes over capacity only recent chunks hold")

struct TierStatus {
#define KVFS_TIER_STATUS_MEMBER(type, name, meaning) type name{};
  KVFS_TIER_STATUS_FIELDS(KVFS_TIER_STATUS_MEMBER)
#undef KVFS_TIER_STATUS_MEMBER
};

std::string FormatTierStatus(const TierStatus& s);
Result<TierStatus> ParseTierStatus(const std::string& text);

}  // namespace kvfs
