#include "fs/read/stream_verifier.h"

#include <algorithm>
#include <iterator>

#include "cache/crc32c.h"

namespace kvfs {

StreamVerifier::StreamVerifier(std::string key, uint64_t size, std::optional<uint32_t> expected,
                               bool enabled)
    : key_(std::move(key)),
      size_(size),
      enabled_(enabled),
      expected_(expected),
      expected_known_(expected.has_value()) {}

void StreamVerifier::OnInfo(const ObjectInfo& info) {
  MutexLock l(&mu_);
  if (expected_known_) return;
  expected_known_ = true;
  expected_ = info.crc32c;
}

StreamVerifier::Outcome StreamVerifier::outcome() const {
  if (!enabled_) return Outcome::kUnverified;
  MutexLock l(&mu_);
  return outcome_;
}

Status StreamVerifier::MismatchLocked() const {
  return Status::DataLoss("read of " + key_ + " does not match its checksum (CRC32C " +
                          FormatCrc32c(crc_) + ", recorded " + FormatCrc32c(expected_.value_or(0)) +
                          "): changed on the wire or in the store; read whole, not completed");
}

void StreamVerifier::GiveUpLocked() {
  outcome_ = Outcome::kUnverified;
  pending_.clear();
}

void StreamVerifier::FoldLocked() {
  while (!pending_.empty() && pending_.begin()->first == next_) {
    const Segment s = pending_.begin()->second;
    crc_ = Crc32cCombine(crc_, s.crc, s.length);
    next_ += s.length;
    pending_.erase(pending_.begin());
  }
}

Status StreamVerifier::Add(uint64_t offset, const char* data, uint64_t n) {
  if (!enabled_ || n == 0 || offset >= size_) return Status::OK();
  const uint64_t end = std::min(offset + n, size_);
  MutexLock l(&mu_);
  if (outcome_ == Outcome::kFailed) return MismatchLocked();
  uint64_t pos = std::max(offset, next_);
  while (pos < end && outcome_ == Outcome::kOpen) {
    if (pos == next_) {
      // In order: fold up to the first read already waiting (it starts after next_).
      uint64_t limit = end;
      if (!pending_.empty()) limit = std::min(limit, pending_.begin()->first);
      crc_ = Crc32cCombine(crc_, Crc32c(0, data + (pos - offset), limit - pos), limit - pos);
      next_ = limit;
      FoldLocked();
      pos = std::max(limit, next_);
      continue;
    }
    // Ahead of a gap: keep the CRC of the bytes no waiting read covers, to fold in later.
    auto it = pending_.upper_bound(pos);
    if (it != pending_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second.length > pos) {
        pos = prev->first + prev->second.length;  // already held
        continue;
      }
    }
    if (pending_.size() >= kMaxPending) {
      GiveUpLocked();
      break;
    }
    const uint64_t seg_end = it == pending_.end() ? end : std::min(end, it->first);
    pending_.emplace(pos, Segment{seg_end - pos, Crc32c(0, data + (pos - offset), seg_end - pos)});
    pos = seg_end;
  }
  if (outcome_ != Outcome::kOpen || next_ < size_) return Status::OK();
  if (!expected_.has_value()) {
    outcome_ = Outcome::kUnverified;
    return Status::OK();
  }
  if (*expected_ == crc_) {
    outcome_ = Outcome::kVerified;
    return Status::OK();
  }
  outcome_ = Outcome::kFailed;
  return MismatchLocked();
}

}  // namespace kvfs
