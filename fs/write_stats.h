// The write path's statistics: one list (base/stat_list.h says how lists work), from which
// WriteStats and its lines in `kvfs stats` and the Prometheus endpoint are made.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_WRITE_STATS(X)                                                                        \
  X(opens, "kvfs_write_opens", kCounter) /* opens and creates for writing */                       \
  /* ... of which the kernel writes the spool itself (passthrough_writes) */                       \
  X(passthrough_opens, "kvfs_write_passthrough_opens", kCounter)                                   \
  X(bytes_served, "kvfs_write_bytes_served", kCounter) /* bytes of the daemon's write requests */  \
  /* /proc walks of a writer's descriptors by the publication rule (one syscall per descriptor) */ \
  X(publication_walks, "kvfs_write_publication_walks", kCounter)

struct WriteStats {
  KVFS_WRITE_STATS(KVFS_STAT_VALUE)
};

// The counters Filesystem counts in. Thread-safe (atomics).
struct WriteCounters {
  KVFS_WRITE_STATS(KVFS_STAT_ATOMIC)

  WriteStats Snapshot() const {
    WriteStats out;
    KVFS_WRITE_STATS(KVFS_STAT_LOAD)
    return out;
  }
};

}  // namespace kvfs
