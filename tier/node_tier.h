// NodeTier: the filesystem's side of the bounded tier. The filesystem tells it which chunks this
// node used (opened for reading) and wrote; it tells the filesystem the tier's size against its
// capacity (statvfs). The TierAgent drains the uses into a record once per interval, so a use
// costs a hash-set insert under a short lock, never a store request.
//
// Memory: at most max_pending keys are held between two records (65,536 by default, about 10
// MiB with 100-byte keys); when full the agent is woken to write a record early, and uses noted
// while it is still full are dropped and counted (a dropped use can only make a chunk look older
// than it is).
//
// Thread-safety: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"

namespace kvfs {

class NodeTier {
 public:
  explicit NodeTier(uint64_t capacity_bytes, size_t max_pending = 65536)
      : capacity_(capacity_bytes), max_pending_(max_pending) {}

  // A chunk opened for reading on this node (a hit or a miss alike).
  void NoteUse(std::string_view key) EXCLUDES(mu_);
  // A chunk this node published (or found already stored: a use of it too).
  void NoteWrite(std::string_view key, uint64_t size) EXCLUDES(mu_);

  struct Usage {
    uint64_t capacity = 0;
    uint64_t used = 0;  // as the collector last counted, plus what this node wrote since
  };
  // nullopt when no capacity is set (statvfs then reports what it does without a tier).
  std::optional<Usage> CurrentUsage() const EXCLUDES(mu_);

  // --- The agent's side ---
  std::vector<std::string> TakeUses() EXCLUDES(mu_);
  // Puts back uses whose record could not be written (dropped beyond max_pending).
  void ReturnUses(std::vector<std::string> keys) EXCLUDES(mu_);
  // The tier's bytes as the newest status says (counted at the collector's pass).
  void SetCounted(uint64_t used) EXCLUDES(mu_);
  // Called (outside the lock) when the pending set fills up: the agent writes a record now.
  void SetWake(std::function<void()> wake) EXCLUDES(mu_);
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  void Insert(std::string_view key) EXCLUDES(mu_);

  const uint64_t capacity_;
  const size_t max_pending_;
  mutable Mutex mu_;
  // Transparent: a use of a chunk already pending (a hit read again) allocates nothing.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>()(k); }
  };
  std::unordered_set<std::string, KeyHash, std::equal_to<>> pending_ GUARDED_BY(mu_);
  uint64_t counted_ GUARDED_BY(mu_) = 0;
  uint64_t written_since_ GUARDED_BY(mu_) = 0;
  std::function<void()> wake_ GUARDED_BY(mu_);
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kvfs
