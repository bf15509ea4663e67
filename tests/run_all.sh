#!/usr/bin/env bash
# The whole kvfs test suite, as CI runs it (.ci/run):
#   1. installs the dependencies (packaging/install-deps.sh --test; fast when present),
#   2. builds with AddressSanitizer + UBSan in build-asan/, and the optimised daemon, whose .deb
#      it installs, mounts and purges (tests/ci/deb_install_test.sh),
#   3. starts a private Ceph RGW on free loopback ports (tests/s3server/rgw.sh), stopped on exit,
#   4. runs every test through ctest with S3 and FUSE required (a missing one fails, never skips),
#   5. the engines' own tests (tests/engines/), the container tests (tests/containers/: kvfs's
#      image from Debian packages, the Kubernetes recipe's pod under podman), the thread-safety
#      and ThreadSanitizer builds, and the fuzzers.
# usage: tests/run_all.sh [extra ctest args, e.g. -R Conformance]
# env:   KVFS_TEST_S3_ENDPOINT set   reuse that server (with KVFS_TEST_S3_ACCESS_KEY/SECRET_KEY);
#                                    it must accept 1024-byte keys (RGW: osd max object name len
#                                    >= ~1100, as rgw.sh sets) or LongKeys/s3 fails
#        KVFS_BUILD_DIR              build dir (default <repo>/build-asan)
#        KVFS_SKIP_DEPS=1            do not run install-deps.sh
#        KVFS_JOBS / KVFS_CTEST_JOBS build / test parallelism (default 2 / 2)
#        KVFS_TEST_TIMEOUT           per-test limit in seconds (default 300)
#        KVFS_SKIP_ENGINES=1         do not run the engines' own tests (tests/engines/)
#        KVFS_ENGINE_VENV            where their virtual environment is cached (tests/engines/venv.sh)
#        KVFS_SKIP_CONTAINERS=1      do not run the container tests (tests/containers/)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${KVFS_BUILD_DIR:-$ROOT/build-asan}
JOBS=${KVFS_JOBS:-2}
CTEST_JOBS=${KVFS_CTEST_JOBS:-2}
TEST_TIMEOUT=${KVFS_TEST_TIMEOUT:-300}
T0=$(date +%s)
say() { echo "== run_all [$(( $(date +%s) - T0 ))s] $*"; }

# --- 1. dependencies ---
if [ -z "${KVFS_SKIP_DEPS:-}" ]; then
  say "dependencies"
  bash "$ROOT/packaging/install-deps.sh" --test
fi

# --- 2. sanitizer build ---
say "configure + build $BUILD (ASan + UBSan)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKVFS_SANITIZE=ON -DKVFS_BUILD_TESTS=ON >/dev/null
ninja -C "$BUILD" -j"$JOBS"

# The shipped (optimised) daemon too: GCC warns differently at -O2, and warnings are errors.
say "build $ROOT/build-release/kvfs (RelWithDebInfo, as packaging/quickstart.sh builds it)"
cmake -S "$ROOT" -B "$ROOT/build-release" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKVFS_BUILD_TESTS=OFF >/dev/null
ninja -C "$ROOT/build-release" -j"$JOBS" kvfs
# Nothing test-only in the shipped binary (the S3 admin helpers, the fakes), checked with nm.
bash "$ROOT/tests/src/no_test_code.sh" "$ROOT/build-release/kvfs"
# The .deb of that build: install, mount -t fuse.kvfs and from fstab, use, purge.
say "package: build, install, mount, purge (tests/ci/deb_install_test.sh)"
KVFS_DEB_BUILD_DIR="$ROOT/build-release" bash "$ROOT/tests/ci/deb_install_test.sh"

# --- 3. S3 server ---
RGW_STARTED=
stop_rgw() {
  if [ -n "$RGW_STARTED" ]; then
    say "stopping RGW ($KVFS_CEPH_DIR)"
    bash "$ROOT/tests/s3server/rgw.sh" stop || true
  fi
}
trap stop_rgw EXIT
trap 'exit 130' INT TERM

