#!/usr/bin/env python3
"""The fault campaign (issue 11): every fault an inference cluster meets, driven through real
daemonized kvfs mounts on the test S3 server (Ceph RGW) and on tests/objstore/fault_server.py.
Two mounts of one bucket stand for two nodes. Prints one row per scenario - expected, observed,
bytes lost (acknowledged writes missing from the store), bytes corrupt (bytes served that differ
from the store's object) - and ends with "N passed, N failed".

    campaign.py --kvfs PATH/kvfs --fault-server PATH/fault_server.py [--only a,b]

Needs KVFS_TEST_S3_ENDPOINT (+ keys), /dev/fuse and root (the full-disk scenario mounts a tmpfs).
Exit 77 = skipped, unless KVFS_REQUIRE_FUSE / KVFS_REQUIRE_S3 is 1. Tests never assert timings
beyond "ends within its bound": the bounds are generous for a loaded 2-core machine.
"""
import argparse
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import daemon_test  # noqa: E402
import integrity_test  # noqa: E402
import outage_test  # noqa: E402
import tier_scenarios  # noqa: E402
from daemon_test import MIB, Ctx, Daemon, chunk, ok, sha, write_chunk  # noqa: E402
from mount_util import read_direct, skip_or_fail  # noqa: E402

BOUND = 30.0  # seconds a failing request may take here (its blocking_timeout is far below)


class Row:
    def __init__(self, expected):
        self.expected, self.observed, self.lost, self.corrupt = expected, "", 0, 0


def store_bytes(store, name):
    code, body = store._curl("GET", "/%s/%s/%s" % (store.bucket, store.prefix, name))
    return body if code == 200 else None


def store_put(store, name, data):
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        cfg = 'user = "%s:%s"\n' % (store.access, store.secret)
        url = "%s/%s/%s/%s" % (store.endpoint, store.bucket, store.prefix, name)
        r = subprocess.run(["curl", "-sS", "-K", "-", "-X", "PUT", "--aws-sigv4",
                            "aws:amz:%s:s3" % store.region, "-H",
                            "x-amz-content-sha256: UNSIGNED-PAYLOAD", "--data-binary", "@" + f.name,
                            "-o", "/dev/null", "-w", "%{http_code}", url],
                           input=cfg.encode(), capture_output=True, timeout=60, check=True)
        assert r.stdout.strip() == b"200", "PUT %s: HTTP %s" % (name, r.stdout)


# ---- scenarios -------------------------------------------------------------------------------


def dying_writer(ctx, row):
    """A writer SIGKILLed after 8 MiB of a chunk (chunk_sizes empty) publishes nothing."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
    path = os.path.join(a.mnt, "dying.pt")
    code = ("import os,sys,time\nfd=os.open(%r,os.O_CREAT|os.O_WRONLY|os.O_TRUNC)\n"
            "for i in range(8): os.write(fd, bytes([i])*%d)\n"
            "print('ready',flush=True)\ntime.sleep(600)\n" % (path, MIB))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", "writer did not start"
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(0.5)  # the kernel's FLUSH of the dead task's file reaches the daemon
    visible = [n for n, m in (("a", a.mnt), ("b", b.mnt))
               if os.path.exists(os.path.join(m, "dying.pt"))]
    in_store = "dying.pt" in store.objects()
    assert not visible and not in_store, "partial chunk visible on %s, in store: %s" % (
        visible, in_store)
    data = chunk("dying-full", 12 * MIB)
    write_chunk(a.mnt, "dying.pt", data)
    # A node that has not looked the name up (b keeps its miss for metadata_cache_ttl_secs).
    c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
    got = read_direct(os.path.join(c.mnt, "dying.pt"))
    row.corrupt += sum(x != y for x, y in zip(got, data)) + abs(len(got) - len(data))
    assert got == data, "the full write after the dead writer reads back wrong on node c"
    row.observed = "nothing visible on 2 nodes; full rewrite ok"


def partial_close(ctx, row):
    """A live writer closes a chunk it did not finish (an ignored write error, an exception
    between writes) on a node whose LMCache config says full chunks only
    (save_unfull_chunk: false): the size is learnt from another node's chunk in the store, the
    close fails with EINVAL and nothing is published."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
    first = "model@1@0@%016x@bfloat16.pt" % 0x1a2b3c4d5e6f7081
    write_chunk(a.mnt, first, chunk("pc-first", 8 * MIB))
    cfg = ctx.path("lmcache.yaml")
    with open(cfg, "w") as f:
        f.write("chunk_size: 256\nsave_unfull_chunk: false\n")
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), opts={"config": cfg},
               name="b")
    name = "model@1@0@%016x@bfloat16.pt" % 0x2b3c4d5e6f708192
    data = chunk("pc-second", 8 * MIB)
    err = None
    try:
        with open(os.path.join(b.mnt, name), "wb") as f:
            f.write(data[:3 * MIB])  # and no more: the engine gave up, then closed
    except OSError as e:
        err = e
    assert err is not None and err.errno == errno.EINVAL, "partial close: %r" % (err,)
    visible = [n for n, m in (("a", a.mnt), ("b", b.mnt)) if os.path.exists(os.path.join(m, name))]
    in_store = name in store.objects()
    assert not visible and not in_store, "partial chunk visible on %s, in store: %s" % (
        visible, in_store)
    write_chunk(b.mnt, name, data)
    # A node that has not looked the name up (a keeps its miss for metadata_cache_ttl_secs).
    c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
    got = read_direct(os.path.join(c.mnt, name))
    row.corrupt += sum(x != y for x, y in zip(got, data)) + abs(len(got) - len(data))
    assert got == data, "the whole chunk after the rejected close reads back wrong on node c"
    row.observed = "close EINVAL (size learnt from node a's chunk); nothing visible; whole write ok"


