#include "base/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>

namespace kvfs {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected Castagnoli polynomial

// Polynomial arithmetic modulo P (reflected: bit 31 is x^0), as in zlib's crc32_combine.
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31;
  uint32_t p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// kX2n[k] = x^(2^k) mod P.
struct X2nTable {
  std::array<uint32_t, 64> t{};
  X2nTable() {
    uint32_t p = 1u << 30;  // x^1
    for (auto& v : t) {
      v = p;
      p = MultModP(p, p);
    }
  }
};
const X2nTable kX2n;

}  // namespace

uint32_t Crc32c(uint32_t crc, const void* data, size_t n) {
  // ISA-L neither pre- nor post-inverts, and takes an int length.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  crc = ~crc;
  constexpr size_t kMaxStep = size_t{1} << 30;
  while (n > 0) {
    const size_t step = std::min(n, kMaxStep);
    crc = crc32_iscsi(p, static_cast<int>(step), crc);
    p += step;
    n -= step;
  }
  return ~crc;
}

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  // Shifting crc_a over len_b zero bytes multiplies it by x^(8 len_b) mod P.
  uint32_t xp = 1u << 31;  // x^0
  unsigned k = 3;          // 8 = 2^3
  for (uint64_t n = len_b; n != 0; n >>= 1, k++) {
    if (n & 1) xp = MultModP(kX2n.t[k & 63], xp);
  }
  return MultModP(xp, crc_a) ^ crc_b;
}

}  // namespace kvfs
