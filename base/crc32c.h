// CRC32C (Castagnoli): the checksum of cache entries, computed by Intel's ISA-L (Debian's
// libisal), which picks the fastest code for the CPU at run time (~24 GiB/s with PCLMUL/AVX-512
// here, about three times a plain loop of crc32 instructions) so that checksumming a download
// while it arrives costs little next to receiving it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace kvfs {

// Extends `crc` (the CRC32C of the bytes before, 0 for none) over [data, data+n).
// Crc32c(0, "123456789", 9) == 0xE3069283. Thread-safe (pure function).
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);

// The CRC32C of A followed by B, from crc_a = CRC of A, crc_b = CRC of B and len_b = |B|: lets
// parts of an object be checksummed in any order, as they arrive. O(log len_b).
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

}  // namespace kvfs
