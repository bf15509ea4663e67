// Percent-encoding ("%XX", upper-case hex) of byte strings, shared by the three places that turn
// arbitrary bytes into restricted alphabets: SigV4 URIs, object keys from file names, and file
// names of the directory store. Each passes its own set of bytes kept literal. Pure functions;
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvfs {

// Appends `c` as "%XX" to *out.
void AppendPercentEscape(unsigned char c, std::string* out);

// Returns `s` with every byte for which keep(byte) is false written as "%XX".
template <typename KeepFn>
std::string PercentEncode(std::string_view s, KeepFn keep) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (keep(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      AppendPercentEscape(c, &out);
    }
  }
  return out;
}

// The value of a hex digit, or -1.
int HexDigitValue(char c);

// The inverse of PercentEncode with the same `keep`: nullopt for a byte neither kept nor escaped,
// a truncated or non-hex escape, or an escape of a kept byte (not canonical: one string, one
// encoding).
template <typename KeepFn>
std::optional<std::string> PercentDecode(std::string_view s, KeepFn keep) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c != '%') {
      if (!keep(c)) return std::nullopt;
      out.push_back(static_cast<char>(c));
      continue;
    }
    if (s.size() - i < 3) return std::nullopt;
    const int hi = HexDigitValue(s[i + 1]);
    const int lo = HexDigitValue(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const auto decoded = static_cast<unsigned char>(hi * 16 + lo);
    if (keep(decoded)) return std::nullopt;
    out.push_back(static_cast<char>(decoded));
    i += 2;
  }
  return out;
}

}  // namespace kvfs
