#!/usr/bin/env bash
# The KV-chunk benchmark, side by side: kvfs, s3fs, rclone (cache off / full) and the raw limits
# (raw S3 with a native client, tmpfs with the same reader), on one RGW server in one run.
# See bench/README.md.
#
# usage: bench/run.sh [options]
#   --endpoint URL        use this running S3 server instead of starting RGW (tests/s3server/rgw.sh)
#   --ceph-conf FILE      ceph.conf of that server: deleted chunks are garbage-collected after each
#                         system (set automatically when run.sh starts the server)
#   --systems LIST        default kvfs,s3fs,rclone-off,rclone-full,raw-s3,tmpfs
#   --sizes LIST          chunk sizes in MiB (default 2,8,32,64)
#   --chunks N            chunks per size and thread count, buffered set (default 4)
#   --odirect-chunks N    chunks in the O_DIRECT set (default 2)
#   --ttfb-chunks N       cold chunks for time-to-first-byte (default 2)
#   --threads LIST        worker counts (default 1,4)
#   --reps N              repetitions (default 3)
#   --lookup-seconds S    duration of each lookup measurement (default 2)
#   --engines LIST        engine patterns measured too (bench/engines_bench.py: write, cold and
#                         warm read, missed lookups): llmd,sglang,gds,mp,vllm,sglang_dio,
#                         fastfile,dynamo,dynamo_path (default); none: skip
#   --engine-pages N      pages per engine and thread count (default 16)
#   --fleet yes|no        kvfs at scale too (bench/fleet_bench.py: 64 readers on one mount, names
#                         in one prefix up to 40k with 1M extrapolated, 4 mounts sharing chunks;
#                         default yes when kvfs runs)
#   --part-mib N          raw_s3 ranged-GET part size (default 8)
#   --kvfs PATH           kvfs binary (default: build/kvfs, build-bench/..., else built here)
#   --kvfs-cache-size B   kvfs cache_size in bytes (default 4294967296)
#   --kvfs-yaml FILE      more kvfs config lines (tuning: get_part_size, max_inflight, ...)
#   --out DIR             results dir (default bench/results/<date>)
#   --results-md FILE     report file (default bench/RESULTS.md; "-" = no report)
#   --no-install          do not apt-get install missing peers
#   --lmcache SHAPES      LMCache 0.5.6's own S3 adapter beside its fs adapter on kvfs after the
#                         runs (bench/lmcache_s3_vs_fs.py, its own RGW), CHUNKSxMIB each
#                         (default 16x32,64x8,256x2; none: skip; skipped without the engines'
#                         venv, tests/engines/venv.sh); its tables are appended to the report
#   --lmcache-variants L  kvfs variants of that step, NAME=OPT=V[:OPT=V] comma-separated
#                         (default kvfs=,kvfs-ptw=passthrough_writes=true)
#   --lmcache-request SHAPES
#                         after that, the same adapters in the flow LMCache's MP server runs
#                         (bench/lmcache_s3_vs_fs.py --flow request: one store task of a
#                         request's chunks, durable when the bucket lists them all; lookup and
#                         one load task on a fresh node), CHUNKSxMIB each (default
#                         16x32,64x8,256x2; none: skip); its tables are appended to the report
#   --lmcache-request-reps N       repetitions of that step (default 5, whatever --reps is)
#   --lmcache-request-variants L   its kvfs variants (default kvfs=,kvfs-wbf=write_back=false)
#   --idle-wait S         wait up to S seconds for the 1-minute load to fall below 0.4 per core
#                         before the runs and before each LMCache shape (default 600; 0: no wait)
#   --loopback-gbit N     cap the loopback interface at N Gbit/s for the run (tc tbf on lo,
#                         removed at exit): the store becomes network-bound, as a remote one
#                         is, instead of CPU-bound on the same cores. Loopback carries the
#                         client<->RGW and RGW<->OSD traffic, so each gets about half.
# env: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (default: the test server's keys), AWS_REGION.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/bench
BUILD=${KVFS_BENCH_BUILD_DIR:-$ROOT/build-bench}
CMDLINE="bench/run.sh $*"

