// One kvfs config key: its name, its kind, and how it is set in and printed from KvfsConfig. The
// table of them is src/config_keys.h; the helpers that make one are src/config_key_makers.h (a
// room of their own, so that neither of those two includes the other).
//
// Thread-compatible: plain values; the table's are read-only once built.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/config.h"

namespace kvfs {

// A value as it arrives: one scalar (YAML scalar, -o value, variable) or a YAML sequence.
struct RawValue {
  bool is_list = false;
  std::string scalar;
  std::vector<std::string> items;
};

struct ConfigKey {
  std::string name;
  bool is_list = false;  // a list key also accepts one scalar with items separated by , or :
  bool is_bool = false;  // usable as a bare -o flag
  bool secret = false;   // value never printed or put in a message
  // Stores the value; returns "" on success, else the reason ("'12XB' is not a size").
  // `origin` says where the value came from (used for credentials' source).
  std::function<std::string(KvfsConfig&, const RawValue&, const std::string& origin)> set;
  // The current value, for DumpConfig; unset for a spelling shown under another key.
  std::function<RawValue(const KvfsConfig&)> get;
};

}  // namespace kvfs
