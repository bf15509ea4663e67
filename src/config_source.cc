// SOURCE URLs: where the chunks live. Two spellings of an S3 location exist in the wild:
//  - kvfs / mountpoint-s3 style: s3://bucket[/prefix] (the bucket may contain dots), with the
//    endpoint set separately, or s3://host:port/bucket[/prefix] (path style, e.g. a local RGW);
//  - LMCache's remote_url: s3://bucket.host (virtual-hosted: the first label is the bucket, the
//    rest is the endpoint host), e.g.
//    s3://b--use1-az4--x-s3.s3express-use1-az4.us-east-1.amazonaws.com or s3://test-127.cwlota.com.
#include <string>
#include <string_view>
#include <vector>

#include "src/config.h"
#include "src/config_keys.h"
#include "src/config_values.h"

namespace kvfs {
namespace {

constexpr std::string_view kS3Scheme = "s3://";
constexpr std::string_view kFileScheme = "file://";
constexpr std::string_view kHfBuckets = "hf://buckets/";
// Hugging Face Storage Buckets' S3-compatible gateway: one endpoint per namespace (user or org),
// path-style, region us-east-1.
constexpr std::string_view kHfGateway = "https://s3.hf.co/";

// A URL for messages: anything with '@' could carry user:password, so it is not echoed.
std::string Shown(const std::string& url) {
  return url.find('@') == std::string::npos ? "'" + url + "'" : "the URL";
}

std::vector<std::string_view> SplitDots(std::string_view host) {
  std::vector<std::string_view> labels;
  size_t start = 0;
  while (true) {
    size_t dot = host.find('.', start);
    labels.push_back(host.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return labels;
}

// s3.<region>.amazonaws.com, s3express-<az>.<region>.amazonaws.com, s3-<region>.amazonaws.com.
std::string RegionFromAwsHost(std::string_view host) {
  std::vector<std::string_view> labels = SplitDots(host);
  size_t n = labels.size();
  if (n < 3 || labels[n - 2] != "amazonaws" || labels[n - 1] != "com") return "";
  if (n >= 4) return std::string(labels[n - 3]);
  if (labels[0].substr(0, 3) == "s3-") return std::string(labels[0].substr(3));
  return "";
}

}  // namespace

Status ApplySourceUrl(const std::string& url, bool lmcache_form, KvfsConfig* config) {
  std::string_view rest(url);
  if (rest.substr(0, kFileScheme.size()) == kFileScheme) {
    rest.remove_prefix(kFileScheme.size());
    if (rest.empty() || rest.front() != '/') {
      return Status::InvalidArgument(Shown(url) +
                                     " is not an absolute directory URL (use file:///abs/dir)");
    }
    std::string dir(rest);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    config->source_kind = SourceKind::kDir;
    config->source = url;
    config->dir_root = dir;
    config->key_prefix.clear();
    return Status::OK();
  }
  if (rest.substr(0, 5) == "hf://") {
    // hf://buckets/<namespace>/<bucket>[/<prefix>] (LMCache's bucket_handle).
    const std::string form =
        " is not a Hugging Face bucket handle "
        "(hf://buckets/<namespace>/<bucket>[/<prefix>])";
    if (rest.substr(0, kHfBuckets.size()) != kHfBuckets) {
      return Status::InvalidArgument(Shown(url) + form);
    }
    rest.remove_prefix(kHfBuckets.size());
    const size_t a = rest.find('/');
    const std::string_view ns = rest.substr(0, a);
    std::string_view after = a == std::string_view::npos ? "" : rest.substr(a + 1);
    const size_t b = after.find('/');
    const std::string_view bucket = after.substr(0, b);
    const std::string_view prefix = b == std::string_view::npos ? "" : after.substr(b + 1);
    if (ns.empty() || bucket.empty() || ns.find_first_of("@:?#") != std::string_view::npos) {
      return Status::InvalidArgument(Shown(url) + form);
    }
    S3Options& s3 = config->s3;
    s3.endpoint = std::string(kHfGateway) + std::string(ns);
    s3.path_style = true;
    config->addressing_set = true;
    s3.region = "us-east-1";
    config->region_set = true;
    s3.bucket = std::string(bucket);
    config->source_kind = SourceKind::kS3;
    config->source = url;
    config->dir_root.clear();
    config->key_prefix = NormalizeKeyPrefix(prefix);
    return Status::OK();
  }
  if (rest.substr(0, kS3Scheme.size()) != kS3Scheme) {
    return Status::InvalidArgument(Shown(url) +
                                   " is not a supported source (use s3://bucket[/prefix], "
                                   "hf://buckets/<namespace>/<bucket>[/<prefix>] or "
                                   "file:///absolute/dir)");
  }
  rest.remove_prefix(kS3Scheme.size());
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument(
        "credentials inside the source URL are not supported; use the config file or the "
        "environment");
  }
  if (authority.empty()) return Status::InvalidArgument(Shown(url) + " names no bucket");

  S3Options& s3 = config->s3;
  std::string bucket;
  if (authority.find(':') != std::string_view::npos) {
    // host:port/bucket/prefix - bucket names never contain ':'.
    size_t end = path.find('/');
    bucket = std::string(path.substr(0, end));
    path = end == std::string_view::npos ? "" : path.substr(end + 1);
    if (bucket.empty()) {
      return Status::InvalidArgument(Shown(url) + " names no bucket after the host:port");
    }
    s3.endpoint = std::string(authority);
    s3.path_style = true;
    config->addressing_set = true;
  } else if (lmcache_form && authority.find('.') != std::string_view::npos) {
    size_t dot = authority.find('.');
    bucket = std::string(authority.substr(0, dot));
    std::string_view host = authority.substr(dot + 1);
    if (bucket.empty() || host.empty()) {
      return Status::InvalidArgument(Shown(url) + " is not of the form s3://bucket.host");
    }
    s3.endpoint = std::string(host);
    s3.path_style = false;
    config->addressing_set = true;
    if (host.substr(0, 10) == "s3express-") s3.s3express = true;
    std::string region = RegionFromAwsHost(host);
    if (!region.empty()) {
      s3.region = region;
      config->region_set = true;
    }
  } else {
    bucket = std::string(authority);
  }
  s3.bucket = bucket;
  config->source_kind = SourceKind::kS3;
  config->source = url;
  config->dir_root.clear();
  config->key_prefix = NormalizeKeyPrefix(path);
  return Status::OK();
}

}  // namespace kvfs
