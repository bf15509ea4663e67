// Where the cache lives by default (declared in src/config.h). The configuration's layers have
// rooms of their own: the key=value text and the KVFS_* environment src/config_text.cc, the YAML
// file src/config_file.cc, the source URL src/config_source.cc.
#include "src/config.h"

#include <unistd.h>

#include <cstdlib>

namespace kvfs {

std::string DefaultCacheDir() {
  if (geteuid() == 0) return "/var/cache/kvfs";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/kvfs";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/kvfs";
  return "/tmp/kvfs-" + std::to_string(geteuid());
}

}  // namespace kvfs