ENDPOINT="" CEPH_CONF="" SYSTEMS=kvfs,s3fs,rclone-off,rclone-full,raw-s3,tmpfs
DEFAULT_SIZES=2,8,32,64 CHUNKS=4 ODIRECT_CHUNKS=2 TTFB_CHUNKS=2 THREADS=1,4 REPS=3 LOOKUP_SECONDS=2
PART_MIB=8 KVFS_BIN="" KVFS_CACHE_SIZE=4294967296 KVFS_YAML="" OUT="" RESULTS_MD=$BENCH/RESULTS.md INSTALL=1
SIZES=$DEFAULT_SIZES LMCACHE=16x32,64x8,256x2 LMCACHE_VARIANTS=kvfs=,kvfs-ptw=passthrough_writes=true IDLE_WAIT=600
LMCACHE_REQUEST=16x32,64x8,256x2 LMCACHE_REQUEST_REPS=5 LMCACHE_REQUEST_VARIANTS=kvfs=,kvfs-wbf=write_back=false
LOOPBACK_GBIT="" SHAPED=0 FLEET=yes ENGINES=llmd,llmd022,sglang,gds,mp,vllm,sglang_dio,fastfile,dynamo,dynamo_path ENGINE_PAGES=16
while [ $# -gt 0 ]; do
  case "$1" in
    --endpoint) ENDPOINT=$2; shift ;;
    --ceph-conf) CEPH_CONF=$2; shift ;;
    --systems) SYSTEMS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --chunks) CHUNKS=$2; shift ;;
    --odirect-chunks) ODIRECT_CHUNKS=$2; shift ;;
    --ttfb-chunks) TTFB_CHUNKS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --lookup-seconds) LOOKUP_SECONDS=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --engine-pages) ENGINE_PAGES=$2; shift ;;
    --fleet) FLEET=$2; shift ;;
    --part-mib) PART_MIB=$2; shift ;;
    --kvfs) KVFS_BIN=$2; shift ;;
    --kvfs-cache-size) KVFS_CACHE_SIZE=$2; shift ;;
    --kvfs-yaml) KVFS_YAML=$(realpath "$2"); shift ;;
    --out) OUT=$2; shift ;;
    --results-md) RESULTS_MD=$2; shift ;;
    --no-install) INSTALL=0 ;;
    --loopback-gbit) LOOPBACK_GBIT=$2; shift ;;
    --lmcache) LMCACHE=$2; shift ;;
    --lmcache-variants) LMCACHE_VARIANTS=$2; shift ;;
    --lmcache-request) LMCACHE_REQUEST=$2; shift ;;
    --lmcache-request-reps) LMCACHE_REQUEST_REPS=$2; shift ;;
    --lmcache-request-variants) LMCACHE_REQUEST_VARIANTS=$2; shift ;;
    --idle-wait) IDLE_WAIT=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-TESTACCESSKEY0000001}
export AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-testsecretkey0000000000000000000000000001}
export AWS_REGION=${AWS_REGION:-us-east-1}
RUN_ID=$(date +%Y%m%d-%H%M%S)
OUT=${OUT:-$BENCH/results/$RUN_ID}
mkdir -p "$OUT/logs"
RESULTS=$OUT/results.jsonl
WORK=$(mktemp -d /tmp/kvbench.XXXXXX)
SHM=/dev/shm/kvbench-$$
T0=$(date +%s)
STARTED_RGW=0

say() { echo "[run.sh $(date +%T) +$(($(date +%s) - T0))s] $*"; }
has() { [[ ",$SYSTEMS," == *",$1,"* ]]; }
note() {  # note SYSTEM TEXT: a skipped system or other remark, kept in the results
  say "$1: $2"
  python3 -c 'import json,sys,time; print(json.dumps({"ts": round(time.time(), 3),
    "system": sys.argv[1], "phase": "note", "note": sys.argv[2]}))' "$1" "$2" >>"$RESULTS"
}

# Benchmarks are taken on an idle machine: a build or another run just before leaves a load that
# slows the first system measured. Waits (up to --idle-wait s) for the 1-minute load average to
# fall below 0.4 per core; the load at each start is recorded either way.
wait_idle() {  # wait_idle WHAT
  local limit waited=0
  limit=$(awk -v n="$(nproc)" 'BEGIN{print 0.4 * n}')
  while [ "$waited" -lt "$IDLE_WAIT" ] &&
    awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v m="$limit" 'BEGIN{exit !(l >= m)}'; do
    [ "$waited" = 0 ] && say "$1: waiting for the load ($(cut -d' ' -f1 /proc/loadavg)) to fall below $limit"
    sleep 5
    waited=$((waited + 5))
  done
}

