// StreamVerifier: checks what a streaming read handle (no cache entry: object larger than the
// cache, cache off, or cache disk full) serves against the CRC32C its writer recorded.
//
// A streamed read goes from the store to the reader with no second pass, so the check cannot
// come before the bytes: instead the reads of one handle are folded, in whatever order they
// complete, into one CRC of the object from its first byte; the read that completes the cover
// of the whole object fails with kDataLoss (EIO) if the CRC does not match, and so does every
// later read of the handle. A reader that reads a whole chunk - what engines do - therefore never
// completes it when a byte was changed on the wire or at rest, though it may have been handed
// earlier parts of it.
//
// The reads are folded by a CrcFold: reads that overlap what is already held are trimmed to the
// new bytes. A read pattern it cannot fold (more than kMaxPending reads ahead of a gap) is left
// unverified, as is an object with no recorded CRC or with `verify: off`.
//
// Thread-safe: one mutex (a leaf) guards the state. Add checksums under it (~40 us per MiB with
// ISA-L), which is simpler than re-trimming when another read folds in meanwhile, and reads of one
// handle rarely run at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/crc32c_fold.h"
#include "base/mutex.h"
#include "base/status.h"
#include "objstore/object_store.h"

namespace kvfs {

class StreamVerifier {
 public:
  enum class Outcome {
    kOpen,        // the whole object has not been read (yet)
    kVerified,    // read whole, and matched
    kFailed,      // read whole, and did not match
    kUnverified,  // read whole with nothing to check against, or not foldable
  };
  static constexpr size_t kMaxPending = CrcFold::kMaxPending;

  // `expected`: the CRC recorded with the object when known at open (HEAD); a GET's reply may
  // tell it later (OnInfo). `enabled` false (`verify: off`): nothing is checked.
  StreamVerifier(std::string key, uint64_t size, std::optional<uint32_t> expected, bool enabled);

  // What a GET's reply said of the object: learns its CRC if not known yet.
  void OnInfo(const ObjectInfo& info);

  // Bytes [offset, offset + n) of the object were read into `data`. Returns kDataLoss when the
  // object is now covered and does not match its CRC, or when it failed before.
  Status Add(uint64_t offset, const char* data, uint64_t n);

  Outcome outcome() const;

 private:
  Status MismatchLocked() const REQUIRES(mu_);

  const std::string key_;
  const uint64_t size_;
  const bool enabled_;
  mutable Mutex mu_;
  std::optional<uint32_t> expected_ GUARDED_BY(mu_);
  bool expected_known_ GUARDED_BY(mu_);
  CrcFold fold_ GUARDED_BY(mu_){CrcFold::Overlap::kTrim};
  Outcome outcome_ GUARDED_BY(mu_) = Outcome::kOpen;
};

}  // namespace kvfs
