#include "fs/name_codec.h"

#include <cstdint>

#include "base/percent_encoding.h"

namespace kvfs {

namespace {

bool IsLiteral(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '@';
}

int HexValue(char c) {
  // Upper-case only: the canonical form, so each name has exactly one key.
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A stable 64-bit hash (FNV-1a, then the murmur3 finalizer to spread the high bits). Part of the
// key format: changing it would hide every file written with fan-out.
uint64_t StableHash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

NameCodec::NameCodec(std::string key_prefix, int fanout_hex_chars)
    : prefix_(std::move(key_prefix)), fanout_(fanout_hex_chars) {}

Status NameCodec::ValidateName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") {
    return Status::InvalidArgument("invalid file name '" + std::string(name) + "'");
  }
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("file name contains '/' or NUL");
  }
  if (name.size() > kMaxNameBytes) {
    return Status::NameTooLong(
        "file name longer than 255 bytes: " + std::string(name.substr(0, 64)) + "...");
  }
  return Status::OK();
}

std::string NameCodec::EncodeComponent(std::string_view name) {
  return PercentEncode(name, IsLiteral);
}

std::optional<std::string> NameCodec::DecodeComponent(std::string_view component) {
  std::string out;
  out.reserve(component.size());
  for (size_t i = 0; i < component.size(); ++i) {
    unsigned char c = component[i];
    if (IsLiteral(c)) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    if (c != '%' || i + 2 >= component.size()) return std::nullopt;
    int hi = HexValue(component[i + 1]);
    int lo = HexValue(component[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    unsigned char decoded = static_cast<unsigned char>(hi * 16 + lo);
    if (IsLiteral(decoded)) return std::nullopt;  // "%41" for 'A' is not canonical
    out.push_back(static_cast<char>(decoded));
    i += 2;
  }
  if (!ValidateName(out).ok()) return std::nullopt;
  return out;
}

std::string NameCodec::FanoutOf(std::string_view encoded) const {
  if (fanout_ == 0) return "";
  static const char kHex[] = "0123456789abcdef";
  uint64_t h = StableHash(encoded);
  std::string out;
  for (int i = 0; i < fanout_; ++i) out.push_back(kHex[(h >> (60 - 4 * i)) & 15]);
  return out;
}

Result<std::string> NameCodec::FileKey(const std::vector<std::string>& path) const {
  if (path.empty()) return Status::InvalidArgument("the root has no object key");
  if (fanout_ > 0 && path.size() > 1) {
    return Status::NotSupported("subdirectories are not supported with hashed fan-out");
  }
  std::string key = prefix_;
  for (size_t i = 0; i < path.size(); ++i) {
    KVFS_RETURN_IF_ERROR(ValidateName(path[i]));
    std::string enc = EncodeComponent(path[i]);
    if (fanout_ > 0) key += FanoutOf(enc) + "/";
    key += enc;
    if (i + 1 < path.size()) key += '/';
  }
  // A directory prefix adds a '/', so keep one byte of room for it.
  if (key.size() + 1 > kMaxKeyBytes) {
    return Status::NameTooLong("object key longer than 1024 bytes for '" + path.back() + "'");
  }
  return key;
}

Result<std::string> NameCodec::DirPrefix(const std::vector<std::string>& path) const {
  if (path.empty()) return prefix_;
  KVFS_ASSIGN_OR_RETURN(std::string key, FileKey(path));
  if (fanout_ > 0) return Status::NotSupported("directories are not supported with fan-out");
  return key + "/";
}

std::optional<std::string> NameCodec::NameOfKey(std::string_view dir_prefix,
                                                std::string_view key) const {
  if (key.size() <= dir_prefix.size() || key.substr(0, dir_prefix.size()) != dir_prefix) {
    return std::nullopt;
  }
  std::string_view rest = key.substr(dir_prefix.size());
  if (fanout_ > 0) {
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view fan = rest.substr(0, slash);
    rest = rest.substr(slash + 1);
    if (fan != FanoutOf(rest)) return std::nullopt;
  }
  if (rest.find('/') != std::string_view::npos) return std::nullopt;
  return DecodeComponent(rest);
}

std::optional<std::string> NameCodec::NameOfPrefix(std::string_view dir_prefix,
                                                   std::string_view common_prefix) const {
  if (fanout_ > 0 || common_prefix.empty() || common_prefix.back() != '/') return std::nullopt;
  return NameOfKey(dir_prefix, common_prefix.substr(0, common_prefix.size() - 1));
}

bool NameCodec::NamesFile(std::string_view key) const {
  if (!key.starts_with(prefix_)) return false;
  std::string_view rest = key.substr(prefix_.size());
  if (fanout_ > 0) return NameOfKey(prefix_, key).has_value();
  // Every component a legal, canonical name; a trailing '/' (a directory marker) is none.
  while (true) {
    const size_t slash = rest.find('/');
    if (!DecodeComponent(rest.substr(0, slash))) return false;
    if (slash == std::string_view::npos) return true;
    rest = rest.substr(slash + 1);
  }
}

}  // namespace kvfs
