#!/usr/bin/env bash
# The package's whole life on this machine: build the .deb, install it with apt, mount with
# `mount -t fuse.kvfs` and from an fstab line (`mount -T FILE DIR`), use the mount as an engine
# would, unmount, purge, and check that nothing is left running, mounted or installed.
# Uses a local directory store (file://), so it needs no S3 server. Root only (apt, mount).
# usage: tests/ci/deb_install_test.sh   (env KVFS_DEB_BUILD_DIR: reuse that release build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T0=$(date +%s)
say() { echo "== deb_install [$(( $(date +%s) - T0 ))s] $*"; }
fail() { echo "== deb_install: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "deb_install_test: needs root" >&2; exit 1; }

WORK=$(mktemp -d /tmp/kvfs-deb-XXXXXX)
INSTALLED=0  # 1 while the package this test installed is on the machine
cleanup() {
  for m in "$WORK/mnt-t" "$WORK/mnt-f"; do
    mountpoint -q "$m" 2>/dev/null && umount "$m" 2>/dev/null || true
  done
  # A failed run must not leave its package behind: the next run would refuse to start.
  if [ "$INSTALLED" = 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y kvfs >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if dpkg-query -W -f='${Status}' kvfs 2>/dev/null | grep -q 'install ok installed'; then
  fail "a kvfs package is already installed here; this test installs and purges its own"
fi

say "build the package"
DEB=$(bash "$ROOT/packaging/build-deb.sh" "$WORK/out" | tail -1)
[ -f "$DEB" ] || fail "build-deb.sh made no package"
say "built $(basename "$DEB") ($(du -k "$DEB" | cut -f1) KiB)"
dpkg-deb --info "$DEB" | sed -n 's/^ Depends:/  depends:/p'
if command -v lintian >/dev/null; then
  # Errors fail the test; the warnings left are reported (no license yet, no upstream changelog).
  lintian --fail-on error "$DEB" || fail "lintian errors"
fi

say "apt install ./$(basename "$DEB")"
INSTALLED=1
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$DEB" >/dev/null
[ "$(command -v kvfs)" = /usr/bin/kvfs ] || fail "kvfs is not /usr/bin/kvfs"
[ -L /sbin/mount.fuse.kvfs ] || fail "no mount helper /sbin/mount.fuse.kvfs"
[ -f /etc/kvfs/kvfs.yaml.example ] || fail "no /etc/kvfs/kvfs.yaml.example"
[ -f /lib/systemd/system/kvfs@.service ] || fail "no systemd unit"
man -w kvfs >/dev/null 2>&1 || [ -f /usr/share/man/man8/kvfs.8.gz ] || fail "no man page"

STORE=$WORK/store
mkdir -p "$STORE" "$WORK/mnt-t" "$WORK/mnt-f"
use_mount() {  # MOUNTPOINT NAME: write a chunk, read it back, check stats
  local m=$1 name=$2
  head -c $((3 * 1024 * 1024 + 7)) /dev/urandom >"$WORK/$name"
  cp "$WORK/$name" "$m/$name"
  cmp "$WORK/$name" "$m/$name" || fail "$name reads back wrong through $m"
  # Captured first: grep -q stops reading at its match, and under pipefail the writer's
  # SIGPIPE or EPIPE would fail the pipeline.
  local stats
  stats=$(kvfs stats "$m") || fail "kvfs stats $m"
  grep -q '^kvfs_read_opens' <<<"$stats" || fail "kvfs stats $m: no kvfs_read_opens"
}

say "mount -t fuse.kvfs"
mount -t fuse.kvfs "file://$STORE" "$WORK/mnt-t" -o "cache_dir=$WORK/cache-t,cache_size=256MiB"
mountpoint -q "$WORK/mnt-t" || fail "mount -t fuse.kvfs did not mount"
use_mount "$WORK/mnt-t" a.bin
umount "$WORK/mnt-t"

say "mount from an fstab line (mount -T)"
cat >"$WORK/kvfs.yaml" <<EOF
cache_dir: $WORK/cache-f
cache_size: 256MiB
metrics_listen: 127.0.0.1:19464
EOF
printf 'file://%s  %s  fuse.kvfs  _netdev,nofail,config=%s  0 0\n' \
  "$STORE" "$WORK/mnt-f" "$WORK/kvfs.yaml" >"$WORK/fstab"
mount -T "$WORK/fstab" "$WORK/mnt-f"
mountpoint -q "$WORK/mnt-f" || fail "the fstab line did not mount"
cmp "$WORK/a.bin" "$WORK/mnt-f/a.bin" || fail "the first mount's chunk reads back wrong"
use_mount "$WORK/mnt-f" b.bin
# Watched by Prometheus: the fstab mount's config turns the endpoint on.
page=$(curl -fsS http://127.0.0.1:19464/metrics) || fail "GET http://127.0.0.1:19464/metrics"
grep -q '^kvfs_read_opens_total [1-9]' <<<"$page" ||
  fail "no kvfs_read_opens_total at http://127.0.0.1:19464/metrics"
umount "$WORK/mnt-f"
# The two chunks (the fleet feed's own entries, "~kvfs-feed" keys, are not chunks).
[ "$(find "$STORE/objects" -type f ! -path '*kvfs-feed*' ! -path '*kvfs-tier*' | wc -l)" -eq 2 ] ||
  fail "expected 2 objects in the store"

say "purge"
DEBIAN_FRONTEND=noninteractive apt-get purge -y kvfs >/dev/null
INSTALLED=0
for f in /usr/bin/kvfs /sbin/mount.fuse.kvfs /etc/kvfs/kvfs.yaml.example \
  /lib/systemd/system/kvfs@.service /usr/share/man/man8/kvfs.8.gz; do
  [ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f is left after purge"
done
# Daemons of the installed binary (other builds' daemons, e.g. of a test run, are not ours).
for p in /proc/[0-9]*; do
  case $(readlink "$p/exe" 2>/dev/null) in
    /usr/bin/kvfs*) fail "a kvfs daemon is still running: pid ${p#/proc/}" ;;
  esac
done
! grep -q " $WORK/" /proc/mounts || fail "a mount is left: $(grep " $WORK/" /proc/mounts)"
say "PASSED"
