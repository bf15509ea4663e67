#include "bench/raw/content.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace kvbench {
namespace {

std::vector<unsigned char> Sha256(const std::string& s) {
  std::vector<unsigned char> out(32);
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), out.data(), &n, EVP_sha256(), nullptr);
  return out;
}

}  // namespace

std::string ChunkName(const std::string& tag, char set, int size_mib, int threads, int index) {
  std::string seed = tag + "/" + set + "/" + std::to_string(size_mib) + "/" +
                     std::to_string(threads) + "/" + std::to_string(index);
  auto h = Sha256(seed);
  char hex[17];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", h[i]);
  return std::string("meta-llama-Llama-3.1-8B-Instruct@1@0@") + hex + "@bfloat16.pt";
}

Content::Content(uint64_t size) : size_(size), base_(size + kWindows * kPage) {
  std::string seed = "kvbench/" + std::to_string(size);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      ctx && EVP_DigestInit_ex(ctx, EVP_shake256(), nullptr) == 1 &&
      EVP_DigestUpdate(ctx, seed.data(), seed.size()) == 1 &&
      EVP_DigestFinalXOF(ctx, reinterpret_cast<unsigned char*>(base_.data()), base_.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) {
    std::fprintf(stderr, "raw_s3: SHAKE-256 failed (OpenSSL)\n");
    std::abort();
  }
}

const char* Content::Chunk(const std::string& name) const {
  auto h = Sha256(name);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | h[i];  // little-endian, as kvbench.py
  return base_.data() + (v % kWindows) * kPage;
}

}  // namespace kvbench
