#include "src/config_keys.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "src/config_key_makers.h"
#include "src/config_values.h"

namespace kvfs {
namespace {

std::vector<ConfigKey> BuildTable() {
  constexpr uint64_t kMaxSize = uint64_t{1} << 50;
  std::vector<ConfigKey> t;
  // Source and addressing.
  t.push_back(SourceKey());
  t.push_back(KeyPrefixKey());
  t.push_back(StringKey(
      "bucket", [](KvfsConfig & c) -> auto& { return c.s3.bucket; }, false));
  t.push_back(StringKey(
      "endpoint", [](KvfsConfig & c) -> auto& { return c.s3.endpoint; }));
  t.push_back(StringKey(
      "region", [](KvfsConfig & c) -> auto& { return c.s3.region; }, false));
  t.back().set = [inner = t.back().set](KvfsConfig& c, const RawValue& v,
                                        const std::string& layer) {  // region: marks it given
    std::string err = inner(c, v, layer);
    if (err.empty()) c.region_set = true;
    return err;
  };
  t.push_back(AddressingKey());
  t.push_back(BoolKey(
      "path_style", [](KvfsConfig & c) -> auto& { return c.s3.path_style; }));
  // path_style, the older spelling, marks the choice as made as `addressing` does; dumps show
  // it as `addressing` only (a dumped path_style would turn "auto" into a choice on reload).
  t.back().get = nullptr;
  t.back().set = [inner = t.back().set](KvfsConfig& c, const RawValue& v,
                                        const std::string& layer) {
    std::string err = inner(c, v, layer);
    if (err.empty()) c.addressing_set = true;
    return err;
  };
  t.push_back(BoolKey(
      "disable_tls", [](KvfsConfig & c) -> auto& { return c.s3.disable_tls; }));
  t.push_back(BoolKey(
      "verify_tls", [](KvfsConfig & c) -> auto& { return c.s3.verify_tls; }));
  t.push_back(StringKey(
      "ca_bundle", [](KvfsConfig & c) -> auto& { return c.s3.ca_bundle; }));
  t.push_back(BoolKey(
      "s3express", [](KvfsConfig & c) -> auto& { return c.s3.s3express; }));
  t.push_back(BoolKey(
      "prefer_http2", [](KvfsConfig & c) -> auto& { return c.s3.prefer_http2; }));
  // Credentials.
  t.push_back(StringKey(
      "profile", [](KvfsConfig & c) -> auto& { return c.s3.profile; }));
  t.push_back(DurationKey(
      "credential_process_timeout_secs",
      [](KvfsConfig & c) -> auto& { return c.s3.credential_process_timeout_secs; }, 1000, 1,
      86'400));
  {
    ConfigKey id = StringKey(
        "access_key_id", [](KvfsConfig & c) -> auto& { return c.s3.credentials.access_key_id; });
    auto set = id.set;
    id.set = [set](KvfsConfig& c, const RawValue& v, const std::string& origin) {
      std::string r = set(c, v, origin);
      if (!Trim(v.scalar).empty()) c.s3.credentials.source = origin;
      return r;
    };
    t.push_back(std::move(id));
  }
  t.push_back(SecretKey(
      "secret_access_key",
      [](KvfsConfig & c) -> auto& { return c.s3.credentials.secret_access_key; }));
  t.push_back(SecretKey(
      "session_token", [](KvfsConfig & c) -> auto& { return c.s3.credentials.session_token; }));
  // Requests.
  t.push_back(IntKey(
      "max_inflight", [](KvfsConfig & c) -> auto& { return c.s3.max_inflight; }, 1, 4096));
  t.push_back(IntKey(
      "max_connections", [](KvfsConfig & c) -> auto& { return c.s3.max_connections; }, 1, 4096));
  t.push_back(IntKey(
      "http_loops", [](KvfsConfig & c) -> auto& { return c.s3.http_loops; }, 1, 16));
  t.push_back(DurationKey(
      "connect_timeout_ms", [](KvfsConfig & c) -> auto& { return c.s3.connect_timeout_ms; }, 1, 1,
      3'600'000));
  t.push_back(DurationKey(
      "stall_timeout_ms", [](KvfsConfig & c) -> auto& { return c.s3.stall_timeout_ms; }, 1, 1,
      3'600'000));
  t.push_back(DurationKey(
      "operation_timeout_ms", [](KvfsConfig & c) -> auto& { return c.s3.operation_timeout_ms; }, 1,
      1, 86'400'000));
  t.push_back(DurationKey(
      "blocking_timeout", [](KvfsConfig & c) -> auto& { return c.fuse.blocking_timeout_ms; }, 1, 0,
      86'400'000, 1000));
  t.push_back(IntKey(
      "max_attempts", [](KvfsConfig & c) -> auto& { return c.s3.max_attempts; }, 1, 100));
  t.push_back(DurationKey(
      "backoff_base_ms", [](KvfsConfig & c) -> auto& { return c.s3.backoff_base_ms; }, 1, 1,
      60'000));
  t.push_back(DurationKey(
      "backoff_max_ms", [](KvfsConfig & c) -> auto& { return c.s3.backoff_max_ms; }, 1, 1,
      600'000));
  t.push_back(IntKey(
      "circuit_breaker_failures",
      [](KvfsConfig & c) -> auto& { return c.s3.circuit_breaker_failures; }, 0, 10'000));
  t.push_back(DurationKey(
      "circuit_breaker_cooldown_ms",
      [](KvfsConfig & c) -> auto& { return c.s3.circuit_breaker_cooldown_ms; }, 1, 1, 3'600'000));
  t.push_back(EnumKey<ConditionalCreateMode>(
      "conditional_create", [](KvfsConfig & c) -> auto& { return c.s3.conditional_create; },
      {{"auto", ConditionalCreateMode::kAuto},
       {"header", ConditionalCreateMode::kHeader},
       {"head-check", ConditionalCreateMode::kHeadCheck}}));
  t.push_back(SizeKey(
      "get_part_size", [](KvfsConfig & c) -> auto& { return c.reader.part_size; }, 64 * 1024,
      5 * kGiB));
  t.push_back(SizeKey(
      "multipart_threshold", [](KvfsConfig & c) -> auto& { return c.fs.multipart_threshold; },
      5 * kMiB, kMaxSize));
  t.push_back(SizeKey(
      "multipart_part_size", [](KvfsConfig & c) -> auto& { return c.fs.multipart_part_size; },
      5 * kMiB, 5 * kGiB));
  // Cache.
  t.push_back(StringKey(
      "cache_dir", [](KvfsConfig & c) -> auto& { return c.cache.dir; }));
  t.push_back(SizeKey(
      "cache_size", [](KvfsConfig & c) -> auto& { return c.cache.capacity; }, 0, kMaxSize));
  t.push_back(FractionKey(
      "cache_high_watermark", [](KvfsConfig & c) -> auto& { return c.cache.high_watermark; }));
  t.push_back(FractionKey(
      "cache_evict_ratio", [](KvfsConfig & c) -> auto& { return c.cache.evict_ratio; }));
  t.push_back(EnumKey<bool>("verify", [](KvfsConfig & c) -> auto& { return c.reader.verify; },
                            {{"auto", true}, {"off", false}}));
  t.push_back(BoolKey(
      "prefetch", [](KvfsConfig & c) -> auto& { return c.reader.prefetch.enabled; }));
  t.push_back(IntKey(
      "prefetch_downloads", [](KvfsConfig & c) -> auto& { return c.reader.prefetch.max_downloads; },
      1, 1024));
  t.push_back(SizeKey(
      "prefetch_bytes", [](KvfsConfig & c) -> auto& { return c.reader.prefetch.max_bytes; }, 0,
      kMaxSize));
  t.push_back(DurationKey(
      "prefetch_unread_secs", [](KvfsConfig & c) -> auto& { return c.reader.prefetch.unread_secs; },
      1000, 1, 86'400));
  // Chunks and names.
  t.push_back(SizeListKey(
      "chunk_sizes", [](KvfsConfig & c) -> auto& { return c.fs.chunk_sizes; }));
  t.push_back(BoolKey(
      "learn_chunk_sizes", [](KvfsConfig & c) -> auto& { return c.fs.learn_chunk_sizes; }));
  t.push_back(SizeKey(
      "max_chunk_bytes", [](KvfsConfig & c) -> auto& { return c.fs.max_chunk_bytes; }, 1,
      kMaxSize));
  t.push_back(StringListKey(
      "temp_patterns", [](KvfsConfig & c) -> auto& { return c.fs.temp_patterns; }));
  t.push_back(EnumKey<UnlinkPolicy>("unlink_policy",
                                    [](KvfsConfig & c) -> auto& { return c.fs.unlink_policy; },
                                    {{"remote", UnlinkPolicy::kRemote},
                                     {"local", UnlinkPolicy::kLocal},
                                     {"deny", UnlinkPolicy::kDeny}}));
  t.push_back(EnumKey<ExistsPolicy>(
      "exists_policy", [](KvfsConfig & c) -> auto& { return c.fs.exists_policy; },
      {{"same-size-ok", ExistsPolicy::kSameSizeOk}, {"eexist", ExistsPolicy::kEexist}}));
  t.push_back(DurationKey(
      "metadata_cache_ttl_secs", [](KvfsConfig & c) -> auto& { return c.fs.metadata_ttl_secs; },
      1000, 0, 86'400));
  t.push_back(DurationKey(
      "negative_cache_ttl_ms", [](KvfsConfig & c) -> auto& { return c.fs.negative_ttl_ms; }, 1, 0,
      86'400'000));
  t.push_back(BoolKey(
      "fleet_feed", [](KvfsConfig & c) -> auto& { return c.fs.fleet_feed; }));
  t.push_back(DurationKey(
      "feed_interval_ms", [](KvfsConfig & c) -> auto& { return c.fs.feed_interval_ms; }, 1, 50,
      60'000));
  t.push_back(DurationKey(
      "feed_miss_ttl_secs", [](KvfsConfig & c) -> auto& { return c.fs.feed_miss_ttl_secs; }, 1000,
      0, 86'400));
  t.push_back(DurationKey(
      "stale_upload_age_secs", [](KvfsConfig & c) -> auto& { return c.stale_upload_age_secs; },
      1000, 0, 30 * 86'400));
  t.push_back(BoolKey(
      "stale_upload_gc_at_root",
      [](KvfsConfig & c) -> auto& { return c.stale_upload_gc_at_root; }));
  t.push_back(DurationKey(
      "cached_chunk_trust_secs",
      [](KvfsConfig & c) -> auto& { return c.fs.cached_chunk_trust_secs; }, 1000, 0, 30 * 86'400));
  t.push_back(IntKey(
      "fanout", [](KvfsConfig & c) -> auto& { return c.fs.fanout_hex_chars; }, 0,
      kMaxFanoutHexChars));
  t.push_back(BoolKey(
      "subdirectories", [](KvfsConfig & c) -> auto& { return c.fs.subdirectories; }));
  t.push_back(BoolKey(
      "upload_while_writing", [](KvfsConfig & c) -> auto& { return c.fs.upload_while_writing; }));
  t.push_back(BoolKey(
      "write_back", [](KvfsConfig & c) -> auto& { return c.fs.write_back; }));
  t.push_back(IntKey(
      "write_back_uploads", [](KvfsConfig & c) -> auto& { return c.fs.write_back_uploads; }, 1,
      256));
  t.push_back(SizeKey(
      "write_back_bytes", [](KvfsConfig & c) -> auto& { return c.fs.write_back_bytes; }, 1 << 20,
      kMaxSize));
  t.push_back(BoolKey(
      "write_back_fdatasync", [](KvfsConfig & c) -> auto& { return c.fs.write_back_fdatasync; }));
  t.push_back(DurationKey(
      "write_back_max_age", [](KvfsConfig & c) -> auto& { return c.fs.write_back_max_age_ms; }, 1,
      0, 86'400'000, 1000));
  t.push_back(DurationKey(
      "write_back_drain_timeout",
      [](KvfsConfig & c) -> auto& { return c.fs.write_back_drain_timeout_ms; }, 1, 0, 86'400'000,
      1000));
  // The bounded shared tier.
  t.push_back(SizeKey(
      "store_capacity", [](KvfsConfig & c) -> auto& { return c.tier.capacity_bytes; }, 0,
      kMaxSize));
  t.push_back(DurationKey(
      "store_max_age", [](KvfsConfig & c) -> auto& { return c.tier.max_age_secs; }, 1000, 0,
      3650 * 86'400));
  t.push_back(BoolKey(
      "tier_at_bucket_root", [](KvfsConfig & c) -> auto& { return c.tier.at_bucket_root; }));
  t.push_back(DurationKey(
      "store_gc_interval", [](KvfsConfig & c) -> auto& { return c.tier.interval_secs; }, 1000, 1,
      3600));
  // FUSE and process.
  t.push_back(BoolKey(
      "page_cache", [](KvfsConfig & c) -> auto& { return c.fs.page_cache; }));
  t.push_back(BoolKey(
      "passthrough", [](KvfsConfig & c) -> auto& { return c.fs.passthrough; }));
  t.push_back(BoolKey(
      "passthrough_writes", [](KvfsConfig & c) -> auto& { return c.fs.passthrough_writes; }));
  t.push_back(SizeKey(
      "statfs_size", [](KvfsConfig & c) -> auto& { return c.fs.statfs_total_bytes; }, 0, kMaxSize));
  t.push_back(BoolKey(
      "allow_other", [](KvfsConfig & c) -> auto& { return c.fuse.allow_other; }));
  t.push_back(IdKey(
      "uid", [](KvfsConfig & c) -> auto& { return c.fs.uid; }));
  t.push_back(IdKey(
      "gid", [](KvfsConfig & c) -> auto& { return c.fs.gid; }));
  t.push_back(UmaskKey());
  t.push_back(BoolKey(
      "read_only", [](KvfsConfig & c) -> auto& { return c.fuse.read_only; }));
  t.push_back(BoolKey(
      "core_dumps", [](KvfsConfig & c) -> auto& { return c.core_dumps; }));
  t.push_back(IntKey(
      "fuse_threads", [](KvfsConfig & c) -> auto& { return c.fuse.max_threads; }, 1, 1024));
  t.push_back(IntKey(
      "max_background", [](KvfsConfig & c) -> auto& { return c.fuse.max_background; }, 1, 65535));
  t.push_back(SizeKey(
      "max_read", [](KvfsConfig & c) -> auto& { return c.fuse.max_read; }, 0, 1024 * kMiB));
  t.push_back(LogLevelKey());
  t.push_back(StringKey(
      "metrics_listen", [](KvfsConfig & c) -> auto& { return c.metrics_listen; }));
  return t;
}

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey> table = BuildTable();
  return table;
}

const ConfigKey* FindConfigKey(std::string_view name) {
  for (const ConfigKey& k : ConfigKeys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Status ApplyKey(const ConfigKey& key, const RawValue& value, const std::string& display_name,
                const std::string& source_name, KvfsConfig* config) {
  std::string prefix = source_name + ": key '" + display_name + "': ";
  if (value.is_list && !key.is_list) {
    return Status::InvalidArgument(prefix + "expected a single value, not a list");
  }
  KvfsConfig updated = *config;  // a failed key leaves the config unchanged
  std::string reason = key.set(updated, value, source_name);
  if (!reason.empty()) {
    // A secret's reason could only quote the value; never pass it on.
    if (key.secret) reason = "invalid value";
    return Status::InvalidArgument(prefix + reason);
  }
  *config = std::move(updated);
  return Status::OK();
}

std::vector<std::string> ConfigKeyNames() {
  std::vector<std::string> names;
  for (const ConfigKey& k : ConfigKeys()) names.push_back(k.name);
  return names;
}

bool IsBooleanConfigKey(const std::string& key) {
  const ConfigKey* k = FindConfigKey(key);
  return k != nullptr && k->is_bool;
}

}  // namespace kvfs
