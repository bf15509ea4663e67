#include "src/config_values.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace kvfs {
namespace {

// A non-negative decimal "123" or "1.25" split into an exact mantissa and a power-of-ten divisor,
// so "1.5GiB" is computed without floating-point rounding. Returns the unparsed rest.
struct Decimal {
  unsigned __int128 mantissa = 0;
  unsigned __int128 divisor = 1;
};

std::optional<Decimal> ParseDecimal(std::string_view& text) {
  Decimal d;
  size_t i = 0;
  bool digits = false;
  bool point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    digits = true;
    d.mantissa = d.mantissa * 10 + static_cast<unsigned>(c - '0');
    if (point) d.divisor *= 10;
    // Bounded so the digits cannot wrap; Scale checks the multiplication by the unit itself.
    if (d.mantissa > static_cast<unsigned __int128>(1e27) || d.divisor > 1e18) return std::nullopt;
  }
  if (!digits) return std::nullopt;
  text.remove_prefix(i);
  return d;
}

// Multiplies, then requires an exact whole result that fits in `max`. A product past 128 bits is
// refused before it is formed: 10^27 PiB would wrap (2^78 PiB is 0 mod 2^128, and was taken as a
// cache_size of 0).
std::optional<uint64_t> Scale(const Decimal& d, uint64_t unit, uint64_t max) {
  const unsigned __int128 all = ~static_cast<unsigned __int128>(0);
  if (unit != 0 && d.mantissa > all / unit) return std::nullopt;
  unsigned __int128 product = d.mantissa * unit;
  if (product % d.divisor != 0) return std::nullopt;
  unsigned __int128 value = product / d.divisor;
  if (value > max) return std::nullopt;
  return static_cast<uint64_t>(value);
}

}  // namespace

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<uint64_t> ParseSize(std::string_view text) {
  text = Trim(text);
  auto number = ParseDecimal(text);
  if (!number) return std::nullopt;
  std::string unit = ToLower(Trim(text));
  uint64_t scale;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else {
    static constexpr const char* kPrefixes = "kmgtp";
    const char* p = unit.size() <= 3 ? std::strchr(kPrefixes, unit[0]) : nullptr;
    std::string_view rest = std::string_view(unit).substr(1);
    if (p == nullptr || *p == '\0' || !(rest.empty() || rest == "b" || rest == "ib")) {
      return std::nullopt;
    }
    scale = uint64_t{1} << (10 * (p - kPrefixes + 1));
  }
  return Scale(*number, scale, UINT64_MAX);
}

std::string FormatSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes == 0) return "0";
  int unit = -1;
  uint64_t value = bytes;
  while (unit < 4 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  if (unit < 0) return std::to_string(bytes);
  return std::to_string(value) + kUnits[unit];
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string v = ToLower(Trim(text));
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < min || value > max) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  std::string s(Trim(text));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || value != value) return std::nullopt;  // rejects NaN
  return value;
}

std::optional<int64_t> ParseDurationMs(std::string_view text, int64_t bare_unit_ms) {
  text = Trim(text);
  auto number = ParseDecimal(text);
  if (!number) return std::nullopt;
  std::string unit = ToLower(Trim(text));
  uint64_t scale;
  if (unit.empty()) {
    scale = static_cast<uint64_t>(bare_unit_ms);
  } else if (unit == "ms") {
    scale = 1;
  } else if (unit == "s" || unit == "sec" || unit == "secs") {
    scale = 1000;
  } else if (unit == "m" || unit == "min") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else if (unit == "d" || unit == "day" || unit == "days") {
    scale = 86'400'000;
  } else {
    return std::nullopt;
  }
  auto ms = Scale(*number, scale, INT64_MAX);
  if (!ms) return std::nullopt;
  return static_cast<int64_t>(*ms);
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(",:", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = Trim(text.substr(start, end - start));
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

std::string NormalizeKeyPrefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.front() == '/') prefix.remove_prefix(1);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return prefix.empty() ? std::string() : std::string(prefix) + "/";
}

}  // namespace kvfs
