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

void CrcFold::Fold() {
  while (!pending_.empty() && pending_.begin()->first == next_) {
    const Segment s = pending_.begin()->second;
    crc_ = Crc32cCombine(crc_, s.crc, s.length);
    next_ += s.length;
    pending_.erase(pending_.begin());
  }
}

void CrcFold::Add(uint64_t offset, const char* data, uint64_t n) {
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
      crc_ = Crc32cCombine(crc_, Crc32c(0, data + (pos - offset), limit - pos), limit - pos);
      next_ = limit;
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
