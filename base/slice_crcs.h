// SliceCrcs: the CRC32C of each fixed-size slice of an object, recorded by its writer beside the
// CRC of the whole (objstore's kSliceChecksumMetaHeader), so that a reader can check a download
// slice by slice and hand each slice on once it matched - instead of holding every byte back until
// the last one is in and the whole object's CRC matched (fs/read/object_fetch.h).
//
// Slices are kMinSliceSize (1 MiB: a reply begins after the first MiB, as a raw GET's first part
// would) and double until an object has at most kMaxSlices of them, so the recorded value stays
// under ~1.1 KiB of S3's 2 KiB of user metadata whatever the object's size.
//
// A value type: not synchronized (each owner guards its copy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kvfs {

struct SliceCrcs {
  static constexpr uint64_t kMinSliceSize = 1ull << 20;
  static constexpr size_t kMaxSlices = 128;

  uint64_t slice_size = 0;
  std::vector<uint32_t> crcs;  // of slice i = bytes [i * slice_size, (i + 1) * slice_size)

  // The slice size a writer uses for an object of `object_size` bytes.
  static uint64_t SliceSizeFor(uint64_t object_size);
  // The slices of the `size` bytes at `data` (a writer holding its chunk in memory).
  static SliceCrcs Of(const char* data, uint64_t size);
  // Whether these slices describe an object of `object_size` bytes (their count and size).
  bool Fits(uint64_t object_size) const;
  uint64_t SliceLength(size_t i, uint64_t object_size) const;
  // The CRC32C of the whole object, combined from the slices' (Fits(object_size) holds).
  uint32_t Whole(uint64_t object_size) const;

  // "<slice_size>:" then 8 lowercase hex digits per slice. Parse takes nothing else: another
  // tool's value or damage counts as no slices (the whole object's CRC still applies).
  std::string Format() const;
  static std::optional<SliceCrcs> Parse(std::string_view text);

  bool operator==(const SliceCrcs&) const = default;
};

// The CRC32C of each slice (sized by SliceSizeFor(size)) of bytes [0, size) of the file open as
// `fd`, in one pass of pread (Whole(size) gives the file's); a file shorter than `size` is
// kDataLoss. `what` names the file in errors. Thread-safe.
Result<SliceCrcs> SliceCrcsOfFile(int fd, uint64_t size, const std::string& what);

}  // namespace kvfs
