#!/usr/bin/env bash
# Builds the Debian package: packaging/build-deb.sh OUTDIR -> OUTDIR/kvfs_<version>_<arch>.deb
#
# An optimised build (RelWithDebInfo, stripped in the package) laid out by hand and packed with
# dpkg-deb; dpkg-shlibdeps works out the library dependencies from the binary, so they follow
# whatever Debian release builds it. What the package holds:
#   /usr/bin/kvfs                         the daemon and its subcommands
#   /sbin/mount.fuse.kvfs                 -> mount.fuse3: `mount -t fuse.kvfs` and fstab lines
#                                         (mount.fuse3 takes the type from its own name and runs
#                                         `kvfs SOURCE MOUNTPOINT -o OPTIONS`)
#   /usr/share/man/man8/kvfs.8.gz         man page
#   /etc/kvfs/kvfs.yaml.example           commented example config (a conffile)
#   /lib/systemd/system/kvfs@.service     one unit instance per mount point
#   /usr/share/doc/kvfs/                  copyright, changelog, fstab example, README, docs/
# The maintainer address and homepage are placeholders until the project has real ones.
# Needs: the build dependencies (packaging/install-deps.sh), dpkg-dev. Runs as any user.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
BUILD=${KVFS_DEB_BUILD_DIR:-$ROOT/build-deb}
JOBS=${KVFS_JOBS:-2}

VERSION=$(sed -n 's/^project(kvfs VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
[ -n "$VERSION" ] || { echo "build-deb: no version in CMakeLists.txt" >&2; exit 1; }
ARCH=$(dpkg --print-architecture)

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVFS_BUILD_TESTS=OFF \
  >/dev/null
ninja -C "$BUILD" -j"$JOBS" kvfs

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
P=$STAGE/kvfs
DOC=$P/usr/share/doc/kvfs
install -d "$P/DEBIAN" "$P/usr/bin" "$P/sbin" "$P/usr/share/man/man8" "$P/etc/kvfs" \
  "$P/lib/systemd/system" "$DOC"
install -m 0755 -s "$BUILD/kvfs" "$P/usr/bin/kvfs"
ln -s mount.fuse3 "$P/sbin/mount.fuse.kvfs"
gzip -9n <"$ROOT/man/kvfs.8" >"$P/usr/share/man/man8/kvfs.8.gz"
install -m 0644 "$ROOT/packaging/kvfs.yaml.example" "$P/etc/kvfs/kvfs.yaml.example"
install -m 0644 "$ROOT/packaging/kvfs@.service" "$P/lib/systemd/system/kvfs@.service"
install -m 0644 "$ROOT/packaging/fstab.example" "$DOC/fstab.example"
gzip -9n <"$ROOT/README.md" >"$DOC/README.md.gz"
# The README links to these (guarantees, tuning, write path, engines, ...).
mkdir -p "$DOC/docs"
for d in "$ROOT"/docs/*.md; do gzip -9n <"$d" >"$DOC/docs/$(basename "$d").gz"; done
cat >"$DOC/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: kvfs
Comment: kvfs has not chosen a license yet; until it does, this package is for evaluation.

Files: *
Copyright: the kvfs authors
License: unspecified
 No license has been granted yet.
EOF
DATE=$(date -R -d "@$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)")
printf 'kvfs (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- kvfs maintainers <kvfs-maintainers@example.org>  %s\n' \
  "$VERSION" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo source)" "$DATE" |
  gzip -9n >"$DOC/changelog.gz"  # a native package: changelog.gz
echo /etc/kvfs/kvfs.yaml.example >"$P/DEBIAN/conffiles"

# Library dependencies from the binary (dpkg-shlibdeps wants a debian/control to read).
mkdir -p "$STAGE/debian"
printf 'Source: kvfs\n\nPackage: kvfs\nArchitecture: any\n' >"$STAGE/debian/control"
SHLIBS=$(cd "$STAGE" && dpkg-shlibdeps -O -e kvfs/usr/bin/kvfs 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$SHLIBS" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
SIZE=$(du -sk --exclude=DEBIAN "$P" | cut -f1)
cat >"$P/DEBIAN/control" <<EOF
Package: kvfs
Version: $VERSION
Architecture: $ARCH
Maintainer: kvfs maintainers <kvfs-maintainers@example.org>
Installed-Size: $SIZE
Depends: $SHLIBS, fuse3
Suggests: ca-certificates
Section: utils
Priority: optional
Homepage: https://github.com/kvfs/kvfs
Description: FUSE filesystem keeping LLM KV-cache chunks in S3-compatible object storage
 kvfs mounts an S3-compatible bucket prefix (AWS S3, S3 Express One Zone,
 CoreWeave AI Object Storage, Ceph RGW, MinIO) as a directory of KV-cache
 chunk files. Inference engines point their existing local-disk KV tier
 (LMCache, vLLM/llm-d, SGLang HiCache) at the mount to persist and share
 chunks across restarts and nodes. Reads go through a local LRU cache;
 writes are accepted only as whole chunks and uploaded on close.
EOF
DEB=$OUT/kvfs_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$P" "$DEB" >/dev/null
echo "$DEB"
