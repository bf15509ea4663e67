// Checksums a whole-chunk validation could use, over chunk-sized buffers: the cost per MiB
// decides whether validating every read and write is affordable.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <vector>

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
void BM_Blake2b(benchmark::State& s) { Digest(s, EVP_blake2b512()); }

BENCHMARK(BM_Sha256)->Arg(1 << 20)->Arg(8 << 20);
BENCHMARK(BM_Md5)->Arg(1 << 20)->Arg(8 << 20);
BENCHMARK(BM_Blake2b)->Arg(1 << 20)->Arg(8 << 20);

}  // namespace
