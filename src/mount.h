// `kvfs [options] SOURCE MOUNTPOINT`: builds the stack (store, cache, read path, filesystem) from
// the configuration, checks the store, mounts, serves until unmounted, then tears down in order.
//
// BuildMountStack is the one place the stack is wired: the daemon builds it from its KvfsConfig,
// the integration tests' kvfs_test_mount from its own flags over a store it opened itself.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cache/chunk_cache.h"
#include "fs/filesystem.h"
#include "fs/read/cached_reader.h"
#include "objstore/metered_store.h"
#include "objstore/object_store.h"
#include "src/cli.h"
#include "src/config.h"
#include "tier/tier_agent.h"

namespace kvfs {

// Everything a mount holds. The members are destroyed in reverse order of construction: the
// filesystem first (it finishes uploads), then the reader (joins its fetches), the cache, and the
// store last. Thread-compatible: built once, then only the parts are used concurrently.
struct MountStack {
  std::shared_ptr<ObjectStore> store;
  std::unique_ptr<ChunkCache> cache;      // null without a cache
  std::shared_ptr<ChunkReader> reader;    // the CachedReader, or plain ranged GETs without cache
  CachedReader* cached_reader = nullptr;  // `reader` when it is the CachedReader
  std::unique_ptr<Filesystem> fs;
  MeteredStore* metered = nullptr;  // `store` when it is timed for metrics_listen
  // The bounded tier's agent (store_capacity / store_max_age); null when unbounded. Destroyed
  // first: its thread calls into `fs`. Started once the mount is up (StartTier).
  std::unique_ptr<TierAgent> tier;
  // The fleet feed (fleet_feed); null when off. Started once the mount is up, stopped before
  // `fs` goes (its thread calls into it).
  std::shared_ptr<FleetFeed> feed;

  // The Prometheus text of metrics_listen (src/stats_text.h, objstore/metered_store.h);
  // thread-safe. Empty without a cache.
  std::function<std::string()> PrometheusText() const;

  // The statistics text served as user.kvfs.stats (src/stats_text.h); thread-safe. Empty
  // without a cache. The stack must outlive the function.
  std::function<std::string()> StatsText() const;
};

struct MountStackOptions {
  FsOptions fs;  // spool_dir empty: the cache's spool directory (spooled chunks are adopted)
  // Unset: no cache, every read is plain ranged GETs (fs/read/direct_reader.h); fs.spool_dir
  // needed.
  std::optional<ChunkCacheOptions> cache;
  CachedReaderOptions reader;
};

// Builds cache, reader and filesystem over an open store whose access was checked.
Result<MountStack> BuildMountStack(std::shared_ptr<ObjectStore> store, MountStackOptions options);

// The daemon's stack: opens the store `config` names, checks access, and builds the rest from
// the config.
Result<MountStack> BuildMountStack(const KvfsConfig& config);

// Returns the process exit status. Thread-safety: call once, from main().
int RunMount(const CommandLine& cmd, const KvfsConfig& config);

}  // namespace kvfs
