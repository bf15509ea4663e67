#include "fs/read/stream_verifier.h"

#include <algorithm>

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
                          FormatCrc32c(fold_.crc()) + ", recorded " +
                          FormatCrc32c(expected_.value_or(0)) +
                          "): changed on the wire or in the store; read whole, not completed");
}

Status StreamVerifier::Add(uint64_t offset, const char* data, uint64_t n) {
  if (!enabled_ || n == 0 || offset >= size_) return Status::OK();
  MutexLock l(&mu_);
  if (outcome_ == Outcome::kFailed) return MismatchLocked();
  if (outcome_ != Outcome::kOpen) return Status::OK();
  fold_.Add(offset, data, std::min(n, size_ - offset));
  if (!fold_.valid()) {
    outcome_ = Outcome::kUnverified;  // a read pattern it cannot fold
    return Status::OK();
  }
  if (fold_.contiguous() < size_) return Status::OK();
  if (!expected_.has_value()) {
    outcome_ = Outcome::kUnverified;
  } else if (*expected_ == fold_.crc()) {
    outcome_ = Outcome::kVerified;
  } else {
    outcome_ = Outcome::kFailed;
    return MismatchLocked();
  }
  return Status::OK();
}

}  // namespace kvfs
