#include "src/config_keys.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "src/config_values.h"

namespace kvfs {
namespace {

// Makers for the common key types. A field accessor returns a reference into the config; the
// getter reuses it on a const config (it only reads).
template <typename T>
using Field = T& (*)(KvfsConfig&);

template <typename T>
const T& Read(Field<T> field, const KvfsConfig& c) {
  return field(const_cast<KvfsConfig&>(c));
}

RawValue Scalar(std::string s) {
  RawValue v;
  v.scalar = std::move(s);
  return v;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Scalar keys refuse YAML sequences; list keys split a scalar.
std::vector<std::string> Items(const RawValue& v) {
  return v.is_list ? v.items : SplitList(v.scalar);
}

ConfigKey StringKey(std::string name, Field<std::string> field, bool allow_empty = true) {
  ConfigKey k;
  k.name = name;
  k.set = [field, allow_empty](KvfsConfig& c, const RawValue& v, const std::string&) {
    std::string s(Trim(v.scalar));
    if (s.empty() && !allow_empty) return std::string("must not be empty");
    field(c) = s;
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(Read(field, c)); };
  return k;
}

ConfigKey BoolKey(std::string name, Field<bool> field) {
  ConfigKey k;
  k.name = name;
  k.is_bool = true;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto b = ParseBool(v.scalar);
    if (!b) return Quote(v.scalar) + " is not a boolean (true/false)";
    field(c) = *b;
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(Read(field, c) ? "true" : "false"); };
  return k;
}

ConfigKey IntKey(std::string name, Field<int> field, int min, int max) {
  ConfigKey k;
  k.name = name;
  k.set = [field, min, max](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto n = ParseInt(v.scalar, min, max);
    if (!n) {
      return Quote(v.scalar) + " is not an integer from " + std::to_string(min) + " to " +
             std::to_string(max);
    }
    field(c) = static_cast<int>(*n);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(std::to_string(Read(field, c))); };
  return k;
}

// A duration stored as an int in `field_unit_ms` units; a bare number is in that unit too.
ConfigKey DurationKey(std::string name, Field<int> field, int64_t field_unit_ms, int64_t min,
                      int64_t max) {
  ConfigKey k;
  k.name = name;
  k.set = [field, field_unit_ms, min, max](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto ms = ParseDurationMs(v.scalar, field_unit_ms);
    if (!ms || *ms % field_unit_ms != 0) {
      return Quote(v.scalar) + " is not a duration (e.g. 500ms, 10s, 2m)";
    }
    int64_t n = *ms / field_unit_ms;
    if (n < min || n > max) {
      return Quote(v.scalar) + " is out of range (" + std::to_string(min) + " to " +
             std::to_string(max) + (field_unit_ms == 1 ? " ms)" : " s)");
    }
    field(c) = static_cast<int>(n);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(std::to_string(Read(field, c))); };
  return k;
}

ConfigKey SizeKey(std::string name, Field<uint64_t> field, uint64_t min, uint64_t max) {
  ConfigKey k;
  k.name = name;
  k.set = [field, min, max](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto n = ParseSize(v.scalar);
    if (!n) return Quote(v.scalar) + " is not a size (e.g. 8MiB, 64GiB or a byte count)";
    if (*n < min || *n > max) {
      return Quote(v.scalar) + " is out of range (" + FormatSize(min) + " to " + FormatSize(max) +
             ")";
    }
    field(c) = *n;
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(FormatSize(Read(field, c))); };
  return k;
}

ConfigKey FractionKey(std::string name, Field<double> field) {
  ConfigKey k;
  k.name = name;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto d = ParseDouble(v.scalar);
    if (!d || *d <= 0.0 || *d > 1.0) {
      return Quote(v.scalar) + " is not a fraction in (0, 1] (e.g. 0.85)";
    }
    field(c) = *d;
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) {
    std::string s = std::to_string(Read(field, c));
    while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
    return Scalar(s);
  };
  return k;
}

template <typename E>
ConfigKey EnumKey(std::string name, Field<E> field, std::vector<std::pair<std::string, E>> names) {
  ConfigKey k;
  k.name = name;
  k.set = [field, names](KvfsConfig& c, const RawValue& v, const std::string&) {
    std::string s = ToLower(Trim(v.scalar));
    std::string choices;
    for (const auto& [n, e] : names) {
      if (s == n) {
        field(c) = e;
        return std::string();
      }
      choices += (choices.empty() ? "" : ", ") + n;
    }
    return Quote(v.scalar) + " is not one of: " + choices;
  };
  k.get = [field, names](const KvfsConfig& c) {
    for (const auto& [n, e] : names) {
      if (Read(field, c) == e) return Scalar(n);
    }
    return Scalar("?");
  };
  return k;
}

ConfigKey SecretKey(std::string name, Field<std::string> field) {
  ConfigKey k = StringKey(std::move(name), field);
  k.secret = true;
  auto set = k.set;
  k.set = [set](KvfsConfig& c, const RawValue& v, const std::string& origin) {
    std::string r = set(c, v, origin);
    if (!Trim(v.scalar).empty()) c.s3.credentials.source = origin;
    return r;
  };
  k.get = [field](const KvfsConfig& c) {
    return Scalar(Read(field, c).empty() ? "" : "<redacted>");
  };
  return k;
}

ConfigKey SizeListKey(std::string name, Field<std::vector<uint64_t>> field) {
  ConfigKey k;
  k.name = name;
  k.is_list = true;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    std::vector<uint64_t> sizes;
    for (const std::string& item : Items(v)) {
      auto n = ParseSize(item);
      if (!n || *n == 0) return Quote(item) + " is not a size (e.g. 8MiB, 64GiB or a byte count)";
      sizes.push_back(*n);
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    field(c) = std::move(sizes);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) {
    RawValue v;
    v.is_list = true;
    for (uint64_t n : Read(field, c)) v.items.push_back(FormatSize(n));
    return v;
  };
  return k;
}

ConfigKey StringListKey(std::string name, Field<std::vector<std::string>> field) {
  ConfigKey k;
  k.name = name;
  k.is_list = true;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    field(c) = Items(v);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) {
    RawValue v;
    v.is_list = true;
    v.items = Read(field, c);
    return v;
  };
  return k;
}

