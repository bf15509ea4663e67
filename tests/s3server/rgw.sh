#!/usr/bin/env bash
# kvfs's own single-node Ceph RADOS Gateway on loopback, for the test suite. No systemd, no mgr:
# one monitor, one OSD (memstore by default: no block file to mkfs, starts fastest) and radosgw
# with the beast frontend, plus an S3 user with fixed test keys.
#
# usage: tests/s3server/rgw.sh install|start|stop|status
# env:   KVFS_CEPH_DIR      cluster dir, wiped by stop      (default /tmp/kvfs-ceph)
#        KVFS_RGW_PORT      S3 port on 127.0.0.1            (default 7480)
#        KVFS_MON_PORT_V2   monitor msgr2 port              (default 3300)
#        KVFS_MON_PORT_V1   monitor legacy port             (default 6789)
#        KVFS_OSD_STORE     memstore | bluestore            (default memstore)
#        KVFS_MEMSTORE_BYTES memstore capacity, RAM used only as written (default 8 GiB)
#        KVFS_RGW_ACCESS_KEY / KVFS_RGW_SECRET_KEY          test user credentials
#        KVFS_RGW_DNS_NAME  rgw_dns_name: the host name under which RGW takes `<bucket>.<name>`
#                           as virtual-hosted style (default 127.0.0.1: path style only)
# Two clusters on one machine need different ports AND dirs.
#
# Traps this script avoids (see the Ceph notes): the OSD key must exist before `ceph-osd --mkfs`
# (`ceph osd new` with a cephx_secret); size-1 pools need `mon allow pool size one` and
# `osd crush chooseleaf type = 0`; beast needs tcp_nodelay=1 or small responses on kept-alive
# connections stall ~45 ms (Nagle + delayed ACK); `osd max object name len` must exceed S3's
# 1024-byte key limit (with 460, as in some recipes, RGW answers 500 for keys over ~450 bytes).
set -euo pipefail

CEPH_DIR=${KVFS_CEPH_DIR:-/tmp/kvfs-ceph}
RGW_PORT=${KVFS_RGW_PORT:-7480}
MON_V2=${KVFS_MON_PORT_V2:-3300}
MON_V1=${KVFS_MON_PORT_V1:-6789}
STORE=${KVFS_OSD_STORE:-memstore}
AK=${KVFS_RGW_ACCESS_KEY:-TESTACCESSKEY0000001}
SK=${KVFS_RGW_SECRET_KEY:-testsecretkey0000000000000000000000000001}
CONF=$CEPH_DIR/ceph.conf
LOG=$CEPH_DIR/log
CEPH=(ceph -c "$CONF" --connect-timeout 20)
DAEMONS=(client.rgw.a osd.0 mon.a)  # stop order: gateway first

say() { echo "[rgw.sh $(date +%T)] $*"; }

