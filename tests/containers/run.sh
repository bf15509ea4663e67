#!/usr/bin/env bash
# The container tests: kvfs's image from Debian packages (packaging/build-image.sh), a test
# engine image (Debian's python3 and tests/integration/lmcache_disk_replay.py, nothing else), then
# tests/containers/container_test.py against KVFS_TEST_S3_ENDPOINT (tests/run_all.sh's RGW).
#   tests/containers/run.sh [--only case,...]
# A missing tool or server fails: a skip counts as a failure. podman runs with this directory's
# containers.conf (runc, cgroupfs, limits this machine kind allows). Root only. ~3 min.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T0=$(date +%s)
say() { echo "== containers [$(( $(date +%s) - T0 ))s] $*"; }
export CONTAINERS_CONF=$ROOT/tests/containers/containers.conf
[ "$(id -u)" -eq 0 ] || { echo "containers: run as root" >&2; exit 1; }
: "${KVFS_TEST_S3_ENDPOINT:?containers: KVFS_TEST_S3_ENDPOINT is not set}"
WORK=$(mktemp -d /tmp/kvfs-ctr-images.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"

say "kvfs image (packaging/build-image.sh, the .deb of ${KVFS_DEB_BUILD_DIR:-build-release})"
KVFS_DEB_BUILD_DIR=${KVFS_DEB_BUILD_DIR:-$ROOT/build-release} \
  bash "$ROOT/packaging/build-deb.sh" "$WORK" >/dev/null
bash "$ROOT/packaging/build-image.sh" --deb "$(ls "$WORK"/kvfs_*.deb)" --tag localhost/kvfs:test

say "engine test image (bookworm minbase + python3 + lmcache_disk_replay.py)"
mmdebstrap --mode=root --variant=minbase --quiet --include=python3 \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='mkdir -p "$1/opt/kvfs-test"' \
  --customize-hook="copy-in $ROOT/tests/integration/lmcache_disk_replay.py /opt/kvfs-test" \
  bookworm "$WORK/engine.tar" "${KVFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
podman import --quiet --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  "$WORK/engine.tar" localhost/kvfs-test-engine:test >/dev/null

say "tests/containers/container_test.py"
rc=0
/usr/bin/python3 "$ROOT/tests/containers/container_test.py" --kvfs-image localhost/kvfs:test \
  --engine-image localhost/kvfs-test-engine:test "$@" || rc=$?
say "$([ $rc -eq 0 ] && echo PASSED || echo "FAILED ($rc)")"
exit $rc