def lost_create_race(ctx, row):
    """Two nodes write different bytes of one size under one name at once: every node serves
    the store's object, never its own losing bytes."""
    store = ctx.store()
    nodes = [Daemon(ctx, store, ctx.path("mnt-%s" % n), ctx.path("cache-%s" % n), name=n)
             for n in ("a", "b")]
    datas = [chunk("race-a", 6 * MIB), chunk("race-b", 6 * MIB)]
    errs = [None, None]

    def write(i):
        try:
            write_chunk(nodes[i].mnt, "race.pt", datas[i])
        except OSError as e:
            errs[i] = e

    ts = [threading.Thread(target=write, args=(i,)) for i in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    truth = store_bytes(store, "race.pt")
    assert truth in datas, "the store holds neither writer's bytes"
    c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
    for d in nodes + [c]:
        for _ in range(2):  # the second read comes from the node's cache
            got = read_direct(os.path.join(d.mnt, "race.pt"))
            if got != truth:
                row.corrupt += len(got)
    assert row.corrupt == 0, "a node served bytes other than the store's object"
    row.observed = "winner %s; 3 nodes x 2 reads = store's bytes; closes: %s" % (
        "a" if truth == datas[0] else "b",
        "/".join("ok" if e is None else errno.errorcode.get(e.errno, "?") for e in errs))


def replaced_object(ctx, row):
    """The object behind a name a node has looked up is replaced (412 on If-Match): the read
    fails at most once (ESTALE/EIO), and the next read returns the new bytes."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"),
               {"metadata_cache_ttl_secs": "600"}, name="a")
    old, new = chunk("old", 3 * MIB), chunk("new", 3 * MIB)
    store_put(store, "swap.pt", old)
    path = os.path.join(a.mnt, "swap.pt")
    assert os.stat(path).st_size == len(old)  # node a now holds the old ETag
    store_put(store, "swap.pt", new)
    results = []
    for _ in range(3):
        try:
            got = read_direct(path)
            results.append("bytes")
            if got != new:
                row.corrupt += len(got)
            break
        except OSError as e:
            assert e.errno in (errno.ESTALE, errno.EIO), "read: %s" % e
            results.append(errno.errorcode[e.errno])
    assert results[-1] == "bytes", "the new object is never read: %s" % results
    assert row.corrupt == 0, "old or mixed bytes served after the replace"
    row.observed = " then ".join(results) + " (new object)"


def list_loop(ctx, row, script):
    """A LIST whose continuation token repeats, or never ends: readdir fails with EIO, no hang."""
    store = outage_test.FaultStore(script, ctx.work)
    try:
        a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
        seen = []
        for action in ("repeat_token", "never_end"):
            store.control("/__fault/rules", json.dumps(
                [{"method": "GET", "action": action, "count": -1}]).encode())
            d = os.path.join(a.mnt, "dir-%s" % action)
            t0 = time.monotonic()
            try:
                os.listdir(a.mnt if action == "repeat_token" else d)
                raise AssertionError("listing with %s succeeded" % action)
            except OSError as e:
                secs = time.monotonic() - t0
                assert e.errno in (errno.EIO, errno.ENOENT), "%s: %s" % (action, e)
                assert secs < BOUND, "%s took %.1fs" % (action, secs)
                seen.append("%s: %s in %.1fs" % (action, errno.errorcode[e.errno], secs))
            store.recover()
        a.unmount()
        row.observed = "; ".join(seen)
    finally:
        store.cleanup()


def wire_faults(ctx, row, script):
    """Connection resets mid-body, 408 and 503 answers on GETs: retried, the bytes are right."""
    store = outage_test.FaultStore(script, ctx.work)
    try:
        a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
        data = chunk("wire", 5 * MIB)
        write_chunk(a.mnt, "w.pt", data)
        b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
        store.control("/__fault/rules", json.dumps([
            {"method": "GET", "key": "w.pt", "action": "reset", "after_bytes": 100000},
            {"method": "GET", "key": "w.pt", "action": "status", "status": 408,
             "code": "RequestTimeout"},
            {"method": "GET", "key": "w.pt", "action": "status", "status": 503,
             "code": "SlowDown"}]).encode())
        got = read_direct(os.path.join(b.mnt, "w.pt"))
        if got != data:
            row.corrupt += len(got)
        assert got == data, "wrong bytes after retried faults"
        retries = b.stats()["kvfs_store_retries"]
        assert retries >= 3, "expected 3 retries, saw %d" % retries
        row.observed = "right bytes after %d retries" % retries
        a.unmount()
        b.unmount()
    finally:
        store.cleanup()


def reuse(fn, what):
    def run(ctx, row):
        fn(ctx)
        row.observed = what
    return run


def with_server(fn, what=None):
    def run(ctx, row, script):
        fn(ctx, script) if what else fn(ctx, row, script)
        if what:
            row.observed = what
    return run


SCENARIOS = [
    # name, needs fault server, expected, function
    ("writer-sigkill", False,
     "partial chunk never visible; next full write ok", dying_writer),
    ("daemon-kill9", False,
     "no partial object; acked closes in store; remount by itself; stale uploads aborted",
     reuse(daemon_test.case_daemon_crash, "as expected (daemon_test.case_daemon_crash)")),
    ("damaged-cache", False, "corrupt cache entries dropped and refetched, never served",
     reuse(daemon_test.case_restart, "as expected (daemon_test.case_restart)")),
    ("partial-close", False,
     "a live close of a short chunk (save_unfull_chunk: false) is EINVAL, nothing visible",
     partial_close),
    ("lost-create-race", False, "every node serves the store's object", lost_create_race),
    ("replaced-object", False, "stale view dropped: next read is the new object",
     replaced_object),
    ("cache-disk-full", False, "write ENOSPC; reads stream; cache_size warning",
     reuse(daemon_test.case_disk_full, "as expected (daemon_test.case_disk_full)")),
    ("store-stalled", True,
     "cached chunks/stat/statfs/stats < 5 s; others fail within blocking_timeout; breaker; "
     "recovery without remount",
     with_server(outage_test.run, "as expected (outage_test.run)")),
    ("byte-flipped", True, "EIO, never the byte; nothing cached",
     with_server(integrity_test.run, "as expected (integrity_test.run)")),
    ("list-token-loop", True, "readdir fails with EIO within bound", list_loop),
    ("wire-resets-408-503", True, "retried; right bytes", wire_faults),
] + tier_scenarios.SCENARIOS  # the bounded tier (issue 23)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--fault-server", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        skip_or_fail("no /dev/fuse or fusermount3", "KVFS_REQUIRE_FUSE")
    if not os.environ.get("KVFS_TEST_S3_ENDPOINT"):
        skip_or_fail("KVFS_TEST_S3_ENDPOINT not set", "KVFS_REQUIRE_S3")
    daemon_test.become_subreaper()
    kvfs, script = os.path.abspath(args.kvfs), os.path.abspath(args.fault_server)
    only = set(filter(None, args.only.split(",")))
    rows = []
    t_all = time.time()
    for name, needs_server, expected, fn in SCENARIOS:
        if only and name not in only:
            continue
        print("[%s] %s" % (name, expected), flush=True)
        ctx = Ctx(kvfs, "s3", tempfile.mkdtemp(prefix="kvfs-fc-%s-" % name))
        row = Row(expected)
        t0 = time.time()
        try:
            fn(ctx, row, script) if needs_server else fn(ctx, row)
            row.result = "pass" if row.lost == 0 and row.corrupt == 0 else "FAIL"
        except Exception as e:  # noqa: BLE001 - report and go on with the next scenario
            traceback.print_exc(limit=3)
            row.observed = "%s: %s" % (type(e).__name__, str(e)[:160])
            row.result = "FAIL"
        finally:
            ctx.cleanup()
            shutil.rmtree(ctx.work, ignore_errors=True)
        row.secs = time.time() - t0
        print("[%s] %s (%.1fs)" % (name, row.result, row.secs), flush=True)
        rows.append((name, row))
    print("\n| scenario | expected | observed | bytes lost | bytes corrupt | result | s |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print("| %s | %s | %s | %d | %d | %s | %.0f |" % (
            name, r.expected, r.observed.replace("|", "/"), r.lost, r.corrupt, r.result,
            r.secs))
    failed = sum(r.result != "pass" for _, r in rows)
    print("\n%d passed, %d failed (%.0fs)" % (len(rows) - failed, failed, time.time() - t_all))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
