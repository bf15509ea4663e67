// CRC32C (Castagnoli): the checksum of cache entries. Uses the SSE4.2 crc32 instruction when the
// CPU has it (one 8-byte step per cycle or so, far faster than the disk or network feeding it) and
// a slice-by-8 table otherwise. No OpenSSL or zlib needed (cache/ depends on base only).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvfs {

// Extends `crc` (the CRC32C of the bytes before, 0 for none) over [data, data+n).
// Crc32c(0, "123456789", 9) == 0xE3069283. Thread-safe (pure function).
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);

// The CRC32C of A followed by B, from crc_a = CRC of A, crc_b = CRC of B and len_b = |B|: lets
// parts of an object be checksummed in any order, as they arrive. O(log len_b).
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

// True if the hardware (SSE4.2) path is in use; for reports and benchmarks.
bool Crc32cIsHardware();

}  // namespace kvfs
