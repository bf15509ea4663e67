// The metadata cache's memory with N names put once each (what a readdir of an N-name directory,
// or N distinct lookups, does to it): the process's RSS before and after, and what the cache
// charges itself. Built by hand, against fs/meta_cache.cc alone (it needs nothing else):
//
//   g++ -std=c++20 -O2 -I. bench/meta_cache_rss.cc fs/meta_cache.cc -o /tmp/meta_cache_rss
//   /tmp/meta_cache_rss 1000000 [max_bytes]
//
// Results: bench/RESULTS-memory.md.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fs/meta_cache.h"

namespace {

long RssKib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64ull << 20;
  const long before = RssKib();
  kvfs::MetaCache cache(std::chrono::seconds(30), max_bytes);
  char key[96];
  for (long i = 0; i < n; ++i) {
    // A typical LMCache chunk key: ~60 bytes.
    std::snprintf(key, sizeof(key), "kv/vllm@meta-llama-3-8b@1@0@%016lx@bfloat16.pt", i * 7919);
    kvfs::ObjectInfo o;
    o.key = key;
    o.size = 8 << 20;
    o.etag = "0123456789abcdef0123456789abcdef";
    cache.PutFile(o);
  }
  const long after = RssKib();
  std::printf("names %ld  entries kept %zu  charged %.1f MiB  RSS %.1f -> %.1f MiB (+%.1f)\n", n,
              cache.size(), cache.bytes() / 1048576.0, before / 1024.0, after / 1024.0,
              (after - before) / 1024.0);
  return 0;
}
