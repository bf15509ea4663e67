// TierKeys: where the bounded tier keeps its own objects, beside the chunks.
//
// Everything lives under key_prefix + "~kvfs-tier/". '~' is a byte NameCodec always encodes
// ("%7E"), so no file name maps to this prefix: it never appears in the mount, in a listing or a
// lookup, and no engine can write into it.
//   lease/<epoch, 20 digits>   the collector's lease; the highest epoch is the current one
//   uses/<node>-<seq>          one node's record of the chunks it used in one interval
//   removed/<time>-<node>-<seq> the chunks one collector pass removed (for other nodes' caches)
//   status                     the tier as the last pass saw it (bytes, chunks, holder, time)
//   state                      last uses older than the records, kept across collectors
//
// Thread-safety: immutable after construction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvfs {

class TierKeys {
 public:
  explicit TierKeys(std::string key_prefix) : root_(std::move(key_prefix) + "~kvfs-tier/") {}

  const std::string& root() const { return root_; }
  std::string lease_prefix() const { return root_ + "lease/"; }
  std::string LeaseKey(uint64_t epoch) const;
  // The epoch of a key under lease_prefix(); nullopt for anything else.
  std::optional<uint64_t> EpochOf(std::string_view key) const;
  std::string uses_prefix() const { return root_ + "uses/"; }
  std::string UsesKey(std::string_view node, uint64_t seq) const;
  std::string removed_prefix() const { return root_ + "removed/"; }
  std::string RemovedKey(int64_t time_sec, std::string_view node, uint64_t seq) const;
  std::string status_key() const { return root_ + "status"; }
  std::string state_key() const { return root_ + "state"; }
  bool IsTierKey(std::string_view key) const { return key.starts_with(root_); }

 private:
  std::string root_;
};

}  // namespace kvfs
