#!/usr/bin/env python3
"""The container probes (docs/kubernetes.md) through a real daemonized mount while its S3 store is
stopped with SIGSTOP - the case where a liveness probe that waits on the store makes the kubelet
restart kvfs just when its cache carries the node. Proves:

- with a /readyz pending, /healthz and /metrics answer within a second;
- every /readyz answers within the probe's timeout (1 s, the kubelet's default), and says 503
  "the store has not answered for N s" once a check has been outstanding for the bound (5 s);
- after SIGCONT, /readyz is 200 again, without a remount.

    probes_stall_test.py --kvfs PATH/kvfs [--stop-pid PID]

What is stopped. By default a relay process of this script's own (TCP, byte for byte) between
the mount and the RGW of KVFS_TEST_S3_ENDPOINT: a stopped process looks on the wire exactly as a
stopped radosgw does (the kernel still completes connections into its listen backlog and takes
the request's bytes; nothing answers), and the RGW the other tests share under ctest is never
stopped. With --stop-pid PID the mount talks to KVFS_TEST_S3_ENDPOINT directly and PID - the
radosgw of a private RGW (`KVFS_CEPH_DIR=... KVFS_RGW_PORT=... tests/s3server/rgw.sh start`; its
pid is in $KVFS_CEPH_DIR/run/client.rgw.a.pid) - is the process stopped. Never the shared one.

Exit 77 = skipped (no FUSE, or no S3 endpoint), unless KVFS_REQUIRE_FUSE=1 / KVFS_REQUIRE_S3=1.
"""
import argparse
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PROBE_TIMEOUT = 1.0  # the kubelet's default timeoutSeconds (docs/kubernetes.md sets none)
INTERVAL = 10.0  # HealthCheck::kDefaultInterval: the store is asked at most once per interval
STALL_BOUND = 5.0  # HealthCheck::kDefaultStallBound
SLACK = 10.0  # a loaded CI machine; no timing beyond the probe timeout is asserted tighter


def ok(msg):
    print("  ok: " + msg, flush=True)


# ---- the relay (a child process: --relay HOST:PORT) --------------------------------------------

def relay_main(upstream):
    host, port = upstream.rsplit(":", 1)
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(128)
    print("PORT %d" % lsock.getsockname()[1], flush=True)

    def pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def serve(client):
        try:
            up = socket.create_connection((host, int(port)))
        except OSError:
            client.close()
            return
        for s in (client, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, up), daemon=True).start()
        threading.Thread(target=pump, args=(up, client), daemon=True).start()

    def watch_stdin():  # the relay ends with its parent
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    while True:
        c, _ = lsock.accept()
        serve(c)


class Relay:
    def __init__(self, endpoint):
        u = urllib.parse.urlsplit(endpoint)
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--relay",
                                      "%s:%d" % (u.hostname, u.port or 80)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), "relay did not start: %r" % line
        self.endpoint = "http://127.0.0.1:%d" % int(line.split()[1])
        self.pid = self.proc.pid

    def cleanup(self):
        try:
            os.kill(self.pid, signal.SIGCONT)
        except OSError:
            pass
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---- the test -----------------------------------------------------------------------------------

