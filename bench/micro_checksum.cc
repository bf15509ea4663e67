// Whole-chunk checksums: the cache's CRC32C (checked on every cache read and fill) against the
// digests S3 clients use, per chunk-sized buffer. Decides whether validating every chunk is free
// next to the network and tmpfs rates in RESULTS.md.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <vector>

#if __has_include("base/crc32c.h")
#include "base/crc32c.h"
#define KVBENCH_HAVE_CRC32C 1
#endif

namespace {

void Digest(benchmark::State& state, const EVP_MD* md) {
  std::vector<unsigned char> buf(static_cast<size_t>(state.range(0)), 0x5a);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  for (auto _ : state) {
    EVP_Digest(buf.data(), buf.size(), out, &n, md, nullptr);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void BM_Sha256(benchmark::State& s) { Digest(s, EVP_sha256()); }
void BM_Md5(benchmark::State& s) { Digest(s, EVP_md5()); }  // S3's Content-MD5 / ETag
BENCHMARK(BM_Sha256)->Arg(1 << 20)->Arg(8 << 20);
BENCHMARK(BM_Md5)->Arg(1 << 20)->Arg(8 << 20);

#ifdef KVBENCH_HAVE_CRC32C
void BM_Crc32c(benchmark::State& state) {
  std::vector<unsigned char> buf(static_cast<size_t>(state.range(0)), 0x5a);
  for (auto _ : state) benchmark::DoNotOptimize(kvfs::Crc32c(0, buf.data(), buf.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32c)->Arg(1 << 20)->Arg(8 << 20);
#endif

}  // namespace
