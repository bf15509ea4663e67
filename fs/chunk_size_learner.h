// ChunkSizeLearner: the size whole chunks have, learnt per name pattern from the objects the
// store holds, so that whole-chunk checking needs no byte sizes computed by hand.
//
// An engine that saves full chunks only (LMCache `save_unfull_chunk: false`) writes every chunk of
// one model, rank and dtype with the same number of bytes (chunk_size tokens), and its file names
// differ only in the content hash. A chunk closed with fewer bytes than the largest object of its
// pattern is partial (a writer that closed after a failed or interrupted write) and is rejected -
// unless that smaller size is established: kEstablish distinct names of the pattern have had
// exactly that size (objects seen in the store, or closes on this node, rejected ones included).
// Why both:
// - The largest, not the first or the most common, is the reference: a partial object already in
//   the store (left by an older daemon or another tool) can then never make whole chunks look
//   wrong, and the first whole chunk of a pattern teaches the rest. A larger chunk is never
//   partial.
// - An engine's chunk size changes with its configuration (chunk_size), and then every new chunk
//   has the new size. If it shrank, the old, larger objects stay in the store, and with the
//   largest alone every new chunk would be rejected forever. A partial chunk's size is wherever
//   its writer stopped; whole chunks of a new configuration all have one size. So a size that
//   kEstablish different names had is the engine's chunk size: the first kEstablish - 1 chunks
//   of a shrunk size are rejected once per pattern and node (a cache miss for the engine), the
//   rest are accepted; sizes that other nodes already stored are accepted at once. The same name
//   closed again (a retry) counts once.
//
// The pattern of a key (PatternOf): every run of at least 12 hex digits (the content hash, in hex
// or decimal) becomes '*', and every directory of at most 4 hex digits that is a piece of the file
// name (the fan-out levels of llm-d and LMCache GDS) becomes '*'. Model names, ranks (LMCache MP's
// 0x%08x), dtypes and suffixes stay, so each model, rank and dtype is learnt on its own. A name
// without a hash is its own pattern and is not checked (no size to share, no request made).
//
// Sizes are learnt from what the filesystem sees anyway (lookups, listings, its own uploads), and,
// the first time a chunk of a pattern nothing is known about is closed, from one LIST page of up
// to kProbeKeys keys under the name's literal prefix (the key up to its hash): so the first chunk
// a fresh node writes is checked too, at the cost of one request per pattern. Bounded: at most
// max_patterns patterns; past that an arbitrary one is forgotten.
//
// Thread-safety: thread-safe (one internal mutex, a leaf lock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "objstore/object_store.h"

namespace kvfs {

class ChunkSizeLearner {
 public:
  struct Learnt {
    uint64_t size = 0;     // the largest object seen with this pattern
    std::string from_key;  // one object of that size, for messages
  };

  // enabled false: Observe does nothing and Lookup finds nothing.
  explicit ChunkSizeLearner(bool enabled, size_t max_patterns = 4096);

  static std::string PatternOf(std::string_view key);
  // The key up to its first hashed part: where a probe lists.
  static std::string_view LiteralPrefix(std::string_view key);

  bool enabled() const { return enabled_; }

  // An object `key` of `size` bytes exists in the store (seen there, or just uploaded).
  void Observe(std::string_view key, uint64_t size) EXCLUDES(mu_);

  // The largest size of the objects named like `key`. With `store`, a pattern nothing is known
  // about is asked for once (see above); a failed LIST is only logged - nothing is known, and it
  // is asked again next time. nullopt: not known (no hash in the name, nothing of it stored).
  std::optional<Learnt> Lookup(std::string_view key, ObjectStore* store = nullptr) EXCLUDES(mu_);

  // A close of `key` with `size` bytes: nullopt if it is a whole chunk (not smaller than the
  // largest of its pattern, or an established size), else what it falls short of. The close is
  // remembered either way, as a name that had `size` bytes. `store` as for Lookup.
  std::optional<Learnt> CheckClose(std::string_view key, uint64_t size,
                                   ObjectStore* store = nullptr) EXCLUDES(mu_);

  static constexpr int kProbeKeys = 200;
  // Distinct names of one size that make it a chunk size of their pattern.
  static constexpr size_t kEstablish = 3;
  // Sizes remembered per pattern (besides the largest): whole sizes and partial ones.
  static constexpr size_t kMaxSizesPerPattern = 16;

 private:
  struct PatternState {
    Learnt largest;  // size 0: asked, nothing in the store
    // size -> hashes of up to kEstablish distinct names that had it.
    std::unordered_map<uint64_t, std::vector<size_t>> names_by_size;
  };
  // Records that `key` had `size` bytes in `pattern` (0: asked, nothing known), forgetting another
  // pattern if full; what is now known of it.
  PatternState& RememberLocked(std::string pattern, uint64_t size, std::string_view key)
      REQUIRES(mu_);
  // A map entry as Lookup answers it (size 0: asked, nothing in the store).
  static std::optional<Learnt> Known(const Learnt& l);

  const bool enabled_;
  const size_t max_patterns_;
  Mutex mu_;
  std::unordered_map<std::string, PatternState> by_pattern_ GUARDED_BY(mu_);
};

}  // namespace kvfs
