// Cross-key validation and the redacted dump of the effective configuration.
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "objstore/s3/credentials.h"
#include "objstore/s3/s3_url.h"
#include "src/config.h"
#include "src/config_keys.h"
#include "src/config_values.h"
#include "src/config_warnings.h"
#include "src/s3_resolve.h"

namespace kvfs {
namespace {

Status Invalid(const std::string& key, const std::string& reason) {
  return Status::InvalidArgument("configuration: key '" + key + "': " + reason);
}

}  // namespace

Status ValidateConfig(const KvfsConfig& c) {
  for (uint64_t size : c.fs.chunk_sizes) {
    if (size > c.fs.max_chunk_bytes) {
      return Invalid("chunk_sizes", FormatSize(size) + " is larger than max_chunk_bytes (" +
                                        FormatSize(c.fs.max_chunk_bytes) + ")");
    }
  }
  if (c.cache.evict_ratio > c.cache.high_watermark) {
    return Invalid("cache_evict_ratio", "must not exceed cache_high_watermark");
  }
  if (c.s3.backoff_base_ms > c.s3.backoff_max_ms) {
    return Invalid("backoff_base_ms", "must not exceed backoff_max_ms");
  }
  if (c.source_kind == SourceKind::kS3 && c.s3.bucket.empty()) {
    return Invalid("bucket", "an s3:// source needs a bucket");
  }
  if (c.s3.region.empty()) return Invalid("region", "must not be empty");
  for (const std::string& pattern : c.fs.temp_patterns) {
    if (pattern.find('/') != std::string::npos) {
      return Invalid("temp_patterns", "'" + pattern + "' must match a file name, not a path");
    }
  }
  return Status::OK();
}

std::string DumpConfig(const KvfsConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  std::string region_comment;  // a region not given: shown, but as a comment
  for (const ConfigKey& key : ConfigKeys()) {
    if (!key.get) continue;
    RawValue v = key.get(config);
    // A region written out would be a region given: the bucket's own would no longer be asked
    // for when the dump is loaded again.
    if (key.name == "region" && !config.region_set) {
      region_comment = "# region: " + v.scalar + " (not given: the default)\n";
      continue;
    }
    if (key.name == "endpoint") v.scalar = s3::RedactEndpoint(v.scalar);  // a password in it
    out << YAML::Key << key.name << YAML::Value;
    if (v.is_list) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const std::string& item : v.items) out << item;
      out << YAML::EndSeq;
    } else {
      out << v.scalar;
    }
  }
  out << YAML::EndMap;
  std::string text;
  for (const std::string& file : config.config_files) text += "# read from " + file + "\n";
  if (config.source.rfind("file://", 0) != 0) {
    text += "# credentials from " + s3::DescribeCredentialSource(config.s3) + "\n";
    // What the keys below resolve to (AWS defaults, directory buckets), as the mount uses them.
    S3Options s3 = EffectiveS3Options(config);
    std::string where =
        s3.endpoint.empty() ? "AWS's regional endpoint" : s3::RedactEndpoint(s3.endpoint);
    if (config.s3.endpoint.empty() && !s3::EndpointFromEnvironment().empty()) {
      const char* s3_only = getenv("AWS_ENDPOINT_URL_S3");
      where += s3_only != nullptr && *s3_only != '\0' ? " (from AWS_ENDPOINT_URL_S3)"
                                                      : " (from AWS_ENDPOINT_URL)";
    }
    text += "# store: " + where + ", region " + s3.region +
            (s3.discover_region ? " (or the bucket's own)" : "") +
            (s3.path_style ? ", path-style" : ", virtual-hosted") +
            (s3.s3express ? ", S3 Express sessions" : "") + "\n";
  }
  for (const std::string& w : SecurityWarnings(config)) text += "# warning: " + w + "\n";
  text += region_comment;
  return text + out.c_str() + "\n";
}

}  // namespace kvfs
