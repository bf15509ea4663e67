#include "base/slice_crcs.h"

#include <algorithm>
#include <cstdio>

#include "base/crc32c.h"
#include "base/posix_io.h"

namespace kvfs {
namespace {

// ceil(n / d) for any n (the sizes come from a server: n + d - 1 may not fit).
uint64_t CeilDiv(uint64_t n, uint64_t d) { return n / d + (n % d != 0 ? 1 : 0); }

}  // namespace

uint64_t SliceCrcs::SliceSizeFor(uint64_t object_size) {
  uint64_t s = kMinSliceSize;
  while (CeilDiv(object_size, s) > kMaxSlices) s *= 2;
  return s;
}

SliceCrcs SliceCrcs::Of(const char* data, uint64_t size) {
  SliceCrcs out;
  out.slice_size = SliceSizeFor(size);
  for (uint64_t off = 0; off < size; off += out.slice_size) {
    out.crcs.push_back(Crc32c(0, data + off, std::min(out.slice_size, size - off)));
  }
  return out;
}

bool SliceCrcs::Fits(uint64_t object_size) const {
  return slice_size >= kMinSliceSize && (slice_size & (slice_size - 1)) == 0 &&
         crcs.size() == CeilDiv(object_size, slice_size);
}

uint64_t SliceCrcs::SliceLength(size_t i, uint64_t object_size) const {
  const uint64_t start = i * slice_size;
  return start >= object_size ? 0 : std::min(slice_size, object_size - start);
}

uint32_t SliceCrcs::Whole(uint64_t object_size) const {
  uint32_t crc = 0;
  for (size_t i = 0; i < crcs.size(); i++) {
    crc = Crc32cCombine(crc, crcs[i], SliceLength(i, object_size));
  }
  return crc;
}

std::string SliceCrcs::Format() const {
  std::string out = std::to_string(slice_size) + ":";
  out.reserve(out.size() + crcs.size() * 8);
  char buf[9];
  for (uint32_t c : crcs) {
    std::snprintf(buf, sizeof(buf), "%08x", c);
    out.append(buf, 8);
  }
  return out;
}

std::optional<SliceCrcs> SliceCrcs::Parse(std::string_view text) {
  const size_t colon = text.find(':');
  // At most 19 digits: no uint64_t overflow while parsing.
  if (colon == 0 || colon == std::string_view::npos || colon > 19) return std::nullopt;
  SliceCrcs out;
  for (char c : text.substr(0, colon)) {
    if (c < '0' || c > '9') return std::nullopt;
    out.slice_size = out.slice_size * 10 + static_cast<uint64_t>(c - '0');
  }
  const std::string_view hex = text.substr(colon + 1);
  if (hex.empty() || hex.size() % 8 != 0 || hex.size() / 8 > kMaxSlices) return std::nullopt;
  for (size_t i = 0; i < hex.size(); i += 8) {
    uint32_t v = 0;
    for (char c : hex.substr(i, 8)) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else {
        return std::nullopt;
      }
      v = (v << 4) | static_cast<uint32_t>(d);
    }
    out.crcs.push_back(v);
  }
  if (out.slice_size < kMinSliceSize || (out.slice_size & (out.slice_size - 1)) != 0) {
    return std::nullopt;
  }
  return out;
}

Result<SliceCrcs> SliceCrcsOfFile(int fd, uint64_t size, const std::string& what) {
  // A pass over page-cache-hot bytes (~2 ms per 64 MiB for the CRC, plus the copy); the buffer is
  // one minimum slice, so every read ends on a slice boundary.
  thread_local std::vector<char> buf(SliceCrcs::kMinSliceSize);
  SliceCrcs out;
  out.slice_size = SliceCrcs::SliceSizeFor(size);
  uint32_t crc = 0;
  for (uint64_t off = 0; off < size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - off));
    KVFS_RETURN_IF_ERROR(PreadExact(fd, buf.data(), want, off, what));
    crc = Crc32c(crc, buf.data(), want);
    off += want;
    if (off % out.slice_size == 0 || off == size) {
      out.crcs.push_back(crc);
      crc = 0;
    }
  }
  return out;
}

}  // namespace kvfs
