// What a store has done, for `kvfs stats`: one list (base/stat_list.h says how lists work and how
// to add a statistic), from which StoreStats and its lines in `kvfs stats` and the Prometheus
// endpoint are made. Stores that send no requests report zeros.
#pragma once

#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_STORE_STATS(X)                                                                      \
  X(requests, "kvfs_store_requests", kCounter) /* requests sent, every attempt counted */        \
  /* attempts repeated after a retryable failure (5xx, 429, network) */                          \
  X(retries, "kvfs_store_retries", kCounter)                                                     \
  /* operations that failed after their retries (not: absent keys, lost conditional creates,  */ \
  /* cancellations)                                                                           */ \
  X(errors, "kvfs_store_errors", kCounter)                                                       \
  X(in_flight, "kvfs_store_requests_in_flight", kGauge) /* requests on the wire now */           \
  /* circuit breaker: times it opened, requests refused at once while open, open now (0/1) */    \
  X(breaker_opens, "kvfs_store_breaker_opens", kCounter)                                         \
  X(breaker_rejected, "kvfs_store_breaker_rejected", kCounter)                                   \
  X(breaker_open, "kvfs_store_breaker_open", kGauge)

struct StoreStats {
  KVFS_STORE_STATS(KVFS_STAT_VALUE)
};

}  // namespace kvfs
