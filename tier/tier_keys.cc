#include "tier/tier_keys.h"

#include <charconv>
#include <cstdio>

namespace kvfs {

std::string TierKeys::LeaseKey(uint64_t epoch) const {
  char digits[32];
  // Fixed width: the listing's byte order is the epochs' order.
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(epoch));
  return lease_prefix() + digits;
}

std::optional<uint64_t> TierKeys::EpochOf(std::string_view key) const {
  const std::string prefix = lease_prefix();
  if (!key.starts_with(prefix)) return std::nullopt;
  std::string_view digits = key.substr(prefix.size());
  if (digits.size() != 20) return std::nullopt;
  uint64_t epoch = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), epoch);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return epoch;
}

std::string TierKeys::UsesKey(std::string_view node, uint64_t seq) const {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(seq));
  return uses_prefix() + std::string(node) + "-" + digits;
}

std::string TierKeys::RemovedKey(int64_t time_sec, std::string_view node, uint64_t seq) const {
  char digits[32];
  // Time first: a node reads the batches after the last one it saw (StartAfter-like, by order).
  std::snprintf(digits, sizeof digits, "%012lld", static_cast<long long>(time_sec));
  return removed_prefix() + digits + "-" + std::string(node) + "-" + std::to_string(seq);
}

}  // namespace kvfs
