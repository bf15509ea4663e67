// The table of kvfs's own config keys: for each key its name, how to parse it into KvfsConfig and
// how to print it back. The YAML file, -o options and KVFS_* variables all go through this table,
// so a key behaves the same everywhere. Internal to src/config*.cc.
//
// Thread-safety: the table is built once (function-local static) and read-only afterwards.
#pragma once

#include <functional>
#include <string>
#include <string_view>
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

const std::vector<ConfigKey>& ConfigKeys();
// nullptr if `name` is not a kvfs key.
const ConfigKey* FindConfigKey(std::string_view name);

// Applies one value, turning a failure into "<source>: key '<display>': <reason>".
Status ApplyKey(const ConfigKey& key, const RawValue& value, const std::string& display_name,
                const std::string& source_name, KvfsConfig* config);

// "" or "a/b/": no leading slash, exactly one trailing slash.
std::string NormalizeKeyPrefix(std::string_view prefix);

}  // namespace kvfs
