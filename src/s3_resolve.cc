#include "src/s3_resolve.h"

#include <string>
#include <string_view>
#include <utility>

#include "objstore/s3/credentials.h"

namespace kvfs {
namespace {

constexpr std::string_view kExpressSuffix = "--x-s3";

// "name--use1-az4--x-s3" -> "use1-az4"; "" if not a directory bucket name.
std::string ExpressZone(const std::string& bucket) {
  if (bucket.size() <= kExpressSuffix.size() ||
      bucket.compare(bucket.size() - kExpressSuffix.size(), kExpressSuffix.size(),
                     kExpressSuffix) != 0) {
    return "";
  }
  std::string head = bucket.substr(0, bucket.size() - kExpressSuffix.size());
  size_t sep = head.rfind("--");
  if (sep == std::string::npos || sep + 2 >= head.size()) return "";
  return head.substr(sep + 2);
}

// The Region an Availability Zone ID lies in: "use1-az4" -> "us-east-1", "apne1-az1" ->
// "ap-northeast-1", "usgw1-az1" -> "us-gov-west-1". AZ IDs are the region's code (area, then
// direction letters, then its number) plus "-az<n>", the same in every account, unlike AZ names.
// "" when the ID has another form.
std::string RegionOfZoneId(const std::string& zone) {
  size_t dash = zone.find("-az");
  if (dash == std::string::npos || dash < 4) return "";
  std::string code = zone.substr(0, dash);
  size_t digits = code.find_first_of("0123456789");
  if (digits == std::string::npos || digits < 3 ||
      code.find_first_not_of("0123456789", digits) != std::string::npos) {
    return "";
  }
  std::string area = code.substr(0, 2);
  std::string dir = code.substr(2, digits - 2);
  if (area == "us" && dir.size() > 1 && dir[0] == 'g') {  // GovCloud: usgw1, usge1
    area = "us-gov";
    dir = dir.substr(1);
  }
  static const std::pair<const char*, const char*> kDirections[] = {
      {"e", "east"},       {"w", "west"},       {"n", "north"},
      {"s", "south"},      {"c", "central"},    {"ne", "northeast"},
      {"nw", "northwest"}, {"se", "southeast"}, {"sw", "southwest"},
  };
  for (const auto& [short_name, long_name] : kDirections) {
    if (dir == short_name) return area + "-" + long_name + "-" + code.substr(digits);
  }
  return "";
}

// AWS's own endpoints: empty (the regional default) or a host under amazonaws.com.
bool IsAwsEndpoint(const std::string& endpoint) {
  if (endpoint.empty()) return true;
  std::string host =
      endpoint.substr(endpoint.find("://") == std::string::npos ? 0 : endpoint.find("://") + 3);
  host = host.substr(0, host.find_first_of(":/"));
  const std::string aws = ".amazonaws.com";
  return host.size() > aws.size() && host.compare(host.size() - aws.size(), aws.size(), aws) == 0;
}

}  // namespace

S3Options EffectiveS3Options(const KvfsConfig& config) {
  S3Options s3 = config.s3;
  // The environment's endpoint (AWS_ENDPOINT_URL, as MinIO and Ceph users set it) is decided on
  // here, before anything below asks whether the endpoint is AWS's: left empty, it would be taken
  // for AWS's regional endpoint and get virtual-hosted addressing ("b.127.0.0.1").
  if (s3.endpoint.empty()) s3.endpoint = s3::EndpointFromEnvironment();
  // AWS prefers virtual-hosted addressing (path style is deprecated there); other stores (RGW,
  // MinIO, IPs) get path style. Bucket names with dots stay path-style: their virtual host name
  // would not match AWS's TLS certificate.
  if (!config.addressing_set && IsAwsEndpoint(s3.endpoint) &&
      s3.bucket.find('.') == std::string::npos) {
    s3.path_style = false;
  }
  // Only AWS says where a bucket lives; elsewhere the default region is what servers expect.
  std::string zone = ExpressZone(s3.bucket);
  // A directory bucket's zonal endpoint is built from the region: when none is given, the one its
  // zone ID names (asking the bucket would need the endpoint first).
  s3.discover_region = !config.region_set && IsAwsEndpoint(s3.endpoint) && zone.empty();
  if (!zone.empty()) {
    s3.s3express = true;
    if (!config.region_set) {
      if (std::string region = RegionOfZoneId(zone); !region.empty()) s3.region = region;
    }
    if (s3.endpoint.empty()) {
      s3.endpoint = std::string(s3.disable_tls ? "http://" : "https://") + "s3express-" + zone +
                    "." + s3.region + ".amazonaws.com";
      s3.path_style = false;  // directory buckets are only reachable virtual-hosted
    }
  }
  return s3;
}

}  // namespace kvfs
