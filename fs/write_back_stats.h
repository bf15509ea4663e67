// The write-back queue's statistics (fs/write_back.h): one list (base/stat_list.h says how lists
// work), from which WriteBackStats and its lines in `kvfs stats` and the Prometheus endpoint are
// made.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_WRITE_BACK_STATS(X)                                                                  \
  X(queued, "kvfs_write_back_queued", kCounter) /* chunks whose close() returned before upload */ \
  X(uploaded, "kvfs_write_back_uploaded", kCounter) /* ... and whose upload then succeeded */     \
  /* ... refused by the store after close() had returned 0 (EEXIST): not stored (logged) */       \
  X(failed, "kvfs_write_back_failed", kCounter)                                                   \
  X(pending, "kvfs_write_back_pending", kGauge) /* queued or uploading now */                     \
  X(pending_bytes, "kvfs_write_back_pending_bytes", kGauge)                                       \
  /* how long the oldest queued chunk has waited for the store, in ms (0: none queued) */         \
  X(oldest_pending_ms, "kvfs_write_back_oldest_pending_ms", kGauge)                               \
  /* closes that waited for room: write_back_bytes pending, or the oldest past its max age */     \
  X(waits, "kvfs_write_back_waits", kCounter)                                                     \
  /* chunks an earlier run accepted and sealed, found at mount and queued for upload */           \
  X(recovered, "kvfs_write_back_recovered", kCounter)                                             \
  /* sealed spool files found at mount whose bytes did not match their seal: not published */     \
  X(recovery_refused, "kvfs_write_back_recovery_refused", kCounter)                               \
  /* uploads that failed (the store down, a server error) and were tried again */                 \
  X(retries, "kvfs_write_back_retries", kCounter)                                                 \
  /* not uploaded when the daemon stopped (write_back_drain_timeout): sealed for next mount */    \
  X(kept, "kvfs_write_back_kept_sealed", kCounter)

struct WriteBackStats {
  KVFS_WRITE_BACK_STATS(KVFS_STAT_VALUE)
};

// The counters the queue counts in. Thread-safe (atomics).
struct WriteBackCounters {
  KVFS_WRITE_BACK_STATS(KVFS_STAT_ATOMIC)

  WriteBackStats Snapshot() const {
    WriteBackStats out;
    KVFS_WRITE_BACK_STATS(KVFS_STAT_LOAD)
    return out;
  }
};

}  // namespace kvfs
