#!/usr/bin/env bash
# The README's main job on a fresh Debian 12 machine: install the dependencies, build kvfs, mount
# the embedded default store (a local directory, since no S3 endpoint is configured) and use it
# the way an inference engine's local-disk KV-cache backend does. Run as root (apt, /dev/fuse).
#
# Env: KVFS_DEMO_DIR (default /var/tmp/kvfs-demo) holds the store, the cache and the mount point.
#      KVFS_SOURCE overrides the store (e.g. s3://bucket/prefix with AWS_* variables set).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

bash packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVFS_BUILD_TESTS=OFF >/dev/null
ninja -C build -j2 kvfs

demo=${KVFS_DEMO_DIR:-/var/tmp/kvfs-demo}
source=${KVFS_SOURCE:-file://$demo/store}
mnt=$demo/mnt
mkdir -p "$mnt"
mountpoint -q "$mnt" && fusermount3 -u "$mnt"

echo "== mounting $source at $mnt"
build/kvfs "$source" "$mnt" -o "cache_dir=$demo/cache,cache_size=1GiB"
trap 'fusermount3 -u "$mnt" 2>/dev/null || true' EXIT

echo "== engine-style I/O through the mount (LMCache local_disk and MP fs patterns)"
python3 tests/integration/lmcache_disk_replay.py "$mnt"

echo "== what the mount shows"
ls -la "$mnt" | head -20
echo "== statfs"
stat -f "$mnt"
echo "== cache statistics"
build/kvfs stats "$mnt" || true

fusermount3 -u "$mnt"
trap - EXIT
echo "== unmounted; $(find "$demo/store/objects" -type f ! -path '*kvfs-feed*' ! -path '*kvfs-tier*' | wc -l) chunk objects stay in the store $demo/store"
echo "kvfs quickstart finished OK"
