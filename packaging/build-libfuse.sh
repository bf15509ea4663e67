#!/usr/bin/env bash
# Builds libfuse 3.17.2 - the upstream source of Debian 13's fuse3 package, fetched from Debian's
# archive and checked against the SHA-256 its Sources index gives - as a static library in a cache
# directory outside the clone, where CMake looks for it (KVFS_LIBFUSE_PREFIX). Debian 12 ships
# libfuse 3.14, which cannot ask the kernel for FUSE passthrough (3.16+): with this build, cache
# hits are read by the kernel from the cache file with no work in the daemon (bench/ANALYSIS.md).
# Without it kvfs builds against the system's libfuse and serves hits itself.
# Needs meson, ninja and curl (packaging/install-deps.sh). Built once; reruns return at once.
# usage: packaging/build-libfuse.sh      env: KVFS_LIBFUSE_PREFIX (default below)
set -euo pipefail

VERSION=3.17.2
SHA256=3d932431ad94e86179e5265cddde1d67aa3bb2fb09a5bd35c641f86f2b5ed06f
URL=http://deb.debian.org/debian/pool/main/f/fuse3/fuse3_${VERSION}.orig.tar.gz
PREFIX=${KVFS_LIBFUSE_PREFIX:-/var/cache/kvfs/libfuse-$VERSION}

if [ -f "$PREFIX/lib/pkgconfig/fuse3.pc" ]; then
  echo "build-libfuse: libfuse $VERSION already in $PREFIX"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "build-libfuse: fetching $URL"
curl -fsSL --retry 3 -o "$work/src.tar.gz" "$URL"
# Over plain HTTP, as apt fetches it: the checksum is what makes it Debian's file.
echo "$SHA256  $work/src.tar.gz" | sha256sum -c --quiet -
tar -xzf "$work/src.tar.gz" -C "$work"
# Only the library: no fusermount3 (the system's fuse3 package has it), examples or tests.
meson setup "$work/build" "$work/fuse-$VERSION" --prefix="$PREFIX.partial" --libdir=lib \
  -Ddefault_library=static -Dbuildtype=release -Dutils=false -Dexamples=false -Dtests=false \
  -Dinitscriptdir= -Duseroot=false >"$work/meson.log" ||
  { cat "$work/meson.log" >&2; exit 1; }
ninja -C "$work/build" -j"${KVFS_JOBS:-2}" >"$work/ninja.log" || { cat "$work/ninja.log" >&2; exit 1; }
rm -rf "$PREFIX.partial"
ninja -C "$work/build" install >>"$work/ninja.log"
# The .pc file names the final prefix; the directory appears whole or not at all.
sed -i "s|$PREFIX.partial|$PREFIX|g" "$PREFIX.partial/lib/pkgconfig/fuse3.pc"
mkdir -p "$(dirname "$PREFIX")"
mv "$PREFIX.partial" "$PREFIX"
echo "build-libfuse: libfuse $VERSION built in $PREFIX"
