#!/usr/bin/env bash
# ThreadSanitizer run (CI): builds with -fsanitize=thread (KVFS_TSAN=ON, GCC) in its own build
# directory and runs the whole ctest suite under it: unit and concurrency tests, and also the
# real-mount and daemon integration tests (integration_*), which take 15-50 s each under TSan
# here and are the only runs of the FUSE adapter, the write path and the daemon with real kernel
# concurrency. To leave them out: tests/ci/tsan.sh -E '^integration_' (tests/run_all.sh leaves
# out their directory-store twins, -E '^integration_.*_dir$'). The S3 tests need
# KVFS_TEST_S3_ENDPOINT (tests/run_all.sh sets it); without it they skip, unless
# KVFS_REQUIRE_S3=1 (then they fail).
# Any race report fails the test it happens in (halt_on_error). tests/ci/tsan.supp lists the
# suppressions: third-party code only, each with its reason.
# usage: tests/ci/tsan.sh [extra ctest args, e.g. -R Cache]
# env:   KVFS_TSAN_BUILD_DIR  build dir (default <repo>/build-tsan)
#        KVFS_JOBS / KVFS_CTEST_JOBS  build / test parallelism (default 2 / 2)
#        KVFS_TEST_TIMEOUT    per-test limit in seconds (default 300)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KVFS_TSAN_BUILD_DIR:-$ROOT/build-tsan}
JOBS=${KVFS_JOBS:-2}
CTEST_JOBS=${KVFS_CTEST_JOBS:-2}
TEST_TIMEOUT=${KVFS_TEST_TIMEOUT:-300}
T0=$(date +%s)
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

echo "== tsan: configure + build $BUILD (-fsanitize=thread)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKVFS_TSAN=ON \
  -DKVFS_BUILD_TESTS=ON "${LAUNCHER[@]}" >/dev/null
ninja -C "$BUILD" -j"$JOBS"
echo "== tsan: build took $(( $(date +%s) - T0 ))s"

export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$ROOT/tests/ci/tsan.supp ${TSAN_OPTIONS:-}"
rc=0
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error --timeout "$TEST_TIMEOUT" \
  -j"$CTEST_JOBS" "$@" || rc=$?
if [ "$rc" -eq 0 ]; then
  echo "== tsan: PASSED in $(( $(date +%s) - T0 ))s"
else
  echo "== tsan: FAILED (ctest exit $rc) after $(( $(date +%s) - T0 ))s"
fi
exit "$rc"