if [ -n "${KVFS_TEST_S3_ENDPOINT:-}" ]; then
  say "reusing S3 server $KVFS_TEST_S3_ENDPOINT"
else
  # The usual ports when free, else free ones: a developer's server may hold 7480/3300/6789.
  read -r RGW_PORT MON_V2 MON_V1 < <(python3 - <<'PY'
import socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
want = [7480, 3300, 6789]
if not all(free(p) for p in want):
    socks = [socket.socket() for _ in want]
    for s in socks: s.bind(("127.0.0.1", 0))
    want = [s.getsockname()[1] for s in socks]
    for s in socks: s.close()
print(*want)
PY
  )
  export KVFS_RGW_PORT=$RGW_PORT KVFS_MON_PORT_V2=$MON_V2 KVFS_MON_PORT_V1=$MON_V1
  export KVFS_CEPH_DIR=${KVFS_CEPH_DIR:-/tmp/kvfs-ceph-run-$$}
  say "starting RGW on 127.0.0.1:$RGW_PORT (monitor $MON_V2/$MON_V1, dir $KVFS_CEPH_DIR)"
  RGW_STARTED=1
  bash "$ROOT/tests/s3server/rgw.sh" start
  export KVFS_TEST_S3_ENDPOINT=http://127.0.0.1:$RGW_PORT
  export KVFS_TEST_S3_ACCESS_KEY=${KVFS_RGW_ACCESS_KEY:-TESTACCESSKEY0000001}
  export KVFS_TEST_S3_SECRET_KEY=${KVFS_RGW_SECRET_KEY:-testsecretkey0000000000000000000000000001}
fi
export KVFS_TEST_S3_REGION=${KVFS_TEST_S3_REGION:-us-east-1}
export KVFS_REQUIRE_S3=1 KVFS_REQUIRE_FUSE=1
# install-deps.sh built libfuse 3.17 (packaging/build-libfuse.sh): hits must be passthrough opens.
export KVFS_REQUIRE_PASSTHROUGH=${KVFS_REQUIRE_PASSTHROUGH:-1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
[ -e /dev/fuse ] || say "WARNING: /dev/fuse is missing: FUSE tests will fail (KVFS_REQUIRE_FUSE=1)"

# --- 4. tests ---
say "ctest (timeout ${TEST_TIMEOUT}s per test, -j$CTEST_JOBS)"
rc=0
ctest --test-dir "$BUILD" --output-on-failure --no-tests=error --timeout "$TEST_TIMEOUT" \
  -j"$CTEST_JOBS" "$@" || rc=$?
# The engines' own code (LMCache, NIXL, vLLM, SGLang from PyPI, pinned; venv cached outside the
# clone) through two mounts of the optimised daemon on this RGW (tests/engines/).
if [ -z "${KVFS_SKIP_ENGINES:-}" ]; then
  say "engines' own tests (tests/engines/run.sh)"
  bash "$ROOT/tests/engines/run.sh" "$ROOT/build-release/kvfs" || rc=$?
fi
if [ -z "${KVFS_SKIP_CONTAINERS:-}" ]; then
  # kvfs's image from Debian packages, the Kubernetes recipe's pod under podman, faults.
  say "containers (tests/containers/run.sh)"
  bash "$ROOT/tests/containers/run.sh" || rc=$?
fi
bash "$ROOT/tests/ci/thread_safety.sh" || rc=$?  # clang -Wthread-safety -Werror, front end only
# ThreadSanitizer: unit, concurrency and integration tests. The integration tests' directory-store
# twins are left out here: the FUSE adapter, the write path and the daemon they run are the same
# as their S3 twins' (which run), and the directory store's own concurrency is its unit tests'.
bash "$ROOT/tests/ci/tsan.sh" -E '^integration_.*_dir$' || rc=$?
[ "${KVFS_FUZZ_SECONDS:-30}" = 0 ] || bash "$ROOT/tests/fuzz/run.sh" || rc=$?  # libFuzzer, 30 s each
if [ "$rc" -eq 0 ]; then say "PASSED"; else say "FAILED (ctest exit $rc)"; fi
exit "$rc"
