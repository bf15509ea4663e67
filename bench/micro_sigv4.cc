// SigV4 signing cost per request: every GET part, PUT and HEAD is signed, so this bounds the
// request rate one core can sign (ranged GETs of 8 MiB at 1 GiB/s are only ~128 signatures/s,
// but negative lookups are one HEAD each).
#include <benchmark/benchmark.h>

#include <string>

#include "objstore/s3/sigv4.h"

namespace {

using kvfs::s3::SigV4Request;

const char kKey[] = "meta-llama-Llama-3.1-8B-Instruct@1@0@1a2b3c4d5e6f7081@bfloat16.pt";

SigV4Request RangedGet() {
  SigV4Request r;
  r.method = "GET";
  r.canonical_uri = "/kvfs-bench/" + kvfs::s3::UriEncode(kKey, false);
  r.headers = {{"host", "127.0.0.1:7480"},
               {"range", "bytes=8388608-16777215"},
               {"x-amz-content-sha256", kvfs::s3::kUnsignedPayload},
               {"x-amz-date", "20260101T000000Z"}};
  r.payload_hash = kvfs::s3::kUnsignedPayload;
  return r;
}

void BM_SignRangedGet(benchmark::State& state) {
  SigV4Request r = RangedGet();
  for (auto _ : state) {
    auto sig =
        kvfs::s3::SignV4(r, "TESTACCESSKEY0000001", "testsecretkey0000000000000000000000000001",
                         "us-east-1", "s3", "20260101T000000Z");
    benchmark::DoNotOptimize(sig);
  }
}
BENCHMARK(BM_SignRangedGet);

void BM_SignListWithQuery(benchmark::State& state) {
  SigV4Request r = RangedGet();
  r.canonical_uri = "/kvfs-bench";
  r.headers.erase(r.headers.begin() + 1);
  r.query = {{"list-type", "2"},
             {"prefix", "meta-llama-Llama-3.1-8B-Instruct@1@0@"},
             {"continuation-token", "1/abcdefghijklmnopqrstuvwxyz=="},
             {"max-keys", "1000"}};
  for (auto _ : state) {
    auto sig =
        kvfs::s3::SignV4(r, "TESTACCESSKEY0000001", "testsecretkey0000000000000000000000000001",
                         "us-east-1", "s3", "20260101T000000Z");
    benchmark::DoNotOptimize(sig);
  }
}
BENCHMARK(BM_SignListWithQuery);

void BM_UriEncodeKey(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(kvfs::s3::UriEncode(kKey, false));
}
BENCHMARK(BM_UriEncodeKey);

}  // namespace