// A user or group id: -1 (kvfs's own) or 0 .. 2^32-2 ((uid_t)-1 is reserved).
ConfigKey IdKey(std::string name, Field<int64_t> field) {
  ConfigKey k;
  k.name = name;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto n = ParseInt(v.scalar, -1, 4'294'967'294);
    if (!n) return Quote(v.scalar) + " is not a numeric id (-1 for kvfs's own, or 0 to 4294967294)";
    field(c) = *n;
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(std::to_string(Read(field, c))); };
  return k;
}

// Permission bits in octal, as umask(1) and mount options take them ("022", "0027").
ConfigKey OctalModeKey(std::string name, Field<uint32_t> field) {
  ConfigKey k;
  k.name = name;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    std::string_view s = Trim(v.scalar);
    if (s.empty() || s.size() > 4 || s.find_first_not_of("01234567") != std::string_view::npos ||
        std::stoul(std::string(s), nullptr, 8) > 0777) {
      return Quote(v.scalar) + " is not an octal mode from 000 to 0777 (e.g. 022)";
    }
    field(c) = static_cast<uint32_t>(std::stoul(std::string(s), nullptr, 8));
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%04o", Read(field, c));
    return Scalar(buf);
  };
  return k;
}

// Keys whose parsing is not one of the common types.
ConfigKey SourceKey() {
  ConfigKey k;
  k.name = "source";
  k.set = [](KvfsConfig& c, const RawValue& v, const std::string&) {
    Status st = ApplySourceUrl(std::string(Trim(v.scalar)), /*lmcache_form=*/false, &c);
    return st.ok() ? std::string() : st.message();
  };
  k.get = [](const KvfsConfig& c) { return Scalar(c.source); };
  return k;
}

ConfigKey KeyPrefixKey() {
  ConfigKey k;
  k.name = "key_prefix";
  k.set = [](KvfsConfig& c, const RawValue& v, const std::string&) {
    c.key_prefix = NormalizeKeyPrefix(Trim(v.scalar));
    return std::string();
  };
  k.get = [](const KvfsConfig& c) { return Scalar(c.key_prefix); };
  return k;
}

ConfigKey AddressingKey() {
  ConfigKey k;
  k.name = "addressing";
  k.set = [](KvfsConfig& c, const RawValue& v, const std::string&) {
    std::string s = ToLower(Trim(v.scalar));
    if (s == "path") {
      c.s3.path_style = true;
    } else if (s == "virtual" || s == "virtual-hosted") {
      c.s3.path_style = false;
    } else {
      return Quote(v.scalar) + " is not one of: path, virtual";
    }
    return std::string();
  };
  k.get = [](const KvfsConfig& c) { return Scalar(c.s3.path_style ? "path" : "virtual"); };
  return k;
}

