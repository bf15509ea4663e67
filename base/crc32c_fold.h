// CrcFold: the CRC32C of bytes [0, n) of a file or object, built from the pieces it is written or
// read in, in whatever order they come (the kernel sends the pieces of one large read or O_DIRECT
// write to several FUSE threads at once). Each piece is checksummed when it arrives, while it is
// still in the CPU cache, and combined (Crc32cCombine) once the pieces before it are in - so the
// bytes never need a second pass.
//
// Pieces that overlap what is already held are trimmed to their new bytes (kTrim: reads, where
// the same offset always holds the same byte), or make the fold give up (kInvalidate: writes,
// where a rewrite changes bytes already folded). It also gives up when more than kMaxPending
// pieces wait ahead of a gap. After giving up, valid() is false for good (until Reset).
//
// With `mark_every` (SliceCrcs::kMinSliceSize for a spool), pieces are cut at its multiples as
// they are added, and the CRC of [0, k * mark_every) is kept as the fold passes each one: what
// SlicesOf needs to give each slice's CRC without a second pass over the bytes.
//
// Not thread-safe: the owner serializes calls (StreamVerifier's mutex, SpoolFile's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "base/slice_crcs.h"

namespace kvfs {

class CrcFold {
 public:
  enum class Overlap { kTrim, kInvalidate };
  static constexpr size_t kMaxPending = 64;

  explicit CrcFold(Overlap overlap, uint64_t mark_every = 0)
      : overlap_(overlap), mark_every_(mark_every) {}

  // Bytes [offset, offset + n) are `data`.
  void Add(uint64_t offset, const char* data, uint64_t n);
  // Starts over (a file truncated to nothing).
  void Reset();
  void Invalidate();

  bool valid() const { return valid_; }
  // Bytes [0, contiguous()) are folded into crc(); pieces past a gap are not.
  uint64_t contiguous() const { return next_; }
  uint32_t crc() const { return crc_; }
  // The CRC of exactly [0, size) when every piece of it, and nothing past it, was added.
  bool CrcOf(uint64_t size, uint32_t* crc) const;
  // The CRC of each slice of [0, size) (SliceCrcs::SliceSizeFor(size)) when CrcOf(size) holds and
  // the fold was built with mark_every = SliceCrcs::kMinSliceSize.
  std::optional<SliceCrcs> SlicesOf(uint64_t size) const;

 private:
  struct Segment {
    uint64_t length;
    uint32_t crc;
  };
  void AddPiece(uint64_t offset, const char* data, uint64_t n);
  void Fold();
  // Extends the fold by `len` bytes of CRC `crc` at next_ (keeping a mark at a boundary).
  void Advance(uint32_t crc, uint64_t len);

  const Overlap overlap_;
  const uint64_t mark_every_;
  bool valid_ = true;
  uint64_t next_ = 0;
  uint32_t crc_ = 0;
  // Added, not yet contiguous with next_: disjoint, each starting after next_.
  std::map<uint64_t, Segment> pending_;
  std::vector<uint32_t> marks_;  // marks_[i]: the CRC of [0, (i + 1) * mark_every_)
};

}  // namespace kvfs
