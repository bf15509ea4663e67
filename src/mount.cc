#include "src/mount.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "base/log.h"
#include "cache/chunk_cache.h"
#include "fs/fuse/fuse_adapter.h"
#include "fs/name_codec.h"
#include "fs/read/cached_reader.h"
#include "fs/read/direct_reader.h"
#include "src/cli.h"
#include "src/config_warnings.h"
#include "src/daemonize.h"
#include "src/health_check.h"
#include "src/logging.h"
#include "src/metrics_server.h"
#include "src/process_setup.h"
#include "src/recovery.h"
#include "src/stats_text.h"
#include "src/store_factory.h"
#include "tier/lease.h"
#include "tier/tier_keys.h"

namespace kvfs {
namespace {

// A cache_size the cache directory's file system cannot hold is not refused (the disk may grow,
// other data may leave), but the cache will meet ENOSPC before its own bound: say so at mount.
void WarnIfCacheLargerThanDisk(const std::string& dir, uint64_t cache_size) {
  struct statvfs v;
  if (statvfs(dir.c_str(), &v) != 0) return;
  const uint64_t disk = static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
  if (cache_size <= disk) return;
  LogWarn(
      "kvfs: cache_size {} bytes is larger than the file system of cache_dir {} ({} bytes): "
      "the cache fills the disk first (reads then stream from the store, writes fail with ENOSPC)",
      cache_size, dir, disk);
}

// The bounded tier, when store_capacity or store_max_age is set: checks the store can hold the
// collector's lease (conditional create) and wires the agent to the filesystem.
Status AddTier(const KvfsConfig& c, const std::string& key_prefix, MountStack* s) {
  TierOptions to = c.tier;
  if (!to.enabled()) return Status::OK();
  to.key_prefix = key_prefix;
  KVFS_RETURN_IF_ERROR(CheckTierPlacement(to, c.source.rfind("file://", 0) == 0));
  to.node_id = MakeNodeId();
  to.may_collect = !c.fuse.read_only;
  auto codec = std::make_shared<NameCodec>(key_prefix, c.fs.fanout_hex_chars);
  to.is_chunk = [codec](std::string_view key) { return codec->NamesFile(key); };
  KVFS_RETURN_IF_ERROR(ProbeConditionalCreate(s->store.get(), TierKeys(key_prefix), to.node_id));
  auto node = std::make_shared<NodeTier>(to.capacity_bytes);
  s->fs->set_tier(node);
  Filesystem* fs = s->fs.get();
  LogInfo("kvfs: bounded tier: capacity {} bytes, max age {} s, interval {} s, node {}",
          to.capacity_bytes, to.max_age_secs, to.interval_secs, to.node_id);
  s->tier = std::make_unique<TierAgent>(s->store, std::move(to), std::move(node),
                                        [fs](const std::string& key) { fs->ForgetRemoved(key); });
  return Status::OK();
}

// The fleet feed (fleet_feed, default on): this node's stores and deletes are announced to the
// other nodes of the prefix, and theirs applied here.
void AddFeed(const FsOptions& fo, MountStack* s) {
  if (!fo.fleet_feed) return;
  FleetFeedOptions o;
  o.key_prefix = fo.key_prefix;
  o.node_id = MakeNodeId();
  o.interval = std::chrono::milliseconds(fo.feed_interval_ms);
  Filesystem* fs = s->fs.get();
  s->feed = std::make_shared<FleetFeed>(s->store, std::move(o),
                                        [fs](const FeedEvent& e) { fs->ApplyFeed(e); });
  fs->set_feed(s->feed);
}

}  // namespace

namespace {

StatGroups GroupsOf(const CachedReader* reader, ChunkCache* cache, ObjectStore* store,
                    Filesystem* fs, FleetFeed* feed, TierAgent* tier) {
  StatGroups g{reader->Stats(),
               cache->Stats(),
               store->Stats(),
               fs->LookupStatsNow(),
               feed ? feed->Stats() : FeedStats{},
               fs->WriteBackStatsNow(),
               fs->WriteStatsNow(),
               std::nullopt};
  if (tier != nullptr) g.tier = tier->Stats();
  return g;
}

}  // namespace

std::function<std::string()> MountStack::StatsText() const {
  if (cached_reader == nullptr || cache == nullptr || fs == nullptr) return nullptr;
  return [reader = cached_reader, cache = cache.get(), store = store.get(), fs = fs.get(),
          feed = feed.get(), tier = tier.get()] {
    return FormatStats(GroupsOf(reader, cache, store, fs, feed, tier));
  };
}

std::function<std::string()> MountStack::PrometheusText() const {
  if (cached_reader == nullptr || cache == nullptr || fs == nullptr) return nullptr;
  return [reader = cached_reader, cache = cache.get(), store = store.get(), metered = metered,
          fs = fs.get(), feed = feed.get(), tier = tier.get()] {
    std::string out = FormatPrometheus(GroupsOf(reader, cache, store, fs, feed, tier));
    // The store's per-operation latency histograms: labelled families over the operation list
    // (objstore/store_ops.h), which a flat statistics list cannot hold.
    if (metered != nullptr) out += metered->Prometheus();
    return out;
  };
}

Result<MountStack> BuildMountStack(std::shared_ptr<ObjectStore> store, MountStackOptions options) {
  MountStack s;
  s.store = std::move(store);
  if (options.cache) {
    auto cache = ChunkCache::Open(*options.cache);
    if (!cache.ok()) return cache.status().Annotate("cache_dir " + options.cache->dir);
    s.cache = std::move(cache).value();
    WarnIfCacheLargerThanDisk(options.cache->dir, options.cache->capacity);
    // Spool files on the cache's filesystem are adopted into the cache after upload.
    if (options.fs.spool_dir.empty()) options.fs.spool_dir = s.cache->spool_dir();
    // statfs reports the cache's size unless statfs_size says otherwise.
    if (options.fs.statfs_total_bytes == 0) options.fs.statfs_total_bytes = options.cache->capacity;
    auto reader = std::make_shared<CachedReader>(s.store, s.cache.get(), options.reader);
    s.cached_reader = reader.get();
    s.reader = std::move(reader);
  } else {
    s.reader = NewDirectReader(s.store);
  }
  auto fs = Filesystem::Create(s.store, s.reader, options.fs);
  if (!fs.ok()) return fs.status();
  s.fs = std::move(fs).value();
  return s;
}

Result<MountStack> BuildMountStack(const KvfsConfig& config) {
  KVFS_ASSIGN_OR_RETURN(StoreAndPrefix sp, OpenStore(config));
  // CheckAccess's messages already name the store, the endpoint and the cause.
  KVFS_RETURN_IF_ERROR(sp.store->CheckAccess());
  // The settings are the layers' own options; what is derived, not read, is filled in here.
  MountStackOptions o;
  ChunkCacheOptions& co = o.cache.emplace(config.cache);
  if (co.dir.empty()) co.dir = DefaultCacheDir();
  o.reader = config.reader;
  o.fs = config.fs;
  o.fs.key_prefix = sp.key_prefix;  // the source's prefix and key_prefix, normalised
  // Ranged GETs of one object, and parts of one upload, in flight: enough to keep the store busy,
  // bounded by the request limit.
  o.reader.max_parallel_parts = std::clamp(config.s3.max_inflight, 1, 8);
  o.fs.upload_parallelism = std::clamp(config.s3.max_inflight / 4, 1, 8);
  // A lookup's background revalidation has the FUSE requests' time limit.
  o.fs.revalidate_timeout_ms = config.fuse.blocking_timeout_ms;
  if (o.fs.learn_chunk_sizes && !o.fs.chunk_sizes.empty()) {
    LogWarn("kvfs: learn_chunk_sizes has no effect: chunk_sizes is set, and it wins");
  }
  std::shared_ptr<ObjectStore> store = sp.store;
  MeteredStore* metered = nullptr;
  if (!config.metrics_listen.empty()) {  // timing costs a clock read per request: only if asked
    auto m = std::make_shared<MeteredStore>(store);
    metered = m.get();
    store = std::move(m);
  }
  const FsOptions fo = o.fs;
  KVFS_ASSIGN_OR_RETURN(MountStack s, BuildMountStack(std::move(store), std::move(o)));
  s.metered = metered;
  AddFeed(fo, &s);
  KVFS_RETURN_IF_ERROR(AddTier(config, sp.key_prefix, &s));
  return s;
}

int RunMount(const CommandLine& cmd, const KvfsConfig& config) {
  if (cmd.mountpoint.empty()) {
    std::fprintf(stderr, "kvfs: no MOUNTPOINT given\nTry 'kvfs --help'.\n");
    return kExitUsage;
  }
  if (auto dead = DetachDeadMount(cmd.mountpoint); !dead.ok()) {
    std::fprintf(stderr, "kvfs: %s\n", dead.status().ToString().c_str());
    return 1;
  }
  struct stat st;
  if (stat(cmd.mountpoint.c_str(), &st) != 0) {
    // "No such file or directory" tells a typo from a directory that exists but is wrong.
    std::fprintf(stderr, "kvfs: mount point %s: %s\n", cmd.mountpoint.c_str(),
                 std::strerror(errno));
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "kvfs: mount point %s is not a directory\n", cmd.mountpoint.c_str());
    return 1;
  }
  LogSecurityWarnings(config);  // on the terminal, before the daemon moves to syslog
  // Running out of descriptors fails opens and downloads (the cache keeps its entries then, see
  // ChunkCache::Lookup); take what the hard limit (systemd's LimitNOFILE) allows.
  RaiseFileLimit();
  ProtectMemory(config.core_dumps);  // before any credential is fetched
  Daemonizer daemon;
  if (!cmd.foreground) {
    daemon.Start();  // before any thread exists
    // From here the daemon logs to syslog: a failure reaches the user through the waiting parent,
    // and a successful mount prints nothing (as mount(8) users expect).
    LoggingOptions lo;
    lo.level = cmd.debug ? "debug" : config.log_level;
    lo.to_syslog = true;
    (void)SetupLogging(lo);
  }

