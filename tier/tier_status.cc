#include "tier/tier_status.h"

#include <charconv>
#include <sstream>

namespace kvfs {
namespace {

constexpr char kHeader[] = "kvfs-tier-status 1\n";

template <typename T>
bool ParseValue(const std::string& v, T* out) {
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  return ec == std::errc() && end == v.data() + v.size();
}
bool ParseValue(const std::string& v, std::string* out) {
  *out = v;
  return true;
}

}  // namespace

std::string FormatTierStatus(const TierStatus& s) {
  std::ostringstream o;
  o << kHeader;
#define KVFS_TIER_STATUS_FORMAT(type, name, meaning) o << #name " " << s.name << "\n";
  KVFS_TIER_STATUS_FIELDS(KVFS_TIER_STATUS_FORMAT)
#undef KVFS_TIER_STATUS_FORMAT
  return o.str();
}

Result<TierStatus> ParseTierStatus(const std::string& text) {
  if (!text.starts_with(kHeader)) {
    return Status::InvalidArgument("tier status: not a kvfs tier status object");
  }
  TierStatus s;
  std::istringstream in(text.substr(sizeof kHeader - 1));
  std::string line;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string name = line.substr(0, sp), v = line.substr(sp + 1);
    bool ok = true;
#define KVFS_TIER_STATUS_PARSE(type, field, meaning) \
  if (name == #field) ok = ParseValue(v, &s.field);
    KVFS_TIER_STATUS_FIELDS(KVFS_TIER_STATUS_PARSE)
#undef KVFS_TIER_STATUS_PARSE
    if (!ok) return Status::InvalidArgument("tier status: bad value in line '" + line + "'");
  }
  return s;
}

}  // namespace kvfs
