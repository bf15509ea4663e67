// The -o option grammar: kvfs settings, libfuse's mount options, and those for mount/fstab only.
#include "src/mount_options.h"

#include <set>
#include <string_view>

#include "src/config_keys.h"
#include "src/config_values.h"

namespace kvfs {
namespace {

// fstab / mount(8) options that only mean something to mount, systemd or fstab itself.
bool IsIgnoredMountOption(std::string_view opt) {
  static const std::set<std::string_view> kIgnored = {
      "_netdev", "nofail", "auto",     "noauto",   "user",   "nouser", "users",
      "owner",   "group",  "defaults", "nonempty", "netdev", "bg",     "fg"};
  if (kIgnored.count(opt) != 0) return true;
  std::string_view name = opt.substr(0, opt.find('='));
  return name.substr(0, 2) == "x-" || name == "comment" || name == "helper";
}

// Options libfuse's mount understands; handed to it unchanged.
bool IsFuseMountOption(std::string_view opt) {
  static const std::set<std::string_view> kFlags = {"ro",
                                                    "rw",
                                                    "suid",
                                                    "nosuid",
                                                    "dev",
                                                    "nodev",
                                                    "exec",
                                                    "noexec",
                                                    "async",
                                                    "sync",
                                                    "dirsync",
                                                    "atime",
                                                    "noatime",
                                                    "diratime",
                                                    "nodiratime",
                                                    "relatime",
                                                    "norelatime",
                                                    "strictatime",
                                                    "nostrictatime",
                                                    "lazytime",
                                                    "nolazytime",
                                                    "default_permissions",
                                                    "auto_unmount",
                                                    "allow_root"};
  static const std::set<std::string_view> kValued = {"fsname",    "subtype",    "context",
                                                     "fscontext", "defcontext", "rootcontext"};
  size_t eq = opt.find('=');
  if (eq == std::string_view::npos) return kFlags.count(opt) != 0;
  return kValued.count(opt.substr(0, eq)) != 0;
}

Status Usage(const std::string& message) { return Status::InvalidArgument(message); }

Status ParseOneMountOption(const std::string& opt, CommandLine* cmd) {
  size_t eq = opt.find('=');
  std::string name = opt.substr(0, eq);
  if (opt == "debug") {
    cmd->debug = true;
    cmd->foreground = true;
  } else if (name == "config") {
    if (eq == std::string::npos || eq + 1 == opt.size()) {
      return Usage("mount option 'config' needs a file: -o config=FILE");
    }
    cmd->config_path = opt.substr(eq + 1);
  } else if (IsIgnoredMountOption(opt)) {
    cmd->ignored_options.push_back(opt);
  } else if (IsFuseMountOption(opt)) {
    cmd->fuse_options.push_back(opt);
    if (opt == "ro") cmd->settings.emplace_back("read_only", "true");
  } else if (FindConfigKey(name) != nullptr) {
    if (eq == std::string::npos) {
      if (!IsBooleanConfigKey(name)) return Usage("mount option '" + name + "' needs a value");
      cmd->settings.emplace_back(name, "true");
    } else {
      cmd->settings.emplace_back(name, opt.substr(eq + 1));
    }
  } else {
    // The value is not echoed: it might be a secret given under a misspelt name.
    return Usage("unknown mount option '" + name + "' (see kvfs --help)");
  }
  return Status::OK();
}

}  // namespace

Status ParseMountOptions(const std::string& options, CommandLine* cmd) {
  std::string current;
  auto flush = [&]() -> Status {
    std::string opt(Trim(current));
    current.clear();
    if (opt.empty()) return Status::OK();
    return ParseOneMountOption(opt, cmd);
  };
  for (size_t i = 0; i < options.size(); ++i) {
    char c = options[i];
    if (c == '\\' && i + 1 < options.size() && options[i + 1] == ',') {
      current += ',';
      ++i;
    } else if (c == ',') {
      KVFS_RETURN_IF_ERROR(flush());
    } else {
      current += c;
    }
  }
  return flush();
}

std::string EscapeFuseOptionValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace kvfs
