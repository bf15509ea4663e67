// LMCache's configuration vocabulary: the keys kvfs ignores and the aliases of kvfs keys.
#include "src/config_lmcache.h"

#include <set>
#include <string>

namespace kvfs {
namespace {

// LMCache keys with no meaning for kvfs: accepted silently so LMCache's files load unchanged.
const std::set<std::string, std::less<>>& IgnoredLmcacheKeys() {
  static const std::set<std::string, std::less<>> keys = {"chunk_size",
                                                          "local_cpu",
                                                          "max_local_cpu_size",
                                                          "local_disk",
                                                          "max_local_disk_size",
                                                          "remote_serde",
                                                          "enable_async_loading",
                                                          "local_device",
                                                          "save_decode_cache",
                                                          "use_layerwise",
                                                          "enable_blending",
                                                          "blend_recompute_ratios",
                                                          "blend_thresholds",
                                                          "blend_check_layers",
                                                          "blend_min_tokens",
                                                          "blend_special_str",
                                                          "enable_p2p",
                                                          "lookup_url",
                                                          "distributed_url",
                                                          "enable_pd",
                                                          "pd_role",
                                                          "pd_buffer_size",
                                                          "pd_buffer_device",
                                                          "pd_peer_host",
                                                          "pd_peer_init_port",
                                                          "pd_peer_alloc_port",
                                                          "pd_proxy_host",
                                                          "pd_proxy_port",
                                                          "transfer_channel",
                                                          "cache_policy",
                                                          "numa_mode",
                                                          "min_retrieve_tokens",
                                                          "lmcache_instance_id",
                                                          "enable_controller",
                                                          "controller_url",
                                                          "internal_api_server_enabled",
                                                          "internal_api_server_port_start",
                                                          "gds_path",
                                                          "cufile_buffer_size",
                                                          "priority_limit",
                                                          "py_enable_gc",
                                                          "remote_storage_plugins",
                                                          "cache_engine_type",
                                                          "lmcache_worker_port",
                                                          "extra_config_version"};
  return keys;
}

const std::set<std::string, std::less<>>& IgnoredExtraConfigKeys() {
  static const std::set<std::string, std::less<>> keys = {"save_chunk_meta", "s3_part_size"};
  return keys;
}

}  // namespace

bool IsIgnoredLmcacheKey(std::string_view key) { return IgnoredLmcacheKeys().count(key) != 0; }

bool IsIgnoredExtraConfigKey(std::string_view key) {
  return IgnoredExtraConfigKeys().count(key) != 0;
}

// extra_config keys that are kvfs keys under another name.
const char* ExtraConfigAlias(std::string_view key) {
  if (key == "s3_region") return "region";
  if (key == "s3_prefer_http2") return "prefer_http2";
  if (key == "s3_enable_s3express") return "s3express";
  if (key == "s3_file_prefix") return "key_prefix";
  if (key == "disable_tls") return "disable_tls";
  if (key == "aws_access_key_id") return "access_key_id";
  if (key == "aws_secret_access_key") return "secret_access_key";
  if (key == "aws_session_token") return "session_token";
  return nullptr;
}

}  // namespace kvfs