  MountStack stack;
  {
    auto built = BuildMountStack(config);
    if (!built.ok()) {
      std::string msg = "kvfs: " + built.status().ToString();
      // Said once: by the waiting parent when daemonized, else by the log on stderr.
      if (daemon.active()) {
        daemon.ReportFailure(msg);
      } else {
        LogError("{}", msg);
      }
      return 1;
    }
    stack = std::move(built).value();
  }
  HealthCheck health(stack.store);
  MetricsServer metrics;
  if (!config.metrics_listen.empty()) {
    Status st = metrics.Start(config.metrics_listen, stack.PrometheusText(), &health);
    if (!st.ok()) {
      const std::string msg = "kvfs: " + st.ToString();
      if (daemon.active()) {
        daemon.ReportFailure(msg);
      } else {
        LogError("{}", msg);
      }
      return 1;
    }
    LogInfo("kvfs: Prometheus metrics at http://{}/metrics, probes at /healthz and /readyz",
            config.metrics_listen);
  }

  FuseOptions fo = config.fuse;
  // Both go into libfuse's "-o" string as they are: escaped, a comma in SOURCE (or in a value the
  // command line unescaped) stays in its option instead of adding one, e.g. allow_other.
  fo.fsname = EscapeFuseOptionValue(config.source.empty() ? "kvfs" : config.source);
  fo.debug = cmd.debug;
  for (const std::string& o : cmd.fuse_options) {
    fo.extra_mount_options.push_back(EscapeFuseOptionValue(o));
  }
  fo.stats_text = stack.StatsText();
  fo.set_log_level = SetLogLevel;
  fo.sync_accepted = [fs = stack.fs.get()] { return fs->SyncAccepted(); };
  if (stack.tier) {
    const auto limit =
        std::chrono::milliseconds(fo.blocking_timeout_ms > 0 ? fo.blocking_timeout_ms : 30'000);
    fo.run_tier_gc = [tier = stack.tier.get(), limit] { return tier->RunStep(limit); };
  }

  bool mounted = false;
  UploadCleanup cleanup;
  int rc = RunFuseSession(*stack.fs, cmd.mountpoint, fo, [&] {
    mounted = true;
    health.SetMounted(true);
    LogInfo("kvfs: {} mounted at {} (cache {}, {} bytes)", config.source, cmd.mountpoint,
            config.cache.dir.empty() ? DefaultCacheDir() : config.cache.dir, config.cache.capacity);
    daemon.ReportReady();
    // A file:// store is kvfs's own directory: its unfinished uploads are all kvfs's, even at
    // its root. A bucket's root may hold other applications' uploads.
    const bool own_store = config.source.rfind("file://", 0) == 0;
    cleanup.Start(stack.store.get(), stack.fs->options().key_prefix, config.stale_upload_age_secs,
                  config.stale_upload_gc_at_root || own_store);
    if (stack.tier) stack.tier->Start();
    if (stack.feed) stack.feed->Start();
    // After the feed starts: other nodes hear of each recovered chunk once it is stored.
    stack.fs->RecoverSealed();
  });
  if (!mounted && daemon.active()) {
    daemon.ReportFailure("kvfs: cannot mount " + config.source + " at " + cmd.mountpoint +
                         " (see the messages above or the system log)");
  }
  health.SetMounted(false);
  LogInfo("kvfs: unmounted {}; finishing", cmd.mountpoint);
  cleanup.Join();
  stack.fs->DrainWriteBack();  // chunks whose close() returned: stored before anything stops
  metrics.Stop();              // its renderer reads the stack
  stack.tier.reset();          // its last use record, the lease handed on; it calls into fs
  if (stack.feed) stack.feed->Stop();  // announces the last stores; it calls into fs
  stack.fs.reset();                    // completes uploads in progress before the store goes away
  stack.reader.reset();
  stack.cache.reset();
  stack.store.reset();
  return rc == 0 && mounted ? 0 : 1;
}

}  // namespace kvfs
