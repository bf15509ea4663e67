#include "objstore/dir/dir_key_codec.h"

#include "base/percent_encoding.h"

namespace kvfs::dirstore {
namespace {

bool IsLiteral(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~' || c == '@';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lower-case hex is not canonical: the encoder never writes it
}

}  // namespace

Result<std::vector<std::string>> EncodeKey(std::string_view key, KeyLayout layout) {
  if (key.empty()) return Status::InvalidArgument("empty object key");
  if (key.size() > kMaxKeyBytes) {
    return Status::NameTooLong("object key of " + std::to_string(key.size()) +
                               " bytes is longer than " + std::to_string(kMaxKeyBytes));
  }
  std::vector<std::string> out(1);
  for (unsigned char c : key) {
    if (c == '/' && layout == KeyLayout::kTree) {
      out.back().push_back(kSegmentMarker);
      out.emplace_back();
      continue;
    }
    // Escape '.' at the start of a component so none is ".", ".." or hidden.
    bool at_start = out.back().empty();
    bool literal = IsLiteral(c) && !(at_start && c == '.');
    size_t len = literal ? 1 : 3;
    if (out.back().size() + len > kMaxComponent) {
      out.back().push_back(kDirMarker);
      out.emplace_back();
      literal = IsLiteral(c) && c != '.';
    }
    if (literal) {
      out.back().push_back(static_cast<char>(c));
    } else {
      AppendPercentEscape(c, &out.back());
    }
  }
  if (out.back().empty()) out.back() = kEmptyLastSegment;  // the key ends in '/'
  return out;
}

std::optional<std::string> DecodeComponent(std::string_view component) {
  std::string out;
  out.reserve(component.size());
  if (!DecodeComponentTo(component, &out)) return std::nullopt;
  return out;
}

bool DecodeComponentTo(std::string_view component, std::string* out) {
  for (size_t i = 0; i < component.size(); ++i) {
    unsigned char c = component[i];
    if (c == '%') {
      if (i + 2 >= component.size()) return false;
      int hi = HexValue(component[i + 1]);
      int lo = HexValue(component[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (IsLiteral(c)) {
      out->push_back(static_cast<char>(c));
    } else {
      return false;
    }
  }
  return true;
}

std::string JoinPath(const std::vector<std::string>& components) {
  std::string out;
  for (const auto& c : components) {
    if (!out.empty()) out.push_back('/');
    out += c;
  }
  return out;
}

}  // namespace kvfs::dirstore
