#!/usr/bin/env bash
# HTTP/2 against HTTP/1.1 for kvfs (issue 13 §4): Debian's nghttpx terminates TLS with ALPN
# (h2, http/1.1) in front of the S3 server, with a CA generated here; bench/run.sh then measures
# kvfs twice through it - prefer_http2 false and true - alternating, with everything else equal.
# The rows are written to OUT/{h1,h2}-N/results.jsonl and compared in OUT/compare.md.
#
# usage: bench/http2.sh --endpoint http://127.0.0.1:7480 [--ceph-conf FILE] [--kvfs PATH]
#                       [--rounds 2] [--out DIR] [--window BYTES]
# --window: nghttpx's HTTP/2 receive windows (per stream and per connection; default 16 MiB).
# nghttpx's own default, 64 KiB, caps every upload at one window per round trip.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ENDPOINT="" CEPH_CONF="" KVFS="" ROUNDS=2 OUT="" WINDOW=$((16 << 20))
while [ $# -gt 0 ]; do
  case "$1" in
    --endpoint) ENDPOINT=$2; shift ;;
    --ceph-conf) CEPH_CONF=$2; shift ;;
    --kvfs) KVFS=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --window) WINDOW=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$ENDPOINT" ] || { echo "--endpoint is required" >&2; exit 2; }
if ! command -v nghttpx >/dev/null || ! command -v openssl >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-proxy openssl
fi
OUT=${OUT:-$ROOT/bench/results/http2-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap '[ -n "${PROXY:-}" ] && kill "$PROXY" 2>/dev/null; rm -rf "$WORK"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" -days 2 \
  -subj "/CN=kvfs bench CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$WORK/srv.key" -out "$WORK/srv.csr" \
  -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$WORK/ext.cnf"
openssl x509 -req -in "$WORK/srv.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial \
  -out "$WORK/srv.pem" -days 2 -extfile "$WORK/ext.cnf" 2>/dev/null

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOSTPORT=${ENDPOINT#*://}
nghttpx --frontend="127.0.0.1,$PORT" --backend="${HOSTPORT%:*},${HOSTPORT##*:};;proto=http/1.1" \
  --workers=1 --no-ocsp --frontend-http2-window-size="$WINDOW" \
  --frontend-http2-connection-window-size="$WINDOW" --errorlog-file="$WORK/nghttpx.err" "$WORK/srv.key" "$WORK/srv.pem" &
PROXY=$!
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done

for r in $(seq "$ROUNDS"); do
  for proto in h1 h2; do
    {
      echo "endpoint: https://127.0.0.1:$PORT"
      echo "ca_bundle: $WORK/ca.pem"
      [ "$proto" = h2 ] && echo "prefer_http2: true" || echo "prefer_http2: false"
    } >"$WORK/$proto.yaml"
    args=(--endpoint "$ENDPOINT" --systems kvfs --sizes 8,64 --threads 1,4 --reps 1
          --engines none --kvfs-yaml "$WORK/$proto.yaml" --no-install
          --out "$OUT/$proto-$r" --results-md -)
    [ -n "$CEPH_CONF" ] && args+=(--ceph-conf "$CEPH_CONF")
    [ -n "$KVFS" ] && args+=(--kvfs "$KVFS")
    echo "== round $r: $proto"
    "$ROOT/bench/run.sh" "${args[@]}" >"$OUT/$proto-$r.log" 2>&1
  done
done

python3 - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/compare.md"
import collections, json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = collections.defaultdict(list)
for proto in ("h1", "h2"):
    for r in range(1, rounds + 1):
        for line in open("%s/%s-%d/results.jsonl" % (out, proto, r)):
            d = json.loads(line)
            v = d.get("mib_s") or d.get("ttfb_p50_ms") or d.get("ops_s")
            if d.get("system") == "kvfs" and v is not None:
                rows[(d["phase"], d.get("size_mib") or "-", d.get("threads"), proto)].append(v)
print("| phase | MiB | threads | HTTP/1.1 | HTTP/2 | h2 / h1 |")
print("|---|---|---|---|---|---|")
for key in sorted({k[:3] for k in rows}, key=str):
    h1, h2 = rows.get(key + ("h1",)), rows.get(key + ("h2",))
    if h1 and h2:
        a, b = statistics.median(h1), statistics.median(h2)
        print("| %s | %s | %s | %.0f | %.0f | %.2f |" % (key + (a, b, b / a)))
PY
