#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, in their own build dir) and runs
# each for a bounded time from its seed corpus in tests/fuzz/corpus/<target>/. Fails on the first
# crash, leak, timeout or sanitizer report; the input is saved as <build>/tests/fuzz/artifacts/
# <target>-crash-... (add it to the corpus, with a fix and a unit test, once fixed).
# New interesting inputs go to <build>/tests/fuzz/work/<target>/, never into the repo.
# usage: tests/fuzz/run.sh [target...]      (default: all; targets are fuzz_name_codec,
#                                            fuzz_s3_xml, fuzz_config)
# env:   KVFS_FUZZ_SECONDS    run time per target (default 30)
#        KVFS_FUZZ_BUILD_DIR  build dir (default <repo>/build-fuzz)
#        KVFS_FUZZ_CXX/_CC    compilers (default clang++-14 / clang-14)
#        KVFS_JOBS            build parallelism (default 2)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KVFS_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_EACH=${KVFS_FUZZ_SECONDS:-30}
JOBS=${KVFS_JOBS:-2}
CXX_BIN=${KVFS_FUZZ_CXX:-clang++-14}
CC_BIN=${KVFS_FUZZ_CC:-clang-14}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_name_codec fuzz_s3_xml fuzz_config)
T0=$(date +%s)
say() { echo "== fuzz [$(( $(date +%s) - T0 ))s] $*"; }

command -v "$CXX_BIN" >/dev/null || {
  echo "fuzz: $CXX_BIN not found (packaging/install-deps.sh --test installs clang-14)" >&2
  exit 1
}
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

say "configure + build $BUILD (${TARGETS[*]})"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKVFS_FUZZ=ON \
  -DKVFS_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCMAKE_C_COMPILER="$CC_BIN" \
  "${LAUNCHER[@]}" >/dev/null
ninja -C "$BUILD" -j"$JOBS" "${TARGETS[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${TARGETS[@]}"; do
  name=${t#fuzz_}
  seeds=$ROOT/tests/fuzz/corpus/$name
  work=$BUILD/tests/fuzz/work/$name
  arts=$BUILD/tests/fuzz/artifacts
  log=$BUILD/tests/fuzz/$t.log
  dict=()
  [ -f "$ROOT/tests/fuzz/$name.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$name.dict")
  mkdir -p "$work" "$arts"
  say "$t for ${SECONDS_EACH}s (seeds: $seeds)"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a blow-up is a failure too.
  if "$BUILD/tests/fuzz/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 "${dict[@]}" -artifact_prefix="$arts/$t-" "$work" "$seeds" \
       >"$log" 2>&1; then
    say "$t: ok ($(grep -a -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs)"
  else
    say "$t: FAILED (log $log)"
    tail -n 60 "$log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  say "FAILED: ${failed[*]}"
  exit 1
fi
say "PASSED: ${TARGETS[*]}"
