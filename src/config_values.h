// Parsers for the value forms a kvfs setting can take: sizes with units ("64GiB"), booleans
// ("true", "False", "on"), bounded integers, fractions and durations ("500ms", "10s"). Shared by
// the YAML config, the -o mount options and the KVFS_* environment variables, so one spelling
// works everywhere. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvfs {

// A byte count: "4096", "8M", "8MiB", "8MB", "1.5GiB", "64 GiB". Every unit is a power of 1024
// (K, KB, KiB = 1024; M, MB, MiB = 1024^2; G, T likewise; B = 1), because chunk sizes must match
// byte for byte and "32MB" meaning 32,000,000 would silently reject every chunk. A fraction must
// give a whole number of bytes. nullopt on anything else, negative values or overflow.
std::optional<uint64_t> ParseSize(std::string_view text);

// "64GiB" when the value is an exact multiple of a unit, else the byte count.
std::string FormatSize(uint64_t bytes);

// true/false, yes/no, on/off, 1/0 (any case).
std::optional<bool> ParseBool(std::string_view text);

// A decimal integer in [min, max].
std::optional<int64_t> ParseInt(std::string_view text, int64_t min, int64_t max);

// A decimal number (e.g. "0.85").
std::optional<double> ParseDouble(std::string_view text);

// A duration in milliseconds: "250ms", "10s", "2m", "1h", or a bare number in `bare_unit_ms`
// (1 for *_ms keys, 1000 for *_secs keys). Fractions allowed if the result is whole ms.
std::optional<int64_t> ParseDurationMs(std::string_view text, int64_t bare_unit_ms);

// Splits a list given as one string ("8MiB,32MiB" or "8MiB:32MiB"), dropping empty items and
// surrounding blanks.
std::vector<std::string> SplitList(std::string_view text);

// Lower-cased copy, for case-insensitive enum values.
std::string ToLower(std::string_view text);

// `text` without leading and trailing blanks.
std::string_view Trim(std::string_view text);

// "" or "a/b/": no leading slash, exactly one trailing slash.
std::string NormalizeKeyPrefix(std::string_view prefix);

}  // namespace kvfs