# --- cleanup: unmount whatever we mounted, stop the server we started ---
MOUNTED=()
cleanup() {
  for m in "${MOUNTED[@]}"; do unmount_dir "$m" 2>/dev/null; done
  rm -rf "$WORK" "$SHM"
  [ "$SHAPED" = 1 ] && tc qdisc del dev lo root 2>/dev/null
  if [ "$STARTED_RGW" = 1 ]; then
    say "stopping the benchmark's RGW"
    KVFS_CEPH_DIR=$CEPH_DIR KVFS_RGW_PORT=$RGW_PORT "$ROOT/tests/s3server/rgw.sh" stop \
      >>"$OUT/logs/rgw.log" 2>&1
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. peers and tools ---
# The report's chart needs matplotlib; Debian's package serves /usr/bin/python3, which may not be
# the python3 first on PATH (pyenv).
report_python() {
  for p in python3 /usr/bin/python3; do
    "$p" -c 'import matplotlib' 2>/dev/null && { echo "$p"; return 0; }
  done
  echo python3
  return 1
}
install_missing() {
  local pkgs=()
  has s3fs && ! command -v s3fs >/dev/null && pkgs+=(s3fs)
  { has rclone-off || has rclone-full; } && ! command -v rclone >/dev/null && pkgs+=(rclone)
  report_python >/dev/null || pkgs+=(python3-matplotlib)
  [ -n "$LOOPBACK_GBIT" ] && ! command -v tc >/dev/null && pkgs+=(iproute2)
  [ ${#pkgs[@]} -eq 0 ] && return
  if [ "$INSTALL" = 0 ]; then say "missing (not installing): ${pkgs[*]}"; return; fi
  say "installing ${pkgs[*]}"
  apt-get install -y "${pkgs[@]}" >>"$OUT/logs/apt.log" 2>&1 ||
    { apt-get update >>"$OUT/logs/apt.log" 2>&1 &&
      apt-get install -y "${pkgs[@]}" >>"$OUT/logs/apt.log" 2>&1; } ||
    say "apt-get install failed (see $OUT/logs/apt.log); affected systems will be skipped"
}
install_missing

# --- 2. native tools: raw_s3 (and kvfs when no binary is given) ---
build() {
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DKVFS_BUILD_BENCH=ON -DKVFS_BUILD_TESTS=OFF \
      >>"$OUT/logs/build.log" 2>&1 || return 1
  fi
  ninja -C "$BUILD" -j"$(nproc)" "$@" >>"$OUT/logs/build.log" 2>&1
}
RAW_S3=""
if has raw-s3; then
  if build raw_s3; then RAW_S3=$BUILD/bench/raw_s3
  elif build raw_s3_curl; then RAW_S3=$BUILD/bench/raw_s3_curl
    say "raw_s3 (kvfs S3 client) does not build; using raw_s3_curl (libcurl)"
  else say "raw_s3 does not build (see $OUT/logs/build.log)"
  fi
fi
if has kvfs && [ -z "$KVFS_BIN" ]; then
  for c in "$ROOT/build/kvfs" "$ROOT/build/src/kvfs" "$BUILD/kvfs" "$BUILD/src/kvfs"; do
    [ -x "$c" ] && { KVFS_BIN=$c; break; }
  done
  if [ -z "$KVFS_BIN" ] && build kvfs; then
    for c in "$BUILD/kvfs" "$BUILD/src/kvfs"; do [ -x "$c" ] && { KVFS_BIN=$c; break; }; done
  fi
fi

# --- 3. the S3 server ---
if [ -z "$ENDPOINT" ]; then
  RGW_PORT=${KVFS_BENCH_RGW_PORT:-17480}
  CEPH_DIR=${KVFS_BENCH_CEPH_DIR:-/tmp/kvfs-bench-ceph}
  export KVFS_MON_PORT_V2=${KVFS_BENCH_MON_PORT_V2:-13300}
  export KVFS_MON_PORT_V1=${KVFS_BENCH_MON_PORT_V1:-16789}
  command -v radosgw >/dev/null ||
    { say "installing Ceph RGW"; "$ROOT/tests/s3server/rgw.sh" install >>"$OUT/logs/rgw.log" 2>&1; }
  say "starting RGW on 127.0.0.1:$RGW_PORT ($CEPH_DIR)"
  STARTED_RGW=1
  ENDPOINT=http://127.0.0.1:$RGW_PORT
  if ! KVFS_CEPH_DIR=$CEPH_DIR KVFS_RGW_PORT=$RGW_PORT "$ROOT/tests/s3server/rgw.sh" start \
    >>"$OUT/logs/rgw.log" 2>&1; then
    # A failing script whose server answers anyway: go on, but say so.
    curl -s -o /dev/null --max-time 2 "$ENDPOINT/" ||
      { say "RGW did not start: see $OUT/logs/rgw.log"; exit 1; }
    say "rgw.sh start reported a failure but $ENDPOINT answers; continuing ($OUT/logs/rgw.log)"
  fi
  CEPH_CONF=$CEPH_DIR/ceph.conf
fi
export S3_ENDPOINT=$ENDPOINT
if [ -n "$LOOPBACK_GBIT" ]; then
  # burst must exceed lo's 64 KiB MTU; latency bounds the queue.
  tc qdisc replace dev lo root tbf rate "${LOOPBACK_GBIT}gbit" burst 4mb latency 100ms ||
    { say "cannot shape lo (tc tbf)"; exit 1; }
  SHAPED=1
  say "loopback capped at $LOOPBACK_GBIT Gbit/s"
fi
S3UTIL=(python3 "$BENCH/s3util.py")

# --- 4. what was run, on what ---
wait_idle "the runs"
python3 - "$OUT/meta.json" <<EOF
import json, os, platform, subprocess, sys, time
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception: return ""
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
mem = next((int(l.split()[1]) // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "command": """$CMDLINE""",
  "nproc": os.cpu_count(), "ram_mib": mem, "kernel": platform.release(), "cpu": cpu,
  "loadavg_start": open("/proc/loadavg").read().split()[:3],
  "endpoint": "$ENDPOINT", "server": "Ceph RGW " + sh("radosgw --version | head -1 | cut -d' ' -f3"),
  "started_server": $STARTED_RGW == 1, "systems": "$SYSTEMS", "sizes_mib": "$SIZES",
  "default_sizes_mib": "$DEFAULT_SIZES",
  "chunks": $CHUNKS, "odirect_chunks": $ODIRECT_CHUNKS, "ttfb_chunks": $TTFB_CHUNKS,
  "threads": "$THREADS", "reps": $REPS, "lookup_seconds": $LOOKUP_SECONDS, "part_mib": $PART_MIB,
  "engines": "$ENGINES", "engine_pages": $ENGINE_PAGES,
  "kvfs": "$KVFS_BIN", "kvfs_rev": sh("git -C $ROOT rev-parse --short HEAD"),
  "s3fs": sh("s3fs --version 2>&1 | head -1"), "rclone": sh("rclone version 2>/dev/null | head -1"),
  "raw_s3": "$RAW_S3", "python": platform.python_version(),
  "loopback_gbit": "$LOOPBACK_GBIT"}, open(sys.argv[1], "w"), indent=1)
EOF

# --- mounting ---
PASSWD=$WORK/s3fs.passwd
(umask 077; echo "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" >"$PASSWD")
MNT=$WORK/mnt
mkdir -p "$MNT"
DAEMON_PID=""

mount_system() {  # mount_system SYSTEM BUCKET CACHE_DIR LOG -> DAEMON_PID, 0 when ready
  local sys=$1 bucket=$2 cache=$3 log=$4
  rm -rf "$cache"; mkdir -p "$cache"
  case "$sys" in
    s3fs)
      s3fs "$bucket" "$MNT" -f -o passwd_file="$PASSWD" -o url="$ENDPOINT" \
        -o use_path_request_style -o endpoint="$AWS_REGION" >>"$log" 2>&1 &
      ;;
    rclone-off|rclone-full)
      env -u AWS_CA_BUNDLE RCLONE_CONFIG_KVB_TYPE=s3 RCLONE_CONFIG_KVB_PROVIDER=Ceph \
        RCLONE_CONFIG_KVB_ENDPOINT="$ENDPOINT" RCLONE_CONFIG_KVB_REGION="$AWS_REGION" \
        RCLONE_CONFIG_KVB_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
        RCLONE_CONFIG_KVB_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
        RCLONE_CONFIG_KVB_FORCE_PATH_STYLE=true \
        rclone mount "kvb:$bucket" "$MNT" --vfs-cache-mode "${sys#rclone-}" \
        --cache-dir "$cache" >>"$log" 2>&1 &
      ;;
    kvfs|kvfs-tier)
      cat >"$WORK/kvfs.yaml" <<EOF
endpoint: $ENDPOINT
region: $AWS_REGION
addressing: path
cache_dir: $cache
cache_size: $KVFS_CACHE_SIZE
EOF
      [ -n "$KVFS_YAML" ] && cat "$KVFS_YAML" >>"$WORK/kvfs.yaml"
      # kvfs-tier: the same with a bounded tier (docs/bounded-tier.md): use records, the lease and
      # a collector pass every 5 s - the capacity is never reached, so what it costs is its
      # bookkeeping on the read and write paths.
      [ "$sys" = kvfs-tier ] && printf 'store_capacity: 1TiB\nstore_gc_interval: 5s\n' >>"$WORK/kvfs.yaml"
      "$KVFS_BIN" -f --config "$WORK/kvfs.yaml" "s3://$bucket" "$MNT" >>"$log" 2>&1 &
      ;;
  esac
  DAEMON_PID=$!
  for _ in $(seq 1 120); do
    mountpoint -q "$MNT" && { MOUNTED+=("$MNT"); return 0; }
    kill -0 "$DAEMON_PID" 2>/dev/null || return 1
    sleep 0.25
  done
  kill "$DAEMON_PID" 2>/dev/null
  return 1
}

