// The fleet feed's statistics (fs/fleet_feed.h): one list (base/stat_list.h says how lists work
// and how to add a statistic), from which FeedStats and its lines in `kvfs stats` and the
// Prometheus endpoint are made.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/stat_list.h"

namespace kvfs {

// X(field, "name in kvfs stats", kind)
#define KVFS_FEED_STATS(X)                                                                         \
  X(live, "kvfs_feed_live", kGauge) /* 1: misses are trusted past negative_cache_ttl_ms */         \
  /* ms since the start of the last complete read of the feed: how far this node's view of the */  \
  /* other nodes' new chunks may lag, beyond their writers' own interval                       */  \
  X(lag_ms, "kvfs_feed_lag_ms", kGauge)                                                            \
  X(announced, "kvfs_feed_names_announced", kCounter) /* this node's stores and deletes */         \
  X(entries_written, "kvfs_feed_entries_written", kCounter)                                        \
  X(received, "kvfs_feed_names_received", kCounter) /* other nodes' stores and deletes applied */  \
  X(polls, "kvfs_feed_polls", kCounter)                                                            \
  /* the feed's whole cost: PUTs of entries, LIST pages read, GETs of bodies, DELETEs of expired   \
   * entries */                                                                                    \
  X(puts, "kvfs_feed_puts", kCounter)                                                              \
  X(lists, "kvfs_feed_lists", kCounter)                                                            \
  X(gets, "kvfs_feed_gets", kCounter) /* bodies of the entries a burst filled */                   \
  X(deletes, "kvfs_feed_deletes", kCounter)                                                        \
  X(failures, "kvfs_feed_failures", kCounter) /* requests that failed (retried next interval) */   \
  /* entries found missing between ones read (lost or late, or expired while this node lagged): */ \
  /* the misses cached before are then asked again                                             */  \
  X(gaps, "kvfs_feed_gaps", kCounter)                                                              \
  X(dropped, "kvfs_feed_names_dropped", kCounter) /* not announced (outbox full, writes paused) */ \
  /* requests of the feed the store's policy refused (AccessDenied): see writes_paused         */  \
  X(refused, "kvfs_feed_refused", kCounter)                                                        \
  /* 1: this node writes no entries (its DELETEs fail, or a PUT was refused): its new chunks   */  \
  /* are found elsewhere within feed_miss_ttl_secs                                             */  \
  X(writes_paused, "kvfs_feed_writes_paused", kGauge)

struct FeedStats {
  KVFS_FEED_STATS(KVFS_STAT_VALUE)
};

// The counters the feed counts in. Thread-safe (atomics).
struct FeedCounters {
  KVFS_FEED_STATS(KVFS_STAT_ATOMIC)

  FeedStats Snapshot() const {
    FeedStats out;
    KVFS_FEED_STATS(KVFS_STAT_LOAD)
    return out;
  }
};

}  // namespace kvfs
