#include "cache/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kvfs {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected Castagnoli polynomial

// tables[k][b]: CRC of byte b followed by k zero bytes; lets the software path take 8 bytes a step.
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t b = 0; b < 256; b++) {
      uint32_t c = b;
      for (int i = 0; i < 8; i++) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++) {
      for (int k = 1; k < 8; k++) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
};
constexpr Tables kTables;

uint32_t SoftwareCrc(uint32_t crc, const unsigned char* p, size_t n) {
  const auto& t = kTables.t;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // little-endian host (x86-64, aarch64)
    v ^= crc;
    crc = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^ t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
          t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^ t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
// Compiled for SSE4.2 only in this function; called only after the CPU check below.
__attribute__((target("sse4.2"))) uint32_t HardwareCrc(uint32_t crc, const unsigned char* p,
                                                       size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

bool DetectHardware() { return __builtin_cpu_supports("sse4.2"); }
#else
uint32_t HardwareCrc(uint32_t crc, const unsigned char* p, size_t n) {
  return SoftwareCrc(crc, p, n);
}
bool DetectHardware() { return false; }
#endif

const bool kHardware = DetectHardware();

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
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  crc = kHardware ? HardwareCrc(crc, p, n) : SoftwareCrc(crc, p, n);
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

bool Crc32cIsHardware() { return kHardware; }

}  // namespace kvfs
