// YAML config files: kvfs's own keys (top level or under `kvfs:`) and LMCache's S3 backend keys
// (remote_url, blocking_timeout_secs, extra_config.s3_*...), so an LMCache config file can be used
// as-is. Within one file, keys are applied in a fixed order whatever their order in the text:
// LMCache's remote_url, then kvfs's `source`, then the other LMCache keys, then kvfs's own keys -
// so an explicit kvfs key always wins over the LMCache key that means the same thing.
//
// The YAML layer of the configuration (declared in src/config.h): this is the only user of
// yaml-cpp, and its exceptions never leave this file.
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "base/log.h"
#include "src/config.h"
#include "src/config_keys.h"
#include "src/config_lmcache.h"
#include "src/config_values.h"
#include "src/config_warnings.h"

namespace kvfs {
namespace {

// Order of application inside one file (see the file comment).
enum Priority { kLmcacheSource = 0, kKvfsSource = 1, kLmcacheKey = 2, kKvfsKey = 3 };

struct Entry {
  int priority;
  const ConfigKey* key;
  RawValue value;
  std::string display;  // the name as written in the file, e.g. "extra_config.s3_region"
};

// A YAML node as a RawValue; "" if it is a scalar or list, else the reason it is unusable.
std::string ToRaw(const YAML::Node& node, RawValue* out) {
  if (node.IsNull()) return "";
  if (node.IsScalar()) {
    out->scalar = node.Scalar();
    return "";
  }
  if (node.IsSequence()) {
    out->is_list = true;
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) return "expected a list of plain values";
      out->items.push_back(item.Scalar());
    }
    return "";
  }
  return "expected a value, not a mapping";
}

class FileParser {
 public:
  explicit FileParser(std::string source) : source_(std::move(source)) {}

  Status Collect(const YAML::Node& root) {
    for (const auto& item : root) {
      std::string name = item.first.Scalar();
      const YAML::Node& value = item.second;
      if (name == "kvfs") {
        KVFS_RETURN_IF_ERROR(CollectSection(value, "kvfs.", &FileParser::CollectKvfsKey));
      } else if (name == "extra_config") {
        KVFS_RETURN_IF_ERROR(CollectSection(value, "extra_config.", &FileParser::CollectExtra));
      } else if (name == "storage_backend") {
        KVFS_RETURN_IF_ERROR(CollectStorageBackend(value));
      } else if (name == "remote_url") {
        KVFS_RETURN_IF_ERROR(Add(kLmcacheSource, "source", value, name));
      } else if (name == "blocking_timeout_secs") {
        KVFS_RETURN_IF_ERROR(AddSeconds("blocking_timeout", value, name));
      } else if (name == "save_unfull_chunk") {
        KVFS_RETURN_IF_ERROR(AddSaveUnfullChunk(value, name));
      } else if (IsIgnoredLmcacheKey(name)) {
        continue;
      } else {
        KVFS_RETURN_IF_ERROR(CollectKvfsKey(name, value, name));
      }
    }
    return AddInflight();
  }

