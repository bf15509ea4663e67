// Cache index: lookups (every open and stat of a cached chunk) and eviction at capacity (every
// fill once the cache is full), with a realistic entry count.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "cache/cache_index.h"

namespace {

constexpr uint64_t kChunk = 32ull << 20;

std::string Key(uint64_t i) {
  return "kv/meta-llama-Llama-3.1-8B-Instruct@1@0@" + std::to_string(1000000007ull * i) +
         "@bfloat16.pt";
}

std::shared_ptr<kvfs::CacheEntry> Ready(uint64_t i) {
  auto e = std::make_shared<kvfs::CacheEntry>();
  e->key = Key(i);
  e->size = kChunk;
  e->file_name = std::to_string(i);
  e->state = kvfs::CacheEntry::State::kReady;
  return e;
}

// range(0) entries of 32 MiB in an index just big enough for them.
std::unique_ptr<kvfs::CacheIndex> Filled(uint64_t n) {
  auto idx = std::make_unique<kvfs::CacheIndex>(n * kChunk * 100 / 85 + kChunk, 0.85, 0.05);
  for (uint64_t i = 0; i < n; ++i) idx->Insert(Ready(i));
  return idx;
}

void BM_FindHit(benchmark::State& state) {
  uint64_t n = static_cast<uint64_t>(state.range(0));
  auto idx = Filled(n);
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 1024; ++i) keys.push_back(Key(i * 7919 % n));
  size_t i = 0;
  for (auto _ : state) {
    auto e = idx->Find(keys[i++ & 1023]);
    idx->Touch(e.get());
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_FindHit)->Arg(1000)->Arg(100000);

void BM_FindMiss(benchmark::State& state) {
  auto idx = Filled(static_cast<uint64_t>(state.range(0)));
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 1024; ++i) keys.push_back(Key(1ull << 40 | i));
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(idx->Find(keys[i++ & 1023]));
}
BENCHMARK(BM_FindMiss)->Arg(1000)->Arg(100000);

// Steady state at the high watermark: each new chunk evicts a batch of LRU entries once in a
// while (evict ratio 5%), so this is the amortized cost per insert.
void BM_InsertWithEviction(benchmark::State& state) {
  uint64_t n = static_cast<uint64_t>(state.range(0));
  auto idx = Filled(n);
  uint64_t next = n;
  std::vector<std::shared_ptr<kvfs::CacheEntry>> victims;
  for (auto _ : state) {
    victims.clear();
    kvfs::Status st = idx->MakeRoom(kChunk, &victims);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
    idx->Insert(Ready(next++));
  }
  state.counters["evicted"] = static_cast<double>(idx->evictions());
}
BENCHMARK(BM_InsertWithEviction)->Arg(1000)->Arg(100000);

}  // namespace