# On any failure: say where the logs are and show the last lines of each, then leave the dir
# in place so it can be inspected (stop removes it).
fail() {
  say "FAILED: $*"
  say "logs are in $LOG"
  for f in "$LOG"/*; do
    [ -f "$f" ] || continue
    echo "---- tail $f"
    tail -n 15 "$f"
  done
  exit 1
}

pid_alive() {
  local pf=$CEPH_DIR/run/$1.pid
  [ -f "$pf" ] && kill -0 "$(cat "$pf")" 2>/dev/null
}

write_conf() {
  cat >"$CONF" <<CONF
[global]
fsid = $1
mon host = [v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
run dir = $CEPH_DIR/run
admin socket = $CEPH_DIR/run/\$name.asok
log file = $LOG/\$name.log
pid file = $CEPH_DIR/run/\$name.pid
keyring = $CEPH_DIR/admin.keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
auth allow insecure global id reclaim = false
mon max pg per osd = 1000
osd crush chooseleaf type = 0
mon data avail warn = 2
mon data avail crit = 1
osd memory target = 1073741824
osd op num shards = 2
osd op num threads per shard = 2

[mon]
mon data = $CEPH_DIR/mon/ceph-\$id
keyring = $CEPH_DIR/mon/ceph-\$id/keyring

[osd]
osd data = $CEPH_DIR/osd/ceph-\$id
keyring = $CEPH_DIR/osd/ceph-\$id/keyring
osd objectstore = $STORE
bluestore block create = true
bluestore block size = 21474836480
bluestore block db create = false
bluestore block wal create = false
bluestore fsck on mount = false
memstore device bytes = ${KVFS_MEMSTORE_BYTES:-8589934592}
osd max object name len = 2048
osd max object namespace len = 64

[client.rgw.a]
keyring = $CEPH_DIR/rgw/keyring
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw dns name = ${KVFS_RGW_DNS_NAME:-127.0.0.1}
rgw enable usage log = false
rgw thread pool size = 128
CONF
}

do_stop() {
  for n in "${DAEMONS[@]}"; do
    local pf=$CEPH_DIR/run/$n.pid
    [ -f "$pf" ] || continue
    local p
    p=$(cat "$pf")
    kill "$p" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
  done
  [ -n "${KVFS_CEPH_KEEP:-}" ] || rm -rf "$CEPH_DIR"
}

do_start() {
  local t0 fsid osd_uuid osd_secret osd_id
  t0=$(date +%s.%N)
  for n in "${DAEMONS[@]}"; do
    pid_alive "$n" && { say "already running in $CEPH_DIR ($n); '$0 stop' first"; exit 1; }
  done
  if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$RGW_PORT/"; then
    say "port $RGW_PORT already answers: another server is running there (set KVFS_RGW_PORT)"
    exit 1
  fi
  rm -rf "$CEPH_DIR"  # leftovers of a crashed run
  mkdir -p "$CEPH_DIR"/{run,log,mon/ceph-a,osd/ceph-0,rgw}
  fsid=$(uuidgen)
  write_conf "$fsid"

  # --- monitor ---
  ceph-authtool --create-keyring "$CEPH_DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' \
    >/dev/null
  ceph-authtool --create-keyring "$CEPH_DIR/admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$CEPH_DIR/mon.keyring" --import-keyring "$CEPH_DIR/admin.keyring" >/dev/null
  monmaptool --create --addv a "[v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]" --fsid "$fsid" \
    "$CEPH_DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap "$CEPH_DIR/monmap" --keyring "$CEPH_DIR/mon.keyring" \
    >"$LOG/mon-mkfs.out" 2>&1 || fail "ceph-mon --mkfs"
  ceph-mon -c "$CONF" -i a >"$LOG/mon-start.out" 2>&1 || fail "ceph-mon start (ports $MON_V2/$MON_V1 busy?)"
  "${CEPH[@]}" mon enable-msgr2 >/dev/null 2>&1 || true
  say "mon up (ports $MON_V2/$MON_V1)"

  # --- OSD: its key must exist before mkfs ---
  osd_uuid=$(uuidgen)
  osd_secret=$(ceph-authtool --gen-print-key)
  osd_id=$(echo "{\"cephx_secret\": \"$osd_secret\"}" | "${CEPH[@]}" osd new "$osd_uuid" -i - \
    2>"$LOG/osd-new.out") || fail "ceph osd new"
  [ "$osd_id" = 0 ] || fail "unexpected osd id '$osd_id'"
  ceph-authtool --create-keyring "$CEPH_DIR/osd/ceph-0/keyring" --name osd.0 \
    --add-key "$osd_secret" >/dev/null
  ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$LOG/osd-mkfs.out" 2>&1 \
    || fail "ceph-osd --mkfs"
  ceph-osd -c "$CONF" -i 0 >"$LOG/osd-start.out" 2>&1 || fail "ceph-osd start"
  # The dump is captured before grep: grep -q stops reading at its match, and under pipefail the
  # writer's EPIPE would read as "not up".
  local up=0
  for _ in $(seq 1 120); do
    if grep -q '^osd.0 up' <<<"$("${CEPH[@]}" osd dump 2>/dev/null || true)"; then
      up=1
      break
    fi
    sleep 0.5
  done
  [ "$up" = 1 ] || fail "osd.0 did not come up"
  say "osd.0 up ($STORE)"

  # --- gateway ---
  "${CEPH[@]}" auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx' mgr 'allow rw' \
    -o "$CEPH_DIR/rgw/keyring" 2>"$LOG/rgw-auth.out" || fail "rgw key"
  radosgw -c "$CONF" -n client.rgw.a >"$LOG/rgw-start.out" 2>&1 || fail "radosgw start"
  for _ in $(seq 1 240); do
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$RGW_PORT/" && break
    pid_alive client.rgw.a || fail "radosgw exited"
    sleep 0.5
  done
  curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$RGW_PORT/" \
    || fail "radosgw did not answer on 127.0.0.1:$RGW_PORT"
  radosgw-admin -c "$CONF" user create --uid=tester --display-name=tester \
    --access-key="$AK" --secret-key="$SK" >"$LOG/user-create.out" 2>&1 || fail "user create"
  awk -v a="$t0" -v b="$(date +%s.%N)" -v p="$RGW_PORT" -v k="$AK" \
    'BEGIN{printf "[rgw.sh] ready in %.1f s: endpoint http://127.0.0.1:%s access key %s\n", b-a, p, k}'
}

do_status() {
  local rc=0
  for n in mon.a osd.0 client.rgw.a; do
    if pid_alive "$n"; then
      ps -o pid=,rss= -p "$(cat "$CEPH_DIR/run/$n.pid")" \
        | awk -v n="$n" '{printf "%-14s pid %-7s RSS %6.0f MiB\n", n, $1, $2/1024}'
    else
      echo "$n not running"; rc=1
    fi
  done
  curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$RGW_PORT/" \
    && echo "S3 endpoint http://127.0.0.1:$RGW_PORT answers" \
    || { echo "S3 endpoint http://127.0.0.1:$RGW_PORT does not answer (logs: $LOG)"; rc=1; }
  return $rc
}

case "${1:-}" in
  install) exec "$(dirname "$0")/../../packaging/install-deps.sh" --test ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
