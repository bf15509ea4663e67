#!/usr/bin/env bash
# Installs what kvfs needs to build (and, with --test, to run its test suite against a real Ceph
# RADOS Gateway) on Debian 12. Runs as root (CI) or through sudo. Skips apt entirely when every
# package is already installed, so reruns take well under a second. Then builds libfuse 3.17 with
# FUSE passthrough (packaging/build-libfuse.sh: once, into /var/cache/kvfs; ~10 s).
# usage: packaging/install-deps.sh [--test]
set -euo pipefail

PKGS=(build-essential cmake ninja-build pkg-config git libfuse3-dev fuse3 libcurl4-openssl-dev
      libssl-dev libtinyxml2-dev libspdlog-dev libyaml-cpp-dev libisal-dev libmicrohttpd-dev
      nlohmann-json3-dev
      meson  # packaging/build-libfuse.sh
      libgtest-dev libgmock-dev
      libbenchmark-dev python3 ca-certificates curl)
TEST_PKGS=(ceph-mon ceph-osd ceph-mgr radosgw uuid-runtime
           clang-14 libclang-rt-14-dev  # clang: tests/ci/thread_safety.sh; libFuzzer: tests/fuzz/run.sh
           clang-format-14  # the style check before a commit (README, Development)
           dpkg-dev lintian  # packaging/build-deb.sh (dpkg-shlibdeps) and its check
           nghttp2-proxy openssl  # TLS with a private CA and HTTP/2: tls_http2_test.py
           fio  # mount_edges_test.py case fio_default: fio's default write and read jobs
           # Containers (packaging/build-image.sh, tests/containers/): podman runs with runc (crun
           # refuses this machine kind's hybrid cgroups) and catatonit (kube play's pause).
           podman runc catatonit mmdebstrap python3-yaml)

case "${1:-}" in
  --test) PKGS+=("${TEST_PKGS[@]}") ;;
  "") ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
  # dpkg -s alone also matches removed-but-configured packages; check the state line.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root (or install sudo)" >&2; exit 1; }
  SUDO=(sudo)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}"
fi
# Without it kvfs still builds (against the system's libfuse 3.14) and serves hits itself.
"${SUDO[@]}" bash "$(dirname "${BASH_SOURCE[0]}")/build-libfuse.sh" ||
  echo "install-deps: libfuse 3.17 not built: kvfs builds without FUSE passthrough" >&2
