#include "base/user_xattrs.h"

#include "base/percent_encoding.h"

namespace kvfs {
namespace {

constexpr std::string_view kUserPrefix = "user.";
constexpr std::string_view kReservedPrefix = "user.kvfs.";

// RFC 3986's unreserved bytes: literal in S3 metadata and never one of the separators.
bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

size_t EncodedSize(const std::map<std::string, std::string>& attrs) {
  size_t n = 0;
  for (const auto& [name, value] : attrs) {
    n += PercentEncode(name, Unreserved).size() + 1 + PercentEncode(value, Unreserved).size() + 1;
  }
  return n == 0 ? 0 : n - 1;
}

}  // namespace

bool UserXattrs::Accepts(std::string_view name) {
  return name.size() > kUserPrefix.size() && name.starts_with(kUserPrefix) &&
         !name.starts_with(kReservedPrefix);
}

Status UserXattrs::Set(const std::string& name, std::string value, SetMode mode) {
  auto it = attrs_.find(name);
  if (mode == SetMode::kCreate && it != attrs_.end()) {
    return Status::AlreadyExists("extended attribute " + name + " exists (XATTR_CREATE)");
  }
  if (mode == SetMode::kReplace && it == attrs_.end()) {
    return Status::NoData("no extended attribute " + name + " to replace (XATTR_REPLACE)");
  }
  std::map<std::string, std::string> next = attrs_;
  next[name] = std::move(value);
  const size_t size = EncodedSize(next);
  if (size > kMaxEncodedBytes) {
    return Status::NoSpace("extended attribute " + name + ": a chunk's user attributes take at " +
                           "most " + std::to_string(kMaxEncodedBytes) +
                           " bytes encoded (S3's 2 KiB of object metadata); these would take " +
                           std::to_string(size));
  }
  attrs_ = std::move(next);
  return Status::OK();
}

Result<std::string> UserXattrs::Get(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it == attrs_.end()) return Status::NoData("no extended attribute " + name);
  return it->second;
}

Status UserXattrs::Remove(const std::string& name) {
  if (attrs_.erase(name) == 0) return Status::NoData("no extended attribute " + name);
  return Status::OK();
}

std::string UserXattrs::Names() const {
  std::string out;
  for (const auto& [name, value] : attrs_) {
    out += name;
    out.push_back('\0');
  }
  return out;
}

std::string UserXattrs::Encode() const {
  std::string out;
  for (const auto& [name, value] : attrs_) {
    if (!out.empty()) out.push_back('&');
    out += PercentEncode(name, Unreserved);
    out.push_back('=');
    out += PercentEncode(value, Unreserved);
  }
  return out;
}

Result<UserXattrs> UserXattrs::Decode(std::string_view encoded) {
  const std::string_view whole = encoded;
  UserXattrs out;
  auto bad = [&](const char* why) {
    return Status::InvalidArgument(std::string("extended attributes metadata: ") + why + " in '" +
                                   std::string(encoded.substr(0, 64)) + "'");
  };
  if (encoded.size() > kMaxEncodedBytes) return bad("longer than kvfs writes");
  while (!encoded.empty()) {
    const size_t amp = encoded.find('&');
    const std::string_view pair = encoded.substr(0, amp);
    encoded = amp == std::string_view::npos ? std::string_view() : encoded.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return bad("a pair without '='");
    auto name = PercentDecode(pair.substr(0, eq), Unreserved);
    auto value = PercentDecode(pair.substr(eq + 1), Unreserved);
    if (!name || !value) return bad("a malformed escape");
    if (!Accepts(*name)) return bad("a name outside user.*");
    if (!out.attrs_.emplace(std::move(*name), std::move(*value)).second) return bad("a name twice");
  }
  // One encoding per set of attributes (names in order): what does not encode back the same was
  // not written by kvfs.
  if (out.Encode() != whole) return bad("names out of order");
  return out;
}

}  // namespace kvfs
