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
#include "src/config_key.h"

namespace kvfs {

const std::vector<ConfigKey>& ConfigKeys();
// nullptr if `name` is not a kvfs key.
const ConfigKey* FindConfigKey(std::string_view name);

// Applies one value, turning a failure into "<source>: key '<display>': <reason>".
Status ApplyKey(const ConfigKey& key, const RawValue& value, const std::string& display_name,
                const std::string& source_name, KvfsConfig* config);

}  // namespace kvfs
