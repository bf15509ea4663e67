// Percent-encoding ("%XX", upper-case hex) of byte strings, shared by the three places that turn
// arbitrary bytes into restricted alphabets: SigV4 URIs, object keys from file names, and file
// names of the directory store. Each passes its own set of bytes kept literal. Pure functions;
// thread-safe.
#pragma once

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

}  // namespace kvfs