def get(url, timeout):
    """GET url: (status, body, seconds), or (None, reason, seconds) when no answer in `timeout`."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode(), time.monotonic() - t0
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), time.monotonic() - t0
    except (urllib.error.URLError, OSError) as e:  # socket.timeout included
        return None, str(e), time.monotonic() - t0


def expect_prompt(url, what, code=None):
    c, body, took = get(url, PROBE_TIMEOUT)
    assert c is not None, "%s: no answer within %.1f s (%s)" % (what, PROBE_TIMEOUT, body)
    assert code is None or c == code, "%s: HTTP %s %r" % (what, c, body[:200])
    return c, body, took


def run(ctx, daemon_test, stop_pid):
    store = ctx.store()
    relay = None
    if stop_pid is None:
        relay = Relay(store.endpoint)
        store.opts["endpoint"] = relay.endpoint
        stop_pid = relay.pid
        ok("relay %s (pid %d) in front of %s" % (relay.endpoint, relay.pid, store.endpoint))
    try:
        port = daemon_test.free_port()
        url = "http://127.0.0.1:%d" % port
        a = daemon_test.Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"),
                               {"metrics_listen": "127.0.0.1:%d" % port})
        data = daemon_test.chunk("probes", 1 << 20)
        daemon_test.write_chunk(a.mnt, "p.pt", data)
        deadline = time.monotonic() + 30
        while get(url + "/readyz", 5)[0] != 200:
            assert time.monotonic() < deadline, "/readyz never 200 before the stall"
            time.sleep(0.5)
        ok("/readyz 200 before the stall")
        # The last answer must be due again, so that the next /readyz starts a check (and, were
        # it answered on the server's thread, would block it).
        time.sleep(INTERVAL + 1)

        os.kill(stop_pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            pending = {}
            t = threading.Thread(target=lambda: pending.update(r=get(url + "/readyz", 60)))
            t.start()
            time.sleep(0.3)  # the /readyz is in (pending, if it waited on the store)
            _, _, took_h = expect_prompt(url + "/healthz", "/healthz with a /readyz pending", 200)
            _, text, took_m = expect_prompt(url + "/metrics", "/metrics with a /readyz pending",
                                            200)
            assert "kvfs_" in text, text[:200]
            ok("store stopped, /readyz pending: /healthz in %.3f s, /metrics in %.3f s" %
               (took_h, took_m))
            t.join(60)
            code, body, took = pending["r"]
            assert code is not None and took < PROBE_TIMEOUT, \
                "the pending /readyz took %.1f s (%s %r)" % (took, code, body[:200])
            ok("the pending /readyz answered in %.3f s: %s %r" % (took, code, body.strip()[:100]))

            # Every probe answers within its timeout; 503 once the check is outstanding too long.
            deadline = stopped_at + STALL_BOUND + SLACK
            slowest = 0.0
            while True:
                code, body, took = expect_prompt(url + "/readyz", "/readyz during the stall")
                slowest = max(slowest, took)
                expect_prompt(url + "/healthz", "/healthz during the stall", 200)
                if code == 503 and "the store has not answered for" in body:
                    break
                assert time.monotonic() < deadline, \
                    "no 503 'has not answered' %.1f s into the stall: %s %r" % (
                        time.monotonic() - stopped_at, code, body[:200])
                time.sleep(0.25)
            ok("%.1f s into the stall: /readyz %d %r (slowest /readyz %.3f s)" %
               (time.monotonic() - stopped_at, code, body.strip()[:120], slowest))
        finally:
            os.kill(stop_pid, signal.SIGCONT)
        resumed_at = time.monotonic()
        # The stuck check completes (or has failed at its deadline, and the next one, an interval
        # later, succeeds).
        deadline = resumed_at + 2 * INTERVAL + SLACK
        while True:
            code, body, _ = expect_prompt(url + "/readyz", "/readyz after SIGCONT")
            if code == 200:
                break
            assert time.monotonic() < deadline, "/readyz not back: %s %r" % (code, body[:200])
            time.sleep(0.5)
        ok("SIGCONT: /readyz 200 again after %.1f s" % (time.monotonic() - resumed_at))
        assert daemon_test.read_direct(os.path.join(a.mnt, "p.pt")) == data
        a.unmount()
    finally:
        ctx.cleanup()
        if relay:
            relay.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs")
    ap.add_argument("--stop-pid", type=int, default=None,
                    help="stop this process (a private radosgw) instead of a relay")
    ap.add_argument("--relay", help=argparse.SUPPRESS)  # the relay child: upstream HOST:PORT
    args = ap.parse_args()
    if args.relay:
        relay_main(args.relay)
        return 0
    assert args.kvfs, "--kvfs is required"
    import daemon_test
    daemon_test.require(s3=True)
    work = tempfile.mkdtemp(prefix="kvfs-probes-")
    ctx = daemon_test.Ctx(os.path.abspath(args.kvfs), "s3", work)
    try:
        run(ctx, daemon_test, args.stop_pid)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("probes_stall_test: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