unmount_dir() {  # waits for the daemon to exit (it may still be uploading)
  local m=$1
  fusermount3 -u "$m" 2>/dev/null || fusermount -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  if [ -n "$DAEMON_PID" ]; then
    for _ in $(seq 1 600); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$DAEMON_PID" 2>/dev/null && kill "$DAEMON_PID"
    DAEMON_PID=""
  fi
  MOUNTED=()
}

# Deletes the chunks and lets the server reclaim them now (RGW keeps deleted tail objects for
# hours otherwise, and a memstore OSD would fill up over a full run).
empty_bucket() {
  "${S3UTIL[@]}" empty "$1" >>"$OUT/logs/s3util.log" 2>&1
  if [ -n "$CEPH_CONF" ] && [ -r "$CEPH_CONF" ]; then
    timeout 120 radosgw-admin -c "$CEPH_CONF" gc process --include-all >>"$OUT/logs/gc.log" 2>&1
  fi
}

# Waits until the bucket holds as many objects as the mount shows files (rclone's full cache
# mode uploads after close), and records how long that took after the last close.
wait_durable() {  # wait_durable SYSTEM REP BUCKET
  local want have t0 waited
  want=$(find "$MNT" -type f | wc -l)  # the engines' patterns nest files in trees
  t0=$(date +%s.%N)
  for _ in $(seq 1 1200); do
    have=$("${S3UTIL[@]}" ls "$3" 2>/dev/null | wc -l)
    [ "$have" -ge "$want" ] && break
    sleep 0.25
  done
  waited=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.3f", b-a}')
  echo "{\"ts\": $(date +%s), \"system\": \"$1\", \"rep\": $2, \"phase\": \"flush\", \"seconds\": $waited, \"objects\": $have, \"files\": $want}" >>"$RESULTS"
}

