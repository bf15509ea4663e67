#include "src/config_key_makers.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "src/config_values.h"

namespace kvfs {

ConfigKey StringKey(std::string name, Field<std::string> field, bool allow_empty) {
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

namespace {

template <typename T>
ConfigKey AnyIntKey(std::string name, Field<T> field, int64_t min, int64_t max) {
  ConfigKey k;
  k.name = name;
  k.set = [field, min, max](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto n = ParseInt(v.scalar, min, max);
    if (!n) {
      return Quote(v.scalar) + " is not an integer from " + std::to_string(min) + " to " +
             std::to_string(max);
    }
    field(c) = static_cast<T>(*n);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(std::to_string(Read(field, c))); };
  return k;
}

// A duration kept in `field_unit_ms` units; a bare number is in `bare_unit_ms`.
template <typename T>
ConfigKey AnyDurationKey(std::string name, Field<T> field, int64_t field_unit_ms, int64_t min,
                         int64_t max, int64_t bare_unit_ms) {
  if (bare_unit_ms == 0) bare_unit_ms = field_unit_ms;
  ConfigKey k;
  k.name = name;
  k.set = [field, field_unit_ms, bare_unit_ms, min, max](KvfsConfig& c, const RawValue& v,
                                                         const std::string&) {
    auto ms = ParseDurationMs(v.scalar, bare_unit_ms);
    if (!ms || *ms % field_unit_ms != 0) {
      return Quote(v.scalar) + " is not a duration (e.g. 500ms, 10s, 2m)";
    }
    int64_t n = *ms / field_unit_ms;
    if (n < min || n > max) {
      return Quote(v.scalar) + " is out of range (" + std::to_string(min) + " to " +
             std::to_string(max) + (field_unit_ms == 1 ? " ms)" : " s)");
    }
    field(c) = static_cast<T>(n);
    return std::string();
  };
  // Shown in the key's own unit when it is whole there, so a dump reads back the same.
  k.get = [field, field_unit_ms, bare_unit_ms](const KvfsConfig& c) {
    const int64_t ms = static_cast<int64_t>(Read(field, c)) * field_unit_ms;
    if (ms % bare_unit_ms == 0) return Scalar(std::to_string(ms / bare_unit_ms));
    return Scalar(std::to_string(ms) + "ms");
  };
  return k;
}

template <typename T>
ConfigKey AnySizeKey(std::string name, Field<T> field, uint64_t min, uint64_t max) {
  ConfigKey k;
  k.name = name;
  k.set = [field, min, max](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto n = ParseSize(v.scalar);
    if (!n) return Quote(v.scalar) + " is not a size (e.g. 8MiB, 64GiB or a byte count)";
    if (*n < min || *n > max) {
      return Quote(v.scalar) + " is out of range (" + FormatSize(min) + " to " + FormatSize(max) +
             ")";
    }
    field(c) = static_cast<T>(*n);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) { return Scalar(FormatSize(Read(field, c))); };
  return k;
}

}  // namespace

ConfigKey IntKey(std::string name, Field<int> field, int64_t min, int64_t max) {
  return AnyIntKey(std::move(name), field, min, max);
}
ConfigKey IntKey(std::string name, Field<uint32_t> field, int64_t min, int64_t max) {
  return AnyIntKey(std::move(name), field, min, max);
}
ConfigKey DurationKey(std::string name, Field<int> field, int64_t field_unit_ms, int64_t min,
                      int64_t max) {
  return AnyDurationKey(std::move(name), field, field_unit_ms, min, max, 0);
}
ConfigKey DurationKey(std::string name, Field<uint32_t> field, int64_t field_unit_ms, int64_t min,
                      int64_t max) {
  return AnyDurationKey(std::move(name), field, field_unit_ms, min, max, 0);
}
ConfigKey DurationKey(std::string name, Field<int64_t> field, int64_t field_unit_ms, int64_t min,
                      int64_t max, int64_t bare_unit_ms) {
  return AnyDurationKey(std::move(name), field, field_unit_ms, min, max, bare_unit_ms);
}
ConfigKey SizeKey(std::string name, Field<uint64_t> field, uint64_t min, uint64_t max) {
  return AnySizeKey(std::move(name), field, min, max);
}
ConfigKey SizeKey(std::string name, Field<uint32_t> field, uint64_t min, uint64_t max) {
  return AnySizeKey(std::move(name), field, min, max);
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
ConfigKey IdKey(std::string name, Field<uint32_t> field) {
  ConfigKey k;
  k.name = name;
  k.set = [field](KvfsConfig& c, const RawValue& v, const std::string&) {
    auto n = ParseInt(v.scalar, -1, 4'294'967'294);
    if (!n) return Quote(v.scalar) + " is not a numeric id (-1 for kvfs's own, or 0 to 4294967294)";
    field(c) = *n < 0 ? static_cast<uint32_t>(-1) : static_cast<uint32_t>(*n);
    return std::string();
  };
  k.get = [field](const KvfsConfig& c) {
    const uint32_t id = Read(field, c);
    return Scalar(id == static_cast<uint32_t>(-1) ? "-1" : std::to_string(id));
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
    } else if (s == "auto") {
      c.s3.path_style = true;
      c.addressing_set = false;
      return std::string();
    } else {
      return Quote(v.scalar) + " is not one of: auto, path, virtual";
    }
    c.addressing_set = true;
    return std::string();
  };
  // auto: virtual-hosted on AWS endpoints, path style elsewhere (store_factory.cc).
  k.get = [](const KvfsConfig& c) {
    return Scalar(!c.addressing_set ? "auto" : c.s3.path_style ? "path" : "virtual");
  };
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

// Permission bits in octal, as umask(1) and mount options take them ("022", "0027"). The modes
// are what the filesystem reports; the umask is shown back from the directories' mode.
ConfigKey UmaskKey() {
  ConfigKey k;
  k.name = "umask";
  k.set = [](KvfsConfig& c, const RawValue& v, const std::string&) {
    std::string_view s = Trim(v.scalar);
    if (s.empty() || s.size() > 4 || s.find_first_not_of("01234567") != std::string_view::npos ||
        std::stoul(std::string(s), nullptr, 8) > 0777) {
      return Quote(v.scalar) + " is not an octal mode from 000 to 0777 (e.g. 022)";
    }
    const auto mask = static_cast<uint32_t>(std::stoul(std::string(s), nullptr, 8));
    c.fs.file_mode = 0666 & ~mask;
    c.fs.dir_mode = 0777 & ~mask;
    return std::string();
  };
  k.get = [](const KvfsConfig& c) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%04o", 0777 & ~c.fs.dir_mode);
    return Scalar(buf);
  };
  return k;
}

}  // namespace kvfs