ConfigKey LogLevelKey() {
  ConfigKey k;
  k.name = "log_level";
  k.set = [](KvfsConfig& c, const RawValue& v, const std::string&) {
    static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
    std::string s = ToLower(Trim(v.scalar));
    if (s == "warning") s = "warn";
    for (const char* level : kLevels) {
      if (s == level) {
        c.log_level = s;
        return std::string();
      }
    }
    return Quote(v.scalar) + " is not one of: trace, debug, info, warn, error, critical, off";
  };
  k.get = [](const KvfsConfig& c) { return Scalar(c.log_level); };
  return k;
}

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
  t.push_back(AddressingKey());
  t.push_back(BoolKey(
      "path_style", [](KvfsConfig & c) -> auto& { return c.s3.path_style; }));
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
      "blocking_timeout", [](KvfsConfig & c) -> auto& { return c.blocking_timeout; }, 1000, 0,
      86'400));
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
      "get_part_size", [](KvfsConfig & c) -> auto& { return c.get_part_size; }, 64 * 1024,
      5 * kGiB));
  t.push_back(SizeKey(
      "multipart_threshold", [](KvfsConfig & c) -> auto& { return c.multipart_threshold; },
      5 * kMiB, kMaxSize));
  t.push_back(SizeKey(
      "multipart_part_size", [](KvfsConfig & c) -> auto& { return c.multipart_part_size; },
      5 * kMiB, 5 * kGiB));
  // Cache.
  t.push_back(StringKey(
      "cache_dir", [](KvfsConfig & c) -> auto& { return c.cache_dir; }));
  t.push_back(SizeKey(
      "cache_size", [](KvfsConfig & c) -> auto& { return c.cache_size; }, 0, kMaxSize));
  t.push_back(FractionKey(
      "cache_high_watermark", [](KvfsConfig & c) -> auto& { return c.cache_high_watermark; }));
  t.push_back(FractionKey(
      "cache_evict_ratio", [](KvfsConfig & c) -> auto& { return c.cache_evict_ratio; }));
  // Chunks and names.
  t.push_back(SizeListKey(
      "chunk_sizes", [](KvfsConfig & c) -> auto& { return c.chunk_sizes; }));
  t.push_back(SizeKey(
      "max_chunk_bytes", [](KvfsConfig & c) -> auto& { return c.max_chunk_bytes; }, 1, kMaxSize));
  t.push_back(StringListKey(
      "temp_patterns", [](KvfsConfig & c) -> auto& { return c.temp_patterns; }));
  t.push_back(EnumKey<UnlinkPolicy>("unlink_policy",
                                    [](KvfsConfig & c) -> auto& { return c.unlink_policy; },
                                    {{"remote", UnlinkPolicy::kRemote},
                                     {"local", UnlinkPolicy::kLocal},
                                     {"deny", UnlinkPolicy::kDeny}}));
  t.push_back(EnumKey<ExistsPolicy>(
      "exists_policy", [](KvfsConfig & c) -> auto& { return c.exists_policy; },
      {{"same-size-ok", ExistsPolicy::kSameSizeOk}, {"eexist", ExistsPolicy::kEexist}}));
  t.push_back(DurationKey(
      "metadata_cache_ttl_secs", [](KvfsConfig & c) -> auto& { return c.metadata_cache_ttl_secs; },
      1000, 0, 86'400));
  t.push_back(DurationKey(
      "stale_upload_age_secs", [](KvfsConfig & c) -> auto& { return c.stale_upload_age_secs; },
      1000, 0, 30 * 86'400));
  t.push_back(DurationKey(
      "cached_chunk_trust_secs", [](KvfsConfig & c) -> auto& { return c.cached_chunk_trust_secs; },
      1000, 0, 30 * 86'400));
  t.push_back(IntKey(
      "fanout", [](KvfsConfig & c) -> auto& { return c.fanout; }, 0, 8));
  t.push_back(BoolKey(
      "subdirectories", [](KvfsConfig & c) -> auto& { return c.subdirectories; }));
  t.push_back(BoolKey(
      "upload_while_writing", [](KvfsConfig & c) -> auto& { return c.upload_while_writing; }));
  // FUSE and process.
  t.push_back(BoolKey(
      "page_cache", [](KvfsConfig & c) -> auto& { return c.page_cache; }));
  t.push_back(SizeKey(
      "statfs_size", [](KvfsConfig & c) -> auto& { return c.statfs_size; }, 0, kMaxSize));
  t.push_back(BoolKey(
      "allow_other", [](KvfsConfig & c) -> auto& { return c.allow_other; }));
  t.push_back(IdKey(
      "uid", [](KvfsConfig & c) -> auto& { return c.uid; }));
  t.push_back(IdKey(
      "gid", [](KvfsConfig & c) -> auto& { return c.gid; }));
  t.push_back(OctalModeKey(
      "umask", [](KvfsConfig & c) -> auto& { return c.umask; }));
  t.push_back(BoolKey(
      "read_only", [](KvfsConfig & c) -> auto& { return c.read_only; }));
  t.push_back(IntKey(
      "fuse_threads", [](KvfsConfig & c) -> auto& { return c.fuse_threads; }, 1, 1024));
  t.push_back(SizeKey(
      "max_read", [](KvfsConfig & c) -> auto& { return c.max_read; }, 0, 1024 * kMiB));
  t.push_back(LogLevelKey());
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

std::string NormalizeKeyPrefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.front() == '/') prefix.remove_prefix(1);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return prefix.empty() ? std::string() : std::string(prefix) + "/";
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
