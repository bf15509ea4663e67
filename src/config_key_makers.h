// Makers of the common kinds of config key (string, bool, integer, duration, size, enum, ...) and
// of the keys whose parsing is their own (source, key_prefix, addressing, log_level). Each maker
// returns a ConfigKey whose set/get go through a field accessor, so src/config_keys.cc's table is
// one line per key. Internal to src/config*.cc.
//
// Thread-safety: pure functions; the keys they return are immutable.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/config.h"
#include "src/config_key.h"
#include "src/config_values.h"

namespace kvfs {

// Makers for the common key types. A field accessor returns a reference into the config; the
// getter reuses it on a const config (it only reads).
template <typename T>
using Field = T& (*)(KvfsConfig&);

template <typename T>
const T& Read(Field<T> field, const KvfsConfig& c) {
  return field(const_cast<KvfsConfig&>(c));
}

inline RawValue Scalar(std::string s) {
  RawValue v;
  v.scalar = std::move(s);
  return v;
}

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Scalar keys refuse YAML sequences; list keys split a scalar.
inline std::vector<std::string> Items(const RawValue& v) {
  return v.is_list ? v.items : SplitList(v.scalar);
}

// The integer makers take the field in the width its options struct keeps it (int, uint32_t,
// int64_t, uint64_t): the key binds to the layer's own field, and the conversion is here.
ConfigKey StringKey(std::string name, Field<std::string> field, bool allow_empty = true);
ConfigKey BoolKey(std::string name, Field<bool> field);
ConfigKey IntKey(std::string name, Field<int> field, int64_t min, int64_t max);
ConfigKey IntKey(std::string name, Field<uint32_t> field, int64_t min, int64_t max);
// The field holds the duration in units of `field_unit_ms` (1 for ms fields, 1000 for s fields);
// min and max are in that unit. A bare number is in `bare_unit_ms` (0: the field's unit), so a
// key documented in seconds may be kept in milliseconds (blocking_timeout).
ConfigKey DurationKey(std::string name, Field<int> field, int64_t field_unit_ms, int64_t min,
                      int64_t max);
ConfigKey DurationKey(std::string name, Field<uint32_t> field, int64_t field_unit_ms, int64_t min,
                      int64_t max);
ConfigKey DurationKey(std::string name, Field<int64_t> field, int64_t field_unit_ms, int64_t min,
                      int64_t max, int64_t bare_unit_ms = 0);
ConfigKey SizeKey(std::string name, Field<uint64_t> field, uint64_t min, uint64_t max);
ConfigKey SizeKey(std::string name, Field<uint32_t> field, uint64_t min, uint64_t max);
ConfigKey FractionKey(std::string name, Field<double> field);
ConfigKey SecretKey(std::string name, Field<std::string> field);
ConfigKey SizeListKey(std::string name, Field<std::vector<uint64_t>> field);
ConfigKey StringListKey(std::string name, Field<std::vector<std::string>> field);
// A user or group id: -1 (kvfs's own) is kept as (uid_t)-1, FsOptions' "unset".
ConfigKey IdKey(std::string name, Field<uint32_t> field);

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

// Keys whose parsing is not one of the common types.
ConfigKey SourceKey();
ConfigKey KeyPrefixKey();
ConfigKey AddressingKey();
ConfigKey LogLevelKey();
// umask: sets FsOptions::file_mode (0666 & ~umask) and dir_mode (0777 & ~umask).
ConfigKey UmaskKey();

}  // namespace kvfs
