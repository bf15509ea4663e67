// The configuration's key=value layers (declared in src/config.h): one setting given as text
// (-o, the command line) and the KVFS_* environment; and where the cache lives by default. The
// YAML layer is src/config_file.cc, the source URL src/config_source.cc.
#include "src/config.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "src/config_keys.h"

namespace kvfs {

std::string DefaultCacheDir() {
  if (geteuid() == 0) return "/var/cache/kvfs";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/kvfs";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/kvfs";
  return "/tmp/kvfs-" + std::to_string(geteuid());
}

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
