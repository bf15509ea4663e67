// FUZZ_CHECK: the invariant check of the fuzz targets. A failed check prints the condition and
// aborts, which libFuzzer reports as a crash and saves the input. Header-only; thread-safe.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
