#include "src/gc_command.h"

#include <sys/xattr.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include "fs/fuse/fuse_options.h"
#include "fs/name_codec.h"
#include "src/store_factory.h"
#include "tier/collector.h"
#include "tier/lease.h"
#include "tier/tier_agent.h"

namespace kvfs {
namespace {

void PrintPlan(const PassResult& r, bool dry_run) {
  uint64_t by_cap = 0, by_age = 0, bytes = 0;
  for (const Removal& x : r.removals) {
    (x.reason == RemovalReason::kAge ? by_age : by_cap) += 1;
    bytes += x.size;
    if (dry_run) {
      std::printf("would remove %s (%llu bytes, %s, last used %lld)\n", x.key.c_str(),
                  static_cast<unsigned long long>(x.size), ReasonName(x.reason),
                  static_cast<long long>(x.last_use));
    }
  }
  std::printf("%s %zu chunks (%llu bytes): %llu over capacity, %llu for age\n",
              dry_run ? "would remove" : "removed", r.removals.size(),
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(by_cap),
              static_cast<unsigned long long>(by_age));
  std::printf("tier: %llu bytes in %llu chunks, capacity %llu, max age %lld s\n",
              static_cast<unsigned long long>(r.status.bytes),
              static_cast<unsigned long long>(r.status.chunks),
              static_cast<unsigned long long>(r.status.capacity),
              static_cast<long long>(r.status.max_age_secs));
  if (r.foreign > 0) {
    std::printf(
        "note: %llu objects under the prefix are not kvfs's (no %s mark): neither counted "
        "nor removed\n",
        static_cast<unsigned long long>(r.foreign), kWriterMetaHeader);
  }
  if (r.changed > 0 || r.delete_failures > 0) {
    std::printf("note: %llu chunks kept: stored again since the listing; %llu removals failed\n",
                static_cast<unsigned long long>(r.changed),
                static_cast<unsigned long long>(r.delete_failures));
  }
  if (r.status.over_capacity_protected > 0) {
    std::printf("note: %llu bytes over the capacity are chunks used in the last %s\n",
                static_cast<unsigned long long>(r.status.over_capacity_protected),
                "grace period (2 x store_gc_interval)");
  }
}

}  // namespace

int RunGcSource(const CommandLine& cmd, const KvfsConfig& config) {
  TierOptions to = config.tier;
  if (!to.enabled()) {
    std::fprintf(stderr,
                 "kvfs gc: neither store_capacity nor store_max_age is set (e.g. -o "
                 "store_capacity=2TiB or store_max_age=7d)\n");
    return kExitUsage;
  }
  auto sp = OpenStore(config);
  if (!sp.ok()) {
    std::fprintf(stderr, "kvfs gc: %s\n", sp.status().ToString().c_str());
    return 1;
  }
  to.key_prefix = sp->key_prefix;
  // A file:// store is kvfs's own directory; a bucket's root is shared with other applications.
  if (Status st = CheckTierPlacement(to, config.source.rfind("file://", 0) == 0); !st.ok()) {
    std::fprintf(stderr, "kvfs gc: %s\n", st.ToString().c_str());
    return 1;
  }
  if (Status st = sp->store->CheckAccess(); !st.ok()) {
    std::fprintf(stderr, "kvfs gc: %s\n", st.ToString().c_str());
    return 1;
  }
  to.node_id = MakeNodeId();
  auto codec = std::make_shared<NameCodec>(sp->key_prefix, config.fs.fanout_hex_chars);
  to.is_chunk = [codec](std::string_view key) { return codec->NamesFile(key); };
  Collector collector(sp->store.get(), to);
  if (cmd.dry_run) {
    // No lease: the store's clock is not needed to a second for a plan.
    auto r = collector.Pass(static_cast<int64_t>(std::time(nullptr)), 0, true, nullptr);
    if (!r.ok()) {
      std::fprintf(stderr, "kvfs gc: %s\n", r.status().ToString().c_str());
      return 1;
    }
    PrintPlan(*r, true);
    return 0;
  }
  Lease lease(sp->store.get(), TierKeys(sp->key_prefix), to.node_id, to.lease_secs());
  auto held = lease.Tick(Lease::Clock::now());
  if (held.ok() && !*held) {
    std::printf("kvfs gc: a collector lease exists (node %s); watching it for %lld s\n",
                lease.holder().c_str(), static_cast<long long>(to.lease_secs()));
    std::fflush(stdout);
    const auto until = Lease::Clock::now() + std::chrono::seconds(to.lease_secs() + 1);
    while (held.ok() && !*held && Lease::Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::seconds(to.interval_secs));
      held = lease.Tick(Lease::Clock::now());
    }
  }
  if (!held.ok()) {
    std::fprintf(stderr, "kvfs gc: the collector's lease: %s\n", held.status().ToString().c_str());
    return 1;
  }
  if (!*held) {
    std::printf("kvfs gc: node %s collects (its lease is renewed); nothing done\n",
                lease.holder().c_str());
    return 0;
  }
  const auto renewed = lease.renewed_at();
  const int64_t now = lease.renewed_server_sec() > 0 ? lease.renewed_server_sec()
                                                     : static_cast<int64_t>(std::time(nullptr));
  auto r = collector.Pass(now, lease.epoch(), false, [&] {
    return Lease::Clock::now() < renewed + std::chrono::seconds(to.lease_secs()) -
                                     std::chrono::milliseconds(to.interval_secs * 500);
  });
  lease.Release();
  if (!r.ok()) {
    std::fprintf(stderr, "kvfs gc: %s\n", r.status().ToString().c_str());
    return 1;
  }
  PrintPlan(*r, false);
  return r->delete_failures == 0 ? 0 : 1;
}

int RunGcMount(const CommandLine& cmd) {
  if (cmd.dry_run) {
    std::fprintf(stderr, "kvfs gc: --dry-run needs SOURCE (the store's URL), not a mount point\n");
    return kExitUsage;
  }
  if (setxattr(cmd.mountpoint.c_str(), kTierGcXattr, "1", 1, 0) != 0) {
    const int err = errno;
    std::fprintf(stderr, "kvfs gc: %s: %s\n", cmd.mountpoint.c_str(),
                 err == ENOTSUP || err == ENODATA
                     ? "not a kvfs mount with a bounded tier (store_capacity / store_max_age)"
                     : std::strerror(err));
    return 1;
  }
  std::vector<char> buf(64 << 10);
  const ssize_t n = getxattr(cmd.mountpoint.c_str(), kStatsXattr, buf.data(), buf.size());
  if (n > 0) {
    std::string text(buf.data(), static_cast<size_t>(n));
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(pos, end - pos);
      if (line.starts_with("kvfs_tier_")) std::printf("%s\n", line.c_str());
      pos = end + 1;
    }
  }
  return 0;
}

}  // namespace kvfs