  Status Apply(KvfsConfig* config) {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry& a, const Entry& b) { return a.priority < b.priority; });
    for (const Entry& e : entries_) {
      if (e.priority == kLmcacheSource) {
        // LMCache's remote_url is virtual-hosted: s3://bucket.host.
        Status st = ApplySourceUrl(std::string(Trim(e.value.scalar)), true, config);
        if (!st.ok()) {
          return Status::InvalidArgument(source_ + ": key '" + e.display + "': " + st.message());
        }
        continue;
      }
      KVFS_RETURN_IF_ERROR(ApplyKey(*e.key, e.value, e.display, source_, config));
      if (e.key->secret && !Trim(e.value.scalar).empty()) secrets_.push_back(e.display);
    }
    return Status::OK();
  }

  // The secret keys the file set, as written in it (for ReadableSecretFileWarning).
  const std::vector<std::string>& secrets() const { return secrets_; }

 private:
  using Handler = Status (FileParser::*)(const std::string& name, const YAML::Node& value,
                                         const std::string& display);

  Status Error(const std::string& display, const std::string& reason) const {
    return Status::InvalidArgument(source_ + ": key '" + display + "': " + reason);
  }

  void WarnUnknown(const std::string& display) const {
    LogWarn("{}: ignoring unknown key '{}' (not a kvfs or LMCache S3 setting)", source_, display);
  }

  Status CollectSection(const YAML::Node& section, const std::string& prefix, Handler handler) {
    if (section.IsNull()) return Status::OK();
    if (!section.IsMap()) return Error(prefix.substr(0, prefix.size() - 1), "expected a mapping");
    for (const auto& item : section) {
      std::string name = item.first.Scalar();
      KVFS_RETURN_IF_ERROR((this->*handler)(name, item.second, prefix + name));
    }
    return Status::OK();
  }

  Status CollectKvfsKey(const std::string& name, const YAML::Node& value,
                        const std::string& display) {
    if (FindConfigKey(name) == nullptr) {
      WarnUnknown(display);
      return Status::OK();
    }
    return Add(name == "source" ? kKvfsSource : kKvfsKey, name, value, display);
  }

  Status CollectExtra(const std::string& name, const YAML::Node& value,
                      const std::string& display) {
    if (name == "s3_num_io_threads" || name == "s3_max_io_concurrency" ||
        name == "s3_max_inflight_reqs") {
      RawValue raw;
      std::string reason = ToRaw(value, &raw);
      auto n = reason.empty() && !raw.is_list ? ParseInt(raw.scalar, 1, 4096) : std::nullopt;
      if (!n) return Error(display, "'" + raw.scalar + "' is not an integer from 1 to 4096");
      inflight_[name] = static_cast<int>(*n);
      return Status::OK();
    }
    if (const char* alias = ExtraConfigAlias(name)) return Add(kLmcacheKey, alias, value, display);
    if (name.rfind("remote_storage_plugin.", 0) == 0) return CollectPlugin(name, value, display);
    if (!IsIgnoredExtraConfigKey(name)) WarnUnknown(display);
    return Status::OK();
  }

  // LMCache's Hugging Face bucket plugin: remote_storage_plugin.<plugin>.<field>, where <plugin>
  // is "hfbucket" or instance-qualified ("hfbucket.us"). One mount has one source: the first
  // bucket_handle is used.
  Status CollectPlugin(const std::string& name, const YAML::Node& value,
                       const std::string& display) {
    const size_t dot = name.rfind('.');
    const std::string plugin = name.substr(sizeof("remote_storage_plugin.") - 1,
                                           dot - (sizeof("remote_storage_plugin.") - 1));
    const std::string field = name.substr(dot + 1);
    if (plugin_.empty()) plugin_ = plugin;
    if (plugin != plugin_) {
      LogWarn(
          "{}: ignoring '{}': this mount serves plugin '{}' (one source per mount; "
          "mount '{}' with its own config)",
          source_, display, plugin_, plugin);
      return Status::OK();
    }
    if (field == "bucket_handle") return Add(kLmcacheSource, "source", value, display);
    if (field == "metadata_cache_ttl_secs") {
      return Add(kLmcacheKey, "metadata_cache_ttl_secs", value, display);
    }
    if (field == "download_tmp_dir") return Add(kLmcacheKey, "cache_dir", value, display);
    if (field == "token" || field == "token_env") {
      // The gateway speaks S3: it takes the access key pair the Hub issues for a token, not the
      // token itself.
      LogWarn(
          "{}: '{}' is not used: the Hugging Face S3 gateway authenticates with the S3 "
          "access key pair generated for your Hub token (HFAK...); give it as "
          "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or access_key_id/secret_access_key",
          source_, display);
      return Status::OK();
    }
    if (field == "create_bucket_if_missing") {
      RawValue raw;
      ToRaw(value, &raw);
      if (raw.scalar == "true" || raw.scalar == "True" || raw.scalar == "1") {
        LogWarn(
            "{}: '{}' is not supported: kvfs does not create buckets; create it on the "
            "Hub first (a missing bucket stops the mount with a message naming it)",
            source_, display);
      }
      return Status::OK();
    }
    WarnUnknown(display);
    return Status::OK();
  }

  // The porting guide's form: storage_backend: {type, connector: {type, bucket, prefix, region}}.
  Status CollectStorageBackend(const YAML::Node& node) {
    if (!node.IsMap()) return Status::OK();
    const YAML::Node connector = node["connector"];
    if (!connector || !connector.IsMap()) return Status::OK();
    for (const auto& item : connector) {
      std::string name = item.first.Scalar();
      std::string display = "storage_backend.connector." + name;
      if (name == "bucket" || name == "region") {
        KVFS_RETURN_IF_ERROR(Add(kLmcacheKey, name, item.second, display));
      } else if (name == "prefix") {
        KVFS_RETURN_IF_ERROR(Add(kLmcacheKey, "key_prefix", item.second, display));
      } else if (name != "type") {
        WarnUnknown(display);
      }
    }
    return Status::OK();
  }

  Status Add(int priority, const std::string& key_name, const YAML::Node& value,
             const std::string& display) {
    Entry e{priority, FindConfigKey(key_name), {}, display};
    std::string reason = ToRaw(value, &e.value);
    if (!reason.empty()) return Error(display, reason);
    if (e.value.is_list && !e.key->is_list) return Error(display, "expected a single value");
    entries_.push_back(std::move(e));
    return Status::OK();
  }

  // A value in seconds (LMCache's blocking_timeout_secs, which may have a fraction) for a kvfs key
  // kept in whole seconds: rounded up, so a limit never becomes shorter.
  Status AddSeconds(const std::string& key_name, const YAML::Node& value,
                    const std::string& display) {
    RawValue raw;
    std::string reason = ToRaw(value, &raw);
    auto ms = reason.empty() && !raw.is_list ? ParseDurationMs(raw.scalar, 1000) : std::nullopt;
    if (!ms || *ms <= 0) return Error(display, "'" + raw.scalar + "' is not a number of seconds");
    raw.scalar = std::to_string((*ms + 999) / 1000);
    entries_.push_back(Entry{kLmcacheKey, FindConfigKey(key_name), raw, display});
    return Status::OK();
  }

  // LMCache's save_unfull_chunk: false means every chunk it writes is full, so the whole-chunk
  // size can be learnt from the store (learn_chunk_sizes); true (its default) saves a shorter
  // last chunk of a prompt, which learning would reject.
  Status AddSaveUnfullChunk(const YAML::Node& value, const std::string& display) {
    RawValue raw;
    std::string reason = ToRaw(value, &raw);
    std::optional<bool> save =
        reason.empty() && !raw.is_list ? ParseBool(raw.scalar) : std::nullopt;
    if (!save) return Error(display, "'" + raw.scalar + "' is not true or false");
    raw.scalar = *save ? "false" : "true";
    entries_.push_back(Entry{kLmcacheKey, FindConfigKey("learn_chunk_sizes"), raw, display});
    return Status::OK();
  }

  // LMCache bounds requests in flight by min(s3_max_io_concurrency, s3_max_inflight_reqs) in its
  // newer connector, by s3_num_io_threads in the older one.
  Status AddInflight() {
    int n = 0;
    std::string display;
    for (const char* name : {"s3_max_io_concurrency", "s3_max_inflight_reqs"}) {
      auto it = inflight_.find(name);
      if (it != inflight_.end() && (n == 0 || it->second < n)) {
        n = it->second;
        display = std::string("extra_config.") + name;
      }
    }
    if (n == 0 && inflight_.count("s3_num_io_threads") != 0) {
      n = inflight_["s3_num_io_threads"];
      display = "extra_config.s3_num_io_threads";
    }
    if (n == 0) return Status::OK();
    RawValue raw;
    raw.scalar = std::to_string(n);
    entries_.push_back(Entry{kLmcacheKey, FindConfigKey("max_inflight"), raw, display});
    return Status::OK();
  }

  std::string source_;
  std::vector<Entry> entries_;
  std::vector<std::string> secrets_;
  std::map<std::string, int> inflight_;
  std::string plugin_;  // the remote storage plugin whose keys are used
};

