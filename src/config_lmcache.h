// LMCache's configuration vocabulary, as kvfs reads it from an LMCache config file
// (src/config_file.cc): the top-level and extra_config keys that mean nothing to kvfs (accepted
// silently, so LMCache's files load unchanged) and the extra_config keys that are kvfs keys under
// another name.
//
// Thread-safety: pure functions over constant tables (reentrant).
#pragma once

#include <string_view>

namespace kvfs {

// An LMCache top-level key with no meaning for kvfs (chunk_size, local_cpu, ...).
bool IsIgnoredLmcacheKey(std::string_view key);
// An extra_config key with no meaning for kvfs (save_chunk_meta, s3_part_size).
bool IsIgnoredExtraConfigKey(std::string_view key);
// The kvfs key an extra_config key means ("s3_region" -> "region"); nullptr if none.
const char* ExtraConfigAlias(std::string_view key);

}  // namespace kvfs
