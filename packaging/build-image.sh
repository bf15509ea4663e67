#!/usr/bin/env bash
# Builds the kvfs container image from Debian's packages alone and loads it into podman:
#   packaging/build-image.sh [--deb FILE] [--tag NAME] [--out FILE.tar]
#
# mmdebstrap lays out a minimal Debian 12 (bookworm) root with the kvfs package
# (packaging/build-deb.sh builds it unless --deb names one), ca-certificates (TLS to the store)
# and curl (what podman's kube play runs for an httpGet probe); `podman import` makes it an image
# whose entrypoint is `kvfs -f` (foreground: the container's life is the mount's). No Dockerfile
# and no base image from a registry: every file comes from a Debian package or from this
# repository. The tarball (--out) is what another runtime imports (`docker import`, `ctr import`
# after conversion, a registry push with skopeo).
# Default tag: localhost/kvfs:VERSION. Needs: mmdebstrap, podman (packaging/install-deps.sh
# --test), root, and Debian's mirror (http://deb.debian.org/debian or KVFS_DEBIAN_MIRROR). ~1 min.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VERSION=$(sed -n 's/^project(kvfs VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
DEB= TAG=localhost/kvfs:$VERSION OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) DEB=$2; shift 2 ;;
    --tag) TAG=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--deb FILE] [--tag NAME] [--out FILE.tar]" >&2; exit 2 ;;
  esac
done
for tool in mmdebstrap podman; do
  command -v "$tool" >/dev/null || {
    echo "build-image: $tool is missing (packaging/install-deps.sh --test installs it)" >&2
    exit 1
  }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
chmod 755 "$WORK"  # mmdebstrap's hooks read the .deb from inside the new root
if [ -z "$DEB" ]; then
  bash "$ROOT/packaging/build-deb.sh" "$WORK" >/dev/null
  DEB=$(ls "$WORK"/kvfs_*.deb)
fi
cp "$DEB" "$WORK/kvfs.deb"
[ -n "$OUT" ] || OUT=$WORK/kvfs-image.tar
# path-exclude: documentation, man pages and translations are not needed in a container.
mmdebstrap --mode=root --variant=minbase --quiet \
  --include=ca-certificates,curl --include="$WORK/kvfs.deb" \
  --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  bookworm "$OUT" "${KVFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
podman import --quiet --change 'ENTRYPOINT ["kvfs", "-f"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "LABEL org.opencontainers.image.version=$VERSION" \
  --change 'LABEL org.opencontainers.image.title=kvfs' "$OUT" "$TAG" >/dev/null
echo "build-image: $TAG ($(du -m "$OUT" | cut -f1) MiB, from $(basename "$DEB"))"