// ApplyConfigYaml, also returning the secret keys the text set.
Status ApplyYaml(const std::string& yaml_text, const std::string& source_name, KvfsConfig* config,
                 std::vector<std::string>* secrets) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source_name + ": invalid YAML at line " +
                                   std::to_string(e.mark.line + 1) + ", column " +
                                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (root.IsNull()) return Status::OK();  // an empty file
  if (!root.IsMap()) {
    return Status::InvalidArgument(source_name + ": expected a mapping of keys at the top level");
  }
  try {
    FileParser parser(source_name);
    KVFS_RETURN_IF_ERROR(parser.Collect(root));
    KvfsConfig updated = *config;  // all or nothing
    KVFS_RETURN_IF_ERROR(parser.Apply(&updated));
    *config = std::move(updated);
    *secrets = parser.secrets();
    return Status::OK();
  } catch (const YAML::Exception& e) {
    // E.g. a mapping used as a key; yaml-cpp reports it only when the node is read.
    return Status::InvalidArgument(source_name + ": unusable YAML: " + e.msg);
  }
}

}  // namespace

Status ApplyConfigYaml(const std::string& yaml_text, const std::string& source_name,
                       KvfsConfig* config) {
  std::vector<std::string> secrets;
  return ApplyYaml(yaml_text, source_name, config, &secrets);
}

Status ApplyConfigFile(const std::string& path, KvfsConfig* config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::FromErrno(errno, path + ": cannot read config file");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::FromErrno(errno, path + ": cannot read config file");
  std::vector<std::string> secrets;
  KVFS_RETURN_IF_ERROR(ApplyYaml(text.str(), path, config, &secrets));
  config->config_files.push_back(path);
  struct stat st;
  if (!secrets.empty() && stat(path.c_str(), &st) == 0) {
    std::string warning = ReadableSecretFileWarning(path, st.st_mode, secrets);
    if (!warning.empty()) config->warnings.push_back(std::move(warning));
  }
  return Status::OK();
}

Result<KvfsConfig> ParseConfig(const std::string& yaml_text, const std::string& source_name) {
  KvfsConfig config;
  KVFS_RETURN_IF_ERROR(ApplyConfigYaml(yaml_text, source_name, &config));
  return config;
}

Result<KvfsConfig> LoadConfigFile(const std::string& path) {
  KvfsConfig config;
  KVFS_RETURN_IF_ERROR(ApplyConfigFile(path, &config));
  return config;
}

}  // namespace kvfs
