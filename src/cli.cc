#include "src/cli.h"

#include <set>

#include "src/config_keys.h"
#include "src/config_values.h"
#include "src/config_warnings.h"

#ifndef KVFS_VERSION
#define KVFS_VERSION "unknown"
#endif

namespace kvfs {
namespace {

Status Usage(const std::string& message) { return Status::InvalidArgument(message); }

}  // namespace

Result<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine cmd;
  std::vector<std::string> positional;
  bool help = false;
  bool version = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto next_value = [&](const std::string& option) -> Result<std::string> {
      if (i + 1 >= args.size()) return Usage("option '" + option + "' needs a value");
      return args[++i];
    };
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg.size() > 2 && arg[0] == '-' && arg[1] == '-') {
      std::string name = arg.substr(2, arg.find('=') - 2);
      bool has_value = arg.find('=') != std::string::npos;
      std::string value = has_value ? arg.substr(arg.find('=') + 1) : "";
      if (name == "help" && !has_value) {
        help = true;
      } else if (name == "version" && !has_value) {
        version = true;
      } else if (name == "foreground" && !has_value) {
        cmd.foreground = true;
      } else if (name == "debug" && !has_value) {
        cmd.debug = cmd.foreground = true;
      } else if (name == "dump-config" && !has_value) {
        cmd.dump_config = true;
      } else if (name == "dry-run" && !has_value) {
        cmd.dry_run = true;
      } else if (name == "config" || name == "option") {
        if (!has_value) {
          KVFS_ASSIGN_OR_RETURN(value, next_value("--" + name));
        }
        if (name == "config") {
          cmd.config_path = value;
        } else {
          KVFS_RETURN_IF_ERROR(ParseMountOptions(value, &cmd));
        }
      } else {
        return Usage("unknown option '--" + name + "'");
      }
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      // Clustered short flags ("-fd"); -o takes the rest of the word or the next argument.
      for (size_t j = 1; j < arg.size(); ++j) {
        char c = arg[j];
        if (c == 'f') {
          cmd.foreground = true;
        } else if (c == 'd') {
          cmd.debug = cmd.foreground = true;
        } else if (c == 's') {
          cmd.single_thread = true;
        } else if (c == 'h') {
          help = true;
        } else if (c == 'V') {
          version = true;
        } else if (c == 'o') {
          std::string value = arg.substr(j + 1);
          if (value.empty()) {
            KVFS_ASSIGN_OR_RETURN(value, next_value("-o"));
          }
          KVFS_RETURN_IF_ERROR(ParseMountOptions(value, &cmd));
          break;
        } else {
          return Usage(std::string("unknown option '-") + c + "'");
        }
      }
      continue;
    }
    positional.push_back(arg);
  }

  if (help) {
    cmd.command = Command::kHelp;
    return cmd;
  }
  if (version) {
    cmd.command = Command::kVersion;
    return cmd;
  }
  if (!positional.empty() && positional[0] == "warm") {
    cmd.command = Command::kWarm;
    if (positional.size() < 3) return Usage("usage: kvfs warm [options] MOUNTPOINT NAME...|-");
    cmd.mountpoint = positional[1];
    cmd.names.assign(positional.begin() + 2, positional.end());
    return cmd;
  }
  if (!positional.empty() && positional[0] == "stats") {
    cmd.command = Command::kStats;
    if (positional.size() != 2) return Usage("usage: kvfs stats MOUNTPOINT");
    cmd.mountpoint = positional[1];
    return cmd;
  }
  if (!positional.empty() && positional[0] == "sync") {
    cmd.command = Command::kSync;
    if (positional.size() != 2) return Usage("usage: kvfs sync MOUNTPOINT");
    cmd.mountpoint = positional[1];
    return cmd;
  }
  if (!positional.empty() && positional[0] == "log-level") {
    cmd.command = Command::kLogLevel;
    if (positional.size() < 2 || positional.size() > 3) {
      return Usage("usage: kvfs log-level MOUNTPOINT [LEVEL]");
    }
    cmd.mountpoint = positional[1];
    cmd.names.assign(positional.begin() + 2, positional.end());
    return cmd;
  }
  if (!positional.empty() && positional[0] == "gc") {
    cmd.command = Command::kGc;
    if (positional.size() != 2)
      return Usage("usage: kvfs gc [options] SOURCE|MOUNTPOINT [--dry-run]");
    // A URL is a store; anything else a mount point.
    (positional[1].find("://") != std::string::npos ? cmd.source : cmd.mountpoint) = positional[1];
    return cmd;
  }
  if (cmd.dry_run) return Usage("--dry-run is an option of kvfs gc");
  if (!positional.empty() && positional[0] == "du") {
    cmd.command = Command::kDu;
    if (positional.size() < 2) return Usage("usage: kvfs du MOUNTPOINT [DIR...]");
    cmd.mountpoint = positional[1];
    cmd.names.assign(positional.begin() + 2, positional.end());
    return cmd;
  }
  if (cmd.dump_config && positional.size() <= 1) {
    // --dump-config needs no mount point; SOURCE is optional.
    if (!positional.empty()) cmd.source = positional[0];
    return cmd;
  }
  if (positional.size() == 1 && positional[0].find("://") == std::string::npos) {
    // `kvfs [options] MOUNTPOINT`: the source comes from the config (`source`, `remote_url`).
    cmd.mountpoint = positional[0];
    return cmd;
  }
  if (positional.size() != 2) {
    return Usage(positional.empty()       ? "missing SOURCE and MOUNTPOINT"
                 : positional.size() == 1 ? "missing MOUNTPOINT"
                                          : "too many arguments; expected SOURCE MOUNTPOINT");
  }
  cmd.source = positional[0];
  cmd.mountpoint = positional[1];
  return cmd;
}