KVB_COMMON=(--sizes "$SIZES" --chunks "$CHUNKS" --odirect-chunks "$ODIRECT_CHUNKS"
  --ttfb-chunks "$TTFB_CHUNKS" --threads "$THREADS" --lookup-seconds "$LOOKUP_SECONDS"
  --out "$RESULTS")

# The engines' own patterns (issue 14); phases as engines_bench.py takes them.
engines_bench() {  # engines_bench SYSTEM REP DIR LABEL PHASES
  [ "$ENGINES" = none ] && return 0
  python3 "$BENCH/engines_bench.py" --dir "$3" --system "$1" --rep "$2" --tag "r$2" \
    --label "$4" --phases "$5" --engines "$ENGINES" --pages "$ENGINE_PAGES" --threads "$THREADS" \
    --lookup-seconds "$LOOKUP_SECONDS" --out "$RESULTS" || note "$1" "engines_bench $5 failed"
}

run_fs() {  # run_fs SYSTEM REP: write on one mount, read on a fresh one (cold, like another node)
  local sys=$1 rep=$2 bucket=kvbench-$1-$RUN_ID log=$OUT/logs/$1-r$2.log
  "${S3UTIL[@]}" mb "$bucket" || { note "$sys" "cannot create bucket $bucket"; return; }
  if ! mount_system "$sys" "$bucket" "$SHM/cache-$sys" "$log"; then
    note "$sys" "mount failed (log: $log): $(tail -n 3 "$log" | tr '\n' ' ')"
    return
  fi
  python3 "$BENCH/kvbench.py" --dir "$MNT" --system "$sys" --rep "$rep" --tag "r$rep" \
    --label write-mount --phases write,write_odirect --pid "$DAEMON_PID" \
    "${KVB_COMMON[@]}" || note "$sys" "kvbench write phases failed"
  engines_bench "$sys" "$rep" "$MNT" write-mount write
  wait_durable "$sys" "$rep" "$bucket"
  unmount_dir "$MNT"
  if ! mount_system "$sys" "$bucket" "$SHM/cache-$sys" "$log"; then
    note "$sys" "remount failed (log: $log)"
    return
  fi
  python3 "$BENCH/kvbench.py" --dir "$MNT" --system "$sys" --rep "$rep" --tag "r$rep" \
    --label read-mount --pid "$DAEMON_PID" \
    --phases ttfb,read_cold,read_cold_odirect,read_warm,read_warm_odirect,read_hit,lookup \
    "${KVB_COMMON[@]}" || note "$sys" "kvbench read phases failed"
  engines_bench "$sys" "$rep" "$MNT" read-mount read_cold,read_warm,lookup_miss
  unmount_dir "$MNT"
  rm -rf "$SHM/cache-$sys"
  empty_bucket "$bucket"
}

