// The configuration's key=value layers (declared in src/config.h): one setting given as text
// (-o, the command line) and the KVFS_* environment, both through the key table
// (src/config_keys.h), as the YAML layer (src/config_file.cc) is.
#include <cctype>
#include <string>

#include "src/config.h"
#include "src/config_keys.h"

namespace kvfs {

Status ApplyConfigValue(const std::string& key, const std::string& value,
                        const std::string& source_name, KvfsConfig* config) {
  const ConfigKey* k = FindConfigKey(key);
  if (k == nullptr) return Status::NotFound(source_name + ": '" + key + "' is not a kvfs setting");
  RawValue raw;
  raw.scalar = value;
  return ApplyKey(*k, raw, key, source_name, config);
}

Status ApplyEnvironment(const EnvLookup& getenv, KvfsConfig* config) {
  for (const char* name : {"AWS_DEFAULT_REGION", "AWS_REGION"}) {  // AWS_REGION wins
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') {
      config->s3.region = v;
      config->region_set = true;
    }
  }
  for (const std::string& key : ConfigKeyNames()) {
    std::string var = "KVFS_" + key;
    for (char& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const char* v = getenv(var.c_str());
    if (v == nullptr) continue;
    KVFS_RETURN_IF_ERROR(ApplyConfigValue(key, v, "environment " + var, config));
  }
  return Status::OK();
}

}  // namespace kvfs