Result<CommandLine> ParseCommandLine(int argc, const char* const* argv) {
  std::vector<std::string> args(argv, argv + argc);
  return ParseCommandLine(args);
}

std::string VersionText() { return std::string("kvfs ") + KVFS_VERSION + "\n"; }

std::string UsageText(const std::string& program) {
  std::string keys;
  for (const std::string& key : ConfigKeyNames()) {
    keys += (keys.empty() ? "" : ", ") + key;
  }
  return "Usage: " + program + " [options] [SOURCE] MOUNTPOINT\n" + "       " + program +
         " warm [options] MOUNTPOINT NAME...|-\n" + "       " + program + " stats MOUNTPOINT\n" +
         "       " + program + " sync MOUNTPOINT\n" + "       " + program +
         " log-level MOUNTPOINT [LEVEL]\n" + "       " + program + " du MOUNTPOINT [DIR...]\n" +
         "       " + program +
         " gc [options] SOURCE|MOUNTPOINT [--dry-run]\n"
         "\n"
         "Mount an S3 bucket prefix (or a local directory) as a flat directory of KV-cache chunk\n"
         "files.\n"
         "\n"
         "SOURCE:\n"
         "  s3://bucket[/prefix]               bucket on the configured endpoint\n"
         "  s3://host:port/bucket[/prefix]     path-style bucket on host:port\n"
         "  file:///absolute/dir               a local directory\n"
         "\n"
         "Options:\n"
         "  -f, --foreground      stay in the foreground, log to stderr\n"
         "  -d, --debug           debug logging (implies -f)\n"
         "  -s                    single-threaded FUSE loop\n"
         "  -o OPT[,OPT...]       mount options: config=FILE, any config key as key=value\n"
         "                        (lists separated by ':'), boolean keys as bare flags,\n"
         "                        generic mount options (ro, rw, nosuid, nodev, _netdev, ...)\n"
         "  --config FILE         YAML config file (default: $KVFS_CONFIG)\n"
         "  --dump-config         print the effective configuration (secrets redacted)\n"
         "  -h, --help            this text\n"
         "  -V, --version         the version\n"
         "\n"
         "Config keys: " +
         keys +
         "\n"
         "\n"
         "Precedence: command line > config file > environment (KVFS_<KEY>) > defaults.\n"
         "See kvfs(8).\n";
}

Result<KvfsConfig> ResolveConfig(const CommandLine& cmd, const EnvLookup& getenv) {
  KvfsConfig config;
  KVFS_RETURN_IF_ERROR(ApplyEnvironment(getenv, &config));
  std::string path = cmd.config_path;
  if (path.empty()) {
    const char* env = getenv("KVFS_CONFIG");
    if (env != nullptr) path = env;
  }
  if (!path.empty()) KVFS_RETURN_IF_ERROR(ApplyConfigFile(path, &config));
  if (!cmd.source.empty()) {
    Status st = ApplySourceUrl(cmd.source, /*lmcache_form=*/false, &config);
    if (!st.ok()) return Status::InvalidArgument("command line: SOURCE: " + st.message());
  }
  std::set<std::string> secrets_warned;
  for (const auto& [key, value] : cmd.settings) {
    KVFS_RETURN_IF_ERROR(ApplyConfigValue(key, value, "command line", &config));
    const ConfigKey* k = FindConfigKey(key);
    if (k != nullptr && k->secret && secrets_warned.insert(key).second) {
      config.warnings.push_back(SecretOnCommandLineWarning(key));
    }
  }
  if (cmd.debug) config.log_level = "debug";
  // -s as libfuse means it: one thread serves every request (debugging).
  if (cmd.single_thread) config.fuse.max_threads = 1;
  if (cmd.command == Command::kMount && !cmd.dump_config &&
      config.source_kind == SourceKind::kNone) {
    return Status::InvalidArgument(
        "no SOURCE: give s3://bucket[/prefix] or file:///dir before MOUNTPOINT, or set 'source' "
        "(or LMCache's 'remote_url') in the config file");
  }
  KVFS_RETURN_IF_ERROR(ValidateConfig(config));
  return config;
}

}  // namespace kvfs