run_raw_s3() {
  local rep=$1 bucket=kvbench-raw-$RUN_ID
  "${S3UTIL[@]}" mb "$bucket" || { note raw-s3 "cannot create bucket $bucket"; return; }
  "$RAW_S3" --endpoint "$ENDPOINT" --bucket "$bucket" --region "$AWS_REGION" --sizes "$SIZES" \
    --chunks "$CHUNKS" --ttfb-chunks "$TTFB_CHUNKS" --threads "$THREADS" --part-mib "$PART_MIB" \
    --lookup-seconds "$LOOKUP_SECONDS" --tag "r$rep" --rep "$rep" --out "$RESULTS" \
    2>>"$OUT/logs/raw_s3.log" || note raw-s3 "raw_s3 failed (see $OUT/logs/raw_s3.log)"
  empty_bucket "$bucket"
}

run_tmpfs() {
  rm -rf "$SHM/tmpfs"; mkdir -p "$SHM/tmpfs"
  python3 "$BENCH/kvbench.py" --dir "$SHM/tmpfs" --system tmpfs --rep "$1" --tag "r$1" \
    --label tmpfs --phases all "${KVB_COMMON[@]}" || note tmpfs "kvbench failed"
  engines_bench tmpfs "$1" "$SHM/tmpfs" tmpfs write,read_cold,read_warm,lookup_miss
  rm -rf "$SHM/tmpfs"
}

available() {  # available SYSTEM: 0 if it can run, else records why not
  case "$1" in
    s3fs) command -v s3fs >/dev/null || { note s3fs "skipped: s3fs not installed"; return 1; } ;;
    rclone-*) command -v rclone >/dev/null || { note "$1" "skipped: rclone not installed"; return 1; } ;;
    kvfs|kvfs-tier) [ -n "$KVFS_BIN" ] && [ -x "$KVFS_BIN" ] ||
      { note kvfs "skipped: no kvfs binary (build/kvfs missing and it does not build yet)"; return 1; } ;;
    raw-s3) [ -n "$RAW_S3" ] || { note raw-s3 "skipped: raw_s3 does not build"; return 1; } ;;
    tmpfs) ;;
    *) note "$1" "skipped: unknown system"; return 1 ;;
  esac
}

# --- 5. the runs: repetitions outermost, so slow drift of a shared machine hits every system ---
IFS=, read -r -a SYS_LIST <<<"$SYSTEMS"
RUNNABLE=()
for s in "${SYS_LIST[@]}"; do available "$s" && RUNNABLE+=("$s"); done
say "endpoint $ENDPOINT; systems: ${RUNNABLE[*]}; results in $OUT"
mkdir -p "$SHM"
"${S3UTIL[@]}" warmup "kvbench-warmup-$RUN_ID" >>"$OUT/logs/s3util.log" 2>&1 ||
  say "warm-up of the server failed (see $OUT/logs/s3util.log)"
