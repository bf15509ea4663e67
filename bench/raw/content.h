// Chunk names and deterministic chunk bytes, identical to bench/kvbench.py, so the raw limits
// move the same names and the same bytes as the filesystem runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

// "meta-llama-Llama-3.1-8B-Instruct@1@0@<16 hex>@bfloat16.pt", the hex being the first 16 hex
// digits of SHA-256("<tag>/<set>/<size_mib>/<threads>/<index>").
std::string ChunkName(const std::string& tag, char set, int size_mib, int threads, int index);

// The bytes of every chunk of one size: a window into one SHAKE-256 stream of the size,
// starting at a page-aligned, name-dependent offset. Immutable after construction:
// thread-safe for concurrent readers.
class Content {
 public:
  explicit Content(uint64_t size);

  uint64_t size() const { return size_; }
  // The expected bytes of `name` (size() bytes).
  const char* Chunk(const std::string& name) const;

 private:
  static constexpr uint64_t kWindows = 256;
  static constexpr uint64_t kPage = 4096;
  uint64_t size_;
  std::vector<char> base_;
};

}  // namespace kvbench
