#include "base/crc32c_fold.h"

#include <algorithm>
#include <iterator>

#include "base/crc32c.h"

namespace kvfs {

void CrcFold::Reset() {
  valid_ = true;
  next_ = 0;
  crc_ = 0;
  pending_.clear();
  marks_.clear();
}

void CrcFold::Invalidate() {
  valid_ = false;
  pending_.clear();
}

bool CrcFold::CrcOf(uint64_t size, uint32_t* crc) const {
  if (!valid_ || next_ != size || !pending_.empty()) return false;
  *crc = crc_;
  return true;
}

std::optional<SliceCrcs> CrcFold::SlicesOf(uint64_t size) const {
  uint32_t whole;
  if (mark_every_ != SliceCrcs::kMinSliceSize || !CrcOf(size, &whole)) return std::nullopt;
  // Slice i of the marks is prefix(i + 1) with prefix(i) shifted out: CRCs are linear, so
  // crc(B) = crc(A B) ^ crc(A) shifted over |B| zero bytes (Crc32cCombine with crc_b = 0).
  const size_t n = (size + mark_every_ - 1) / mark_every_;
  SliceCrcs out;
  out.slice_size = SliceCrcs::SliceSizeFor(size);
  const uint64_t per = out.slice_size / mark_every_;  // marks per slice
  uint32_t before = 0;
  for (size_t end = per; end < n + per; end += per) {
    const size_t last = std::min(end, n);  // marks [.., last) close this slice
    const uint32_t prefix = last <= marks_.size() ? marks_[last - 1] : whole;
    const uint64_t len = std::min<uint64_t>(last * mark_every_, size) - (end - per) * mark_every_;
    out.crcs.push_back(prefix ^ Crc32cCombine(before, 0, len));
    before = prefix;
  }
  return out;
}

void CrcFold::Advance(uint32_t crc, uint64_t len) {
  crc_ = Crc32cCombine(crc_, crc, len);
  next_ += len;
  if (mark_every_ != 0 && next_ % mark_every_ == 0) marks_.push_back(crc_);
}

void CrcFold::Fold() {
  while (!pending_.empty() && pending_.begin()->first == next_) {
    const Segment s = pending_.begin()->second;
    pending_.erase(pending_.begin());
    Advance(s.crc, s.length);
  }
}

void CrcFold::Add(uint64_t offset, const char* data, uint64_t n) {
  if (mark_every_ == 0) return AddPiece(offset, data, n);
  // No piece crosses a mark, so the fold passes each one exactly.
  while (n > 0 && valid_) {
    const uint64_t take = std::min(n, mark_every_ - offset % mark_every_);
    AddPiece(offset, data, take);
    offset += take;
    data += take;
    n -= take;
  }
}

void CrcFold::AddPiece(uint64_t offset, const char* data, uint64_t n) {
  if (!valid_ || n == 0) return;
  const uint64_t end = offset + n;
  if (overlap_ == Overlap::kInvalidate) {
    // A rewrite of bytes already held changes what they were folded as.
    auto it = pending_.lower_bound(end);
    bool overlaps = offset < next_;
    if (!overlaps && it != pending_.begin()) {
      auto prev = std::prev(it);
      overlaps = prev->first + prev->second.length > offset;
    }
    if (overlaps) {
      Invalidate();
      return;
    }
  }
  uint64_t pos = std::max(offset, next_);
  while (pos < end && valid_) {
    if (pos == next_) {
      // In order: fold up to the first piece already waiting (it starts after next_).
      uint64_t limit = end;
      if (!pending_.empty()) limit = std::min(limit, pending_.begin()->first);
      Advance(Crc32c(0, data + (pos - offset), limit - pos), limit - pos);
      Fold();
      pos = std::max(limit, next_);
      continue;
    }
    // Ahead of a gap: keep the CRC of the bytes no waiting piece covers, to fold in later.
    auto it = pending_.upper_bound(pos);
    if (it != pending_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second.length > pos) {
        pos = prev->first + prev->second.length;  // already held
        continue;
      }
    }
    if (pending_.size() >= kMaxPending) {
      Invalidate();
      return;
    }
    const uint64_t seg_end = it == pending_.end() ? end : std::min(end, it->first);
    pending_.emplace(pos, Segment{seg_end - pos, Crc32c(0, data + (pos - offset), seg_end - pos)});
    pos = seg_end;
  }
}

}  // namespace kvfs