for rep in $(seq 1 "$REPS"); do
  # Rotate the order each repetition: no system always runs first (or right after another's
  # deletions and garbage collection).
  n=${#RUNNABLE[@]}
  for i in $(seq 0 $((n - 1))); do
    s=${RUNNABLE[$(((i + rep - 1) % n))]}
    say "rep $rep/$REPS: $s"
    case "$s" in
      raw-s3) run_raw_s3 "$rep" ;;
      tmpfs) run_tmpfs "$rep" ;;
      *) run_fs "$s" "$rep" ;;
    esac
  done
done
for s in "${RUNNABLE[@]}"; do
  case "$s" in raw-s3) b=kvbench-raw-$RUN_ID ;; tmpfs) continue ;; *) b=kvbench-$s-$RUN_ID ;; esac
  "${S3UTIL[@]}" rb "$b" >>"$OUT/logs/s3util.log" 2>&1
done
say "runs done in $(($(date +%s) - T0)) s"
if [ "$FLEET" = yes ] && [[ " ${RUNNABLE[*]} " == *" kvfs "* ]]; then
  say "scale: bench/fleet_bench.py"
  python3 "$BENCH/fleet_bench.py" --kvfs "$KVFS_BIN" --endpoint "$ENDPOINT" \
    --out "$OUT/fleet.jsonl" >>"$OUT/logs/fleet.log" 2>&1 ||
    say "fleet_bench reported errors (see $OUT/logs/fleet.log)"
fi

# LMCache's own S3 client beside its fs adapter on kvfs: the engine's two ways to the same store,
# one shape after another, each from an idle machine (the script starts its own RGW and mounts).
APPEND=()
NO_VENV=0
lmcache_step() {  # lmcache_step FLOW SHAPES VARIANTS REPS TAG: one run of the script per shape
  local flow=$1 tag=$5 shape n mib log v
  local variant_args=() variants=() shapes=()
  IFS=, read -r -a variants <<<"$3"
  for v in "${variants[@]}"; do variant_args+=(--kvfs-variant "$v"); done
  IFS=, read -r -a shapes <<<"$2"
  for shape in "${shapes[@]}"; do
    n=${shape%x*} mib=${shape#*x} log=$OUT/logs/$tag-$shape.log
    wait_idle "LMCache $flow $shape"
    say "LMCache s3 vs fs adapters, flow $flow: $n x $mib MiB"
    python3 "$BENCH/lmcache_s3_vs_fs.py" --flow "$flow" --chunks "$n" --chunk-mib "$mib" \
      --reps "$4" --kvfs "$KVFS_BIN" "${variant_args[@]}" --out "$OUT/$tag-$shape.md" \
      --json "$OUT/$tag-$shape.jsonl" >>"$log" 2>&1
    case $? in
      0) APPEND+=(--append "$OUT/$tag-$shape.md") ;;
      3) note lmcache "skipped: $(tail -1 "$log")"; NO_VENV=1; return ;;  # no engines venv
      *) note lmcache "$flow $shape failed (see $log)" ;;
    esac
  done
}
if [[ " ${RUNNABLE[*]} " == *" kvfs "* ]]; then
  # --threads tasks in flight, no lookup: the rows of the reports so far (lmcache-SHAPE.md).
  [ "$LMCACHE" != none ] && lmcache_step tasks "$LMCACHE" "$LMCACHE_VARIANTS" "$REPS" lmcache
  # The MP server's own flow, one request at a time (lmcache-request-SHAPE.md).
  [ "$LMCACHE_REQUEST" != none ] && [ "$NO_VENV" = 0 ] &&
    lmcache_step request "$LMCACHE_REQUEST" "$LMCACHE_REQUEST_VARIANTS" \
      "$LMCACHE_REQUEST_REPS" lmcache-request
fi

# --- 6. report ---
if [ "$RESULTS_MD" != "-" ]; then
  "$(report_python)" "$BENCH/report.py" --results "$RESULTS" --meta "$OUT/meta.json" --md "$RESULTS_MD" \
    --fleet "$OUT/fleet.jsonl" --png "${RESULTS_MD%.md}.png" "${APPEND[@]}" && say "report: $RESULTS_MD"
fi
