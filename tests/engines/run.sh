#!/usr/bin/env bash
# The inference engines' own code (LMCache 0.5.6 and its tests, NIXL 1.5.1, vLLM 0.33.0's fs
# tier, SGLang 0.5.23's HiCacheFile; installed from PyPI, pinned, unchanged) through two kvfs
# mounts of one bucket. See run.py for what runs and docs/engines.md ("The engines' own tests in
# CI") for what is left out and why.
#
# usage: tests/engines/run.sh [KVFS_BINARY] [--only GROUP,...] [--census FILE.json]
#        --census: each group under strace, which tests did file I/O on the mount (needs strace)
# env:   KVFS_TEST_S3_ENDPOINT, KVFS_TEST_S3_ACCESS_KEY, KVFS_TEST_S3_SECRET_KEY,
#        KVFS_TEST_S3_REGION   the S3 server (tests/run_all.sh sets them after starting RGW)
#        KVFS_BIN              the daemon when no argument is given (default build-release/kvfs)
#        KVFS_ENGINE_VENV      the cached virtual environment (venv.sh)
# Ends with one line `engines: N passed, N failed, N skipped`; exit 1 when anything failed,
# 77 when FUSE or the S3 endpoint is missing (fails instead with KVFS_REQUIRE_FUSE/_S3=1).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
KVFS=${KVFS_BIN:-$ROOT/build-release/kvfs}
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then KVFS=$1; shift; fi
[ -x "$KVFS" ] || { echo "engines: no kvfs binary at $KVFS"; exit 1; }

VENV=$(bash "$HERE/venv.sh" | tail -n 1)
exec "$VENV/bin/python" "$HERE/run.py" --kvfs "$KVFS" --sdist "$VENV/src/lmcache-0.5.6" "$@"
