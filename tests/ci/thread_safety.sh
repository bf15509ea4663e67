#!/usr/bin/env bash
# The clang thread-safety check (CI): compiles every source, tests included, with clang-14 and
# -Wthread-safety -Werror (KVFS_THREAD_SAFETY=ON) in its own build directory, so that the
# GUARDED_BY / REQUIRES / EXCLUDES annotations on kvfs::Mutex (base/mutex.h) are checked by
# the compiler. Any warning fails (they are errors; the log is also checked for "warning:").
# The analysis is clang's front end: each object is compiled -fsyntax-only (no code, no debug
# information, nothing linked), a third of a full build's time; the other builds make the code.
# usage: tests/ci/thread_safety.sh
# env:   KVFS_TS_BUILD_DIR  build dir (default <repo>/build-thread-safety)
#        KVFS_JOBS          build parallelism (default 2)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KVFS_TS_BUILD_DIR:-$ROOT/build-thread-safety}
JOBS=${KVFS_JOBS:-2}
T0=$(date +%s)
LAUNCHER=()
if command -v ccache >/dev/null; then
  LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

echo "== thread_safety: configure + build $BUILD (clang-14, -Wthread-safety -Werror)"
# Debug (-O0): the analysis does not depend on optimisation, and -O0 compiles fastest.
# -ferror-limit=0: show every finding, not the first 20 of a file.
CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DKVFS_BUILD_TESTS=ON -DKVFS_THREAD_SAFETY=ON -DCMAKE_CXX_FLAGS=-ferror-limit=0 \
  "${LAUNCHER[@]}" >/dev/null
# Then -fsyntax-only: CMake's own compiler check (which links a program) ran in the first pass.
cmake -B "$BUILD" "-DCMAKE_CXX_FLAGS=-ferror-limit=0 -fsyntax-only" -DCMAKE_CXX_FLAGS_DEBUG= \
  >/dev/null
LOG=$BUILD/thread_safety.log
rc=0
mapfile -t OBJECTS < <(ninja -C "$BUILD" -t targets all | sed -n 's/^\(.*\.o\): CXX_COMPILER.*/\1/p')
[ "${#OBJECTS[@]}" -gt 0 ] || { echo "== thread_safety: no objects to compile in $BUILD"; exit 1; }
ninja -C "$BUILD" -j"$JOBS" -k 0 "${OBJECTS[@]}" >"$LOG" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || grep -q "warning:" "$LOG"; then
  grep -E "(error|warning):" "$LOG" | sort -u || true
  echo "== thread_safety: FAILED after $(( $(date +%s) - T0 ))s (full log: $LOG)"
  exit 1
fi
echo "== thread_safety: PASSED in $(( $(date +%s) - T0 ))s"
