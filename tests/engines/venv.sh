#!/usr/bin/env bash
# Builds, once, the Python environment in which tests/engines/run.sh runs the inference engines'
# own code: lmcache 0.5.6 + nixl 1.5.1 with every dependency (requirements.lock, the whole closure,
# pinned), vllm 0.33.0 and sglang 0.5.23 without their dependencies (they pin torch versions other
# than lmcache's; their storage modules need only the few modules the lock adds), and the tests
# of LMCache's source distribution (tests/ and pytest.ini only, so they import the installed
# wheel, never the sdist's source tree).
#
# usage: tests/engines/venv.sh            prints the venv's path on the last line of stdout
# env:   KVFS_ENGINE_VENV     where (default /var/cache/kvfs/engines-venv: outside the clone, so
#                             CI reuses it between runs; about 8 GB)
#        KVFS_ENGINE_PYTHON   the interpreter (default /usr/bin/python3, Debian 12's 3.11)
# A stamp file records what the venv was built from (the pins, the interpreter);
# while it matches nothing is done, so a rebuild happens only when a pin changes. A build that
# did not finish leaves no stamp and is redone from scratch.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VENV=${KVFS_ENGINE_VENV:-/var/cache/kvfs/engines-venv}
PY=${KVFS_ENGINE_PYTHON:-/usr/bin/python3}
LOCK=$HERE/requirements.lock
NODEPS=(vllm==0.33.0 sglang==0.5.23)  # --no-deps: see the header
LMCACHE=lmcache==0.5.6
# The sdist is pinned by content too: a re-uploaded file under the same version is refused.
SDIST_SHA256=d6951e60ce8818a76aa42d0866a4ba85f1c95cd919355fff30ff24dcc3243f1e
STAMP=$VENV/.kvfs-engines-stamp
T0=$(date +%s)
say() { echo "[engines/venv.sh $(( $(date +%s) - T0 ))s] $*" >&2; }

# Debian packages: the interpreter and its venv module; curl and fuse3 are run.sh's (bucket
# creation, fusermount3). Only when one is missing, so a warm machine makes no apt call.
need=()
for p in python3 python3-venv python3-dev curl fuse3; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "apt-get install ${need[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

# The modules the tests and checks use import, from the venv (a missing dependency fails here,
# not in the middle of a run), and lmcache is the wheel. Run on every reuse too: a venv whose
# stamp matches but whose packages were damaged (a partial cleanup, a disk error) would otherwise
# turn whole test files into module-level skips, and the run into fewer tests.
check_imports() {
  (cd "$VENV/src/${LMCACHE/==/-}" && "$VENV/bin/python" - >&2) <<'PY'
import importlib, os, sys
for m in ["lmcache", "lmcache.v1.distributed.l2_adapters.fs_l2_adapter", "nixl._api",
          "lmcache.v1.storage_backend.local_disk_backend", "pytest",
          "vllm.v1.kv_offload.tiering.fs.manager", "sglang.srt.mem_cache.hicache_storage",
          "sglang.srt.mem_cache.storage.file.lru_file_evictor"]:
    importlib.import_module(m)
import lmcache
assert lmcache.__file__.startswith(sys.prefix), "lmcache imported from %s" % lmcache.__file__
print("imports ok; lmcache from", os.path.dirname(lmcache.__file__))
PY
}

# What the venv is made of; a change to any of it (not to comments here) means a rebuild.
want=$( { cat "$LOCK"; echo "${NODEPS[*]} $LMCACHE $SDIST_SHA256 layout=1";
  "$PY" -c 'import sys; print(sys.version, sys.executable)'; } | sha256sum | cut -c1-32)
mkdir -p "$(dirname "$VENV")"
# One builder at a time (two CI jobs, or a developer and CI, on one machine).
exec 9>"$VENV.lock"
flock 9
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  if check_imports; then
    say "reusing $VENV"
    echo "$VENV"
    exit 0
  fi
  say "$VENV matches its pins but its imports fail: building it again"
fi

avail=$(df -Pk "$(dirname "$VENV")" | awk 'NR==2 {print $4}')
[ "$avail" -gt $((12 * 1024 * 1024)) ] ||
  { say "need 12 GiB free under $(dirname "$VENV") (have $((avail / 1024 / 1024)) GiB)"; exit 1; }

say "building $VENV with $("$PY" -V) (first time ~6 min, ~8 GB)"
rm -rf "$VENV"
"$PY" -m venv "$VENV"
P=$VENV/bin/python
# --no-cache-dir: the wheels (torch and CUDA libraries, ~6 GB) are not kept a second time in
# ~/.cache; --no-deps: the lock is the whole closure, so pip resolves nothing and adds nothing.
PIP=("$P" -m pip --disable-pip-version-check --no-cache-dir -q)
"${PIP[@]}" install --no-deps -r "$LOCK" >&2
"${PIP[@]}" install --no-deps "${NODEPS[@]}" >&2

# LMCache's tests come from its sdist (the wheel has none). Its metadata step imports torch,
# hence --no-build-isolation with the torch just installed.
src=$VENV/src
mkdir -p "$src"
"${PIP[@]}" download --no-deps --no-binary :all: --no-build-isolation "$LMCACHE" -d "$src" >&2
tarball=$src/${LMCACHE/==/-}.tar.gz
echo "$SDIST_SHA256  $tarball" | sha256sum -c --quiet - >&2
# Only tests/ and pytest.ini: tests/__init__.py makes pytest put the sdist's root on sys.path,
# where its lmcache/ source tree (without the compiled extensions) would shadow the wheel.
tar -xzf "$tarball" -C "$src" "${LMCACHE/==/-}/tests" "${LMCACHE/==/-}/pytest.ini"
rm -f "$tarball"

check_imports
# Every installed distribution's requirements are met for this interpreter (a dependency behind
# a marker, like redis's async-timeout below Python 3.11.3, is caught here), except vllm's and
# sglang's own pins, which --no-deps leaves unmet on purpose.
unmet=$("$P" -m pip check 2>&1 | grep -v -E '^(vllm|sglang) ' | grep -v '^No broken' || true)
[ -z "$unmet" ] || { say "unmet requirements: $unmet"; exit 1; }

echo "$want" >"$STAMP"
say "done: $(du -sh "$VENV" | cut -f1)"
echo "$VENV"
