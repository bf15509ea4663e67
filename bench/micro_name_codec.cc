// Name <-> key encoding: runs on every lookup, create and listing entry.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "fs/name_codec.h"

namespace {

const char kName[] = "meta-llama-Llama-3.1-8B-Instruct@1@0@1a2b3c4d5e6f7081@bfloat16.pt";
// An MP-mode name with characters that need escaping.
const char kOddName[] = "Qwen-SEP-Qwen3-32B@0x00000003@1f@9a8b7c6d5e4f3a2b@salt%v.data";

void BM_EncodeComponent(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(kvfs::NameCodec::EncodeComponent(kName));
}
BENCHMARK(BM_EncodeComponent);

void BM_EncodeComponentEscaped(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(kvfs::NameCodec::EncodeComponent(kOddName));
}
BENCHMARK(BM_EncodeComponentEscaped);

void BM_DecodeComponent(benchmark::State& state) {
  std::string enc = kvfs::NameCodec::EncodeComponent(kOddName);
  for (auto _ : state) benchmark::DoNotOptimize(kvfs::NameCodec::DecodeComponent(enc));
}
BENCHMARK(BM_DecodeComponent);

// Full name -> key with hashed fan-out (the flat chunk directory's layout).
void BM_FileKeyFanout(benchmark::State& state) {
  kvfs::NameCodec codec("kv/", static_cast<int>(state.range(0)));
  std::vector<std::string> path{kName};
  for (auto _ : state) benchmark::DoNotOptimize(codec.FileKey(path));
}
BENCHMARK(BM_FileKeyFanout)->Arg(0)->Arg(2);

// Listed key -> name (every entry of a directory listing).
void BM_NameOfKeyFanout(benchmark::State& state) {
  kvfs::NameCodec codec("kv/", 2);
  auto key = codec.FileKey({kName});
  auto prefix = codec.DirPrefix({});
  if (!key.ok() || !prefix.ok()) {
    state.SkipWithError("FileKey/DirPrefix failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(codec.NameOfKey(*prefix, *key));
}
BENCHMARK(BM_NameOfKeyFanout);

}  // namespace
