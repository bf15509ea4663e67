#!/usr/bin/env python3
"""The fault campaign: every fault an inference cluster meets, driven through real daemonized kvfs
mounts on the test S3 server (Ceph RGW) and on tests/objstore/fault_server.py. Two mounts of one
bucket stand for two nodes. Prints one row per scenario - expected, observed, partial objects
(objects of a write that was not acknowledged, or shorter than the write, that reached the store or
another process), bytes lost (acknowledged writes missing from the store), bytes corrupt (bytes
served or stored that differ from what was written) - and ends with "N passed, N failed".

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
import mount_edges_test  # noqa: E402
import outage_test  # noqa: E402
import tier_scenarios  # noqa: E402
from daemon_test import MIB, Ctx, Daemon, chunk, ok, sha, write_chunk  # noqa: E402
from mount_util import read_direct, skip_or_fail  # noqa: E402

BOUND = 30.0  # seconds a failing request may take here (its blocking_timeout is far below)


class Row:
    def __init__(self, expected):
        self.expected, self.observed, self.lost, self.corrupt = expected, "", 0, 0
        self.partial = 0


def account(row, objs, acked, unacked=()):
    """Counts against the store's objects (name -> (size, sha)): an acknowledged write (its close
    returned 0) that is missing is lost bytes, one that is shorter a partial object and lost
    bytes, one with other bytes corrupt bytes; any object of an unacknowledged write (a failed
    close, a killed writer) is a partial object."""
    for name, data in acked.items():
        got = objs.get(name)
        if got is None:
            row.lost += len(data)
        elif got[0] != len(data):
            row.partial += 1
            row.lost += len(data)
        elif got[1] != sha(data):
            row.corrupt += len(data)
    for name in unacked:
        if name in objs:
            row.partial += 1


def read_back(row, mnt, name, data):
    """Reads the name on a node (direct I/O) and counts bytes that differ from `data`."""
    got = read_direct(os.path.join(mnt, name))
    row.corrupt += sum(x != y for x, y in zip(got, data)) + abs(len(got) - len(data))


def wait_until(fn, what, secs=BOUND):
    deadline = time.monotonic() + secs
    while not fn():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.05)


def fault_listing(mnt):
    """name -> size as a node that has not looked anything up sees the fault server's bucket."""
    return {n: os.stat(os.path.join(mnt, n)).st_size for n in os.listdir(mnt)}


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
    a.sync()  # nothing accepted, so nothing stored after it either
    visible = [n for n, m in (("a", a.mnt), ("b", b.mnt))
               if os.path.exists(os.path.join(m, "dying.pt"))]
    in_store = "dying.pt" in store.objects()
    assert not visible and not in_store, "partial chunk visible on %s, in store: %s" % (
        visible, in_store)
    data = chunk("dying-full", 12 * MIB)
    write_chunk(a.mnt, "dying.pt", data)
    a.sync()  # stored (the close returned before its upload: write_back)
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
    a.sync()  # in the store, where b learns the size (the close returned before the upload)
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
    b.sync()
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
    for d in nodes:
        d.sync()  # both uploads have ended (write_back: the closes returned before them)
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
    """The object behind a name a node has looked up is replaced (412 on If-Match). With
    `prefetch: false` (the lookup leaves the download to the read) the read fails at most once
    (ESTALE/EIO), and the next read returns the new bytes. At the defaults the lookup may have
    downloaded the version it saw: the read returns that whole version or the new one, never a
    mix."""
    store = ctx.store()
    observed = []
    for prefetch in ("false", "true"):
        a = Daemon(ctx, store, ctx.path("mnt-" + prefetch), ctx.path("cache-" + prefetch),
                   {"prefetch": prefetch, "metadata_cache_ttl_secs": "600"},
                   name="prefetch " + prefetch)
        name = "swap-%s.pt" % prefetch
        old, new = chunk("old" + prefetch, 3 * MIB), chunk("new" + prefetch, 3 * MIB)
        store_put(store, name, old)
        path = os.path.join(a.mnt, name)
        assert os.stat(path).st_size == len(old)  # the node now holds the old ETag
        a.settled()  # with prefetch: its download of the old version has ended
        store_put(store, name, new)
        allowed = {new: "new"} if prefetch == "false" else {new: "new", old: "old (prefetched)"}
        results = []
        for _ in range(3):
            try:
                got = read_direct(path)
                if got not in allowed:
                    row.corrupt += len(got)
                results.append(allowed.get(got, "other bytes"))
                break
            except OSError as e:
                assert e.errno in (errno.ESTALE, errno.EIO), "read: %s" % e
                results.append(errno.errorcode[e.errno])
        assert row.corrupt == 0, "mixed or other bytes served after the replace: %s" % results
        assert results[-1] in allowed.values(), "the object is never read: %s" % results
        observed.append("prefetch %s: %s" % (prefetch, " then ".join(results)))
        a.unmount()
    row.observed = "; ".join(observed)


def list_loop(ctx, row, script):
    """A LIST whose continuation token repeats, or never ends: readdir fails with EIO, no hang."""
    store = outage_test.FaultStore(script, ctx.work)
    try:
        a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
        seen = []
        for action in ("repeat_token", "never_end"):
            d = os.path.join(a.mnt, "dir-%s" % action)
            os.mkdir(d)  # exists (its marker): the lookup succeeds, the readdir meets the fault
            store.control("/__fault/rules", json.dumps(
                [{"method": "GET", "action": action, "count": -1}]).encode())
            t0 = time.monotonic()
            try:
                os.listdir(a.mnt if action == "repeat_token" else d)
                raise AssertionError("listing with %s succeeded" % action)
            except OSError as e:
                secs = time.monotonic() - t0
                assert e.errno == errno.EIO, "%s: %s" % (action, e)
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
        a.sync()  # stored (the close returned before its upload: write_back)
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


def subprocess_mid_chunk(ctx, row):
    """A writer starts subprocesses (one execs, one inherits the descriptor and exits) with 4 of
    8 MiB written: the children's closes publish nothing; the writer's own close publishes the
    whole chunk."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
    data = chunk("subprocess", 8 * MIB)
    seen = []
    with open(os.path.join(a.mnt, "sub.pt"), "wb") as f:
        f.write(data[:4 * MIB])
        f.flush()
        subprocess.run(["true"], check=True)  # O_CLOEXEC copy closed at exec
        subprocess.run([sys.executable, "-c", "pass"], close_fds=False, check=True)
        a.sync()  # a child's close accepted nothing, so nothing is stored after it either
        if "sub.pt" in store.objects():
            seen.append("store")
        if os.path.exists(os.path.join(b.mnt, "sub.pt")):
            seen.append("node b")
        f.write(data[4 * MIB:])
    row.partial += len(seen)
    a.sync()  # the close returned before the upload (write_back)
    account(row, store.objects(), {"sub.pt": data})
    c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
    read_back(row, c.mnt, "sub.pt", data)
    assert not seen, "the half-written chunk was published by a child: seen in %s" % seen
    row.observed = "nothing published by the children; whole chunk at the writer's close"


def shell_writers(ctx, row):
    """Shell redirection and tools as writers: `cat src > f`, `echo x > f`, `dd of=f`, `tee f`,
    `cp`: the shell's dup2 + close of the original descriptor is not the writer's close; each
    publishes the whole file."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
    data = chunk("shell", 8 * MIB)
    src = ctx.path("src.bin")
    with open(src, "wb") as f:
        f.write(data)
    cmds = {
        "cat.pt": "cat %s > %s/cat.pt" % (src, a.mnt),
        "dd.pt": "dd if=%s of=%s/dd.pt bs=1M status=none" % (src, a.mnt),
        "tee.pt": "tee %s/tee.pt < %s > /dev/null" % (a.mnt, src),
        "cp.pt": "cp %s %s/cp.pt" % (src, a.mnt),
        "echo.txt": "echo hello > %s/echo.txt" % a.mnt,
    }
    acked, failed = {}, []
    for name, cmd in cmds.items():
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=BOUND)
        if r.returncode == 0:
            acked[name] = b"hello\n" if name == "echo.txt" else data
        else:
            failed.append("%s: %s" % (name, r.stderr.strip()[:60]))
    a.sync()  # the closes returned before the uploads (write_back)
    objs = store.objects()
    account(row, objs, acked, [n for n in cmds if n not in acked])
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
    for name, want in acked.items():
        read_back(row, b.mnt, name, want)
    assert not failed, "shell writers failed: %s" % "; ".join(failed)
    row.observed = "cat >, echo >, dd of=, tee, cp: 5 whole files, read back on node b"


def killed_half_written(ctx, row):
    """A writer SIGKILLed with a chunk half written (chunk_sizes 8MiB: 4 MiB written) and a temp
    file (*.tmp) beside it: nothing published, both names vanish from the node, the spool is
    emptied; the next whole write succeeds."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), {"chunk_sizes": "8MiB"},
               name="a")
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
    code = ("import os,time\n"
            "for n in ('half.pt', 'half.pt.tmp'):\n"
            "    fd=os.open(os.path.join(%r, n),os.O_CREAT|os.O_WRONLY|os.O_TRUNC)\n"
            "    os.write(fd, b'h'*%d)\n"
            "print('ready',flush=True)\ntime.sleep(600)\n" % (a.mnt, 4 * MIB))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", "writer did not start"
    p.send_signal(signal.SIGKILL)
    p.wait()
    spool = os.path.join(a.cache, "spool")
    wait_until(lambda: not {"half.pt", "half.pt.tmp"} & set(os.listdir(a.mnt)),
               "the killed writer's names to vanish")
    wait_until(lambda: not os.listdir(spool), "the killed writer's spool files to go")
    visible = [n for n in ("half.pt", "half.pt.tmp") if os.path.exists(os.path.join(b.mnt, n))]
    row.partial += len(visible)
    account(row, store.objects(), {}, ["half.pt", "half.pt.tmp"])
    data = chunk("half-full", 8 * MIB)
    write_chunk(a.mnt, "half.pt", data)
    a.sync()
    account(row, store.objects(), {"half.pt": data})
    c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
    read_back(row, c.mnt, "half.pt", data)
    assert row.partial == 0, "partial objects: %d (node b sees %s)" % (row.partial, visible)
    row.observed = "nothing published; names and spool files gone; whole rewrite ok"


def reader_during_write(ctx, row):
    """Another process on the writing node, and another node, look at a chunk while 3 of 8 MiB
    are written: ENOENT and not listed (never 3 MiB); afterwards all of it. The writer reads its own
    bytes back meanwhile."""
    store = ctx.store()
    opts = {"metadata_cache_ttl_secs": "1"}
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), opts, name="a")
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), opts, name="b")
    data = chunk("busy", 8 * MIB)
    path = os.path.join(a.mnt, "busy.pt")
    code = ("import os,sys\nfd=os.open(%r,os.O_CREAT|os.O_WRONLY|os.O_TRUNC)\n"
            "d=sys.stdin.buffer.read(%d)\nos.write(fd,d[:%d])\n"
            "own=open(%r,'rb').read()\nprint('own %%d' %% len(own), flush=True)\n"
            "sys.stdin.readline()\nos.write(fd,d[%d:])\nos.close(fd)\nprint('closed',flush=True)\n"
            % (path, len(data), 3 * MIB, path, 3 * MIB))
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    p.stdin.write(data)
    p.stdin.flush()
    own = p.stdout.readline().decode().strip()
    seen = []
    for node, mnt in (("a", a.mnt), ("b", b.mnt)):
        q = os.path.join(mnt, "busy.pt")
        try:
            with open(q, "rb") as f:
                seen.append("%s: read %d bytes" % (node, len(f.read())))
        except FileNotFoundError:
            pass
        if "busy.pt" in os.listdir(mnt):
            seen.append("%s: listed" % node)
    row.partial += len(seen)
    p.stdin.write(b"go\n")
    p.stdin.flush()
    closed = p.stdout.readline().decode().strip()
    assert p.wait() == 0 and closed == "closed", "writer failed: %s" % closed
    a.sync()  # the close returned before the upload (write_back)
    account(row, store.objects(), {"busy.pt": data})
    read_back(row, a.mnt, "busy.pt", data)
    wait_until(lambda: os.path.exists(os.path.join(b.mnt, "busy.pt")), "the chunk on node b")
    read_back(row, b.mnt, "busy.pt", data)
    assert own == "own %d" % (3 * MIB), "the writer read back: %s" % own
    assert not seen, "a chunk being written was seen: %s" % seen
    row.observed = "ENOENT, unlisted on both nodes while written; writer reads its 3 MiB; whole after"


def stalled_complete(ctx, row, script):
    """CompleteMultipartUpload stalls (blocking_timeout 3 s) under a 16 MiB multipart chunk.
    At the defaults (write_back) its close() returns 0 at once, `kvfs sync` fails within the
    bound naming it and no object appears; once the store answers, the upload (retried) stores
    it whole. With write_back false (tuned) the close itself fails with ETIMEDOUT/EIO within the
    bound, nothing is stored, and the same chunk is stored whole next."""
    store = outage_test.FaultStore(script, ctx.work)
    try:
        opts = {"blocking_timeout": str(outage_test.BLOCKING_TIMEOUT),
                "multipart_threshold": "8MiB", "multipart_part_size": "5MiB"}
        stall = json.dumps([{"method": "POST", "query": "uploadId", "action": "stall",
                             "seconds": 10, "count": -1}]).encode()
        data = chunk("stalled-complete", 16 * MIB)

        a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), opts, name="a")
        store.control("/__fault/rules", stall)
        t0 = time.monotonic()
        write_chunk(a.mnt, "sc.pt", data)  # accepted: its close returns 0
        closed = time.monotonic() - t0
        r = subprocess.run([ctx.kvfs, "sync", a.mnt], capture_output=True, text=True,
                           timeout=outage_test.BOUNDED + 30)
        synced = time.monotonic() - t0
        b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
        if "sc.pt" in fault_listing(b.mnt):
            row.partial += 1
        assert closed < outage_test.BOUNDED, "close took %.1fs" % closed
        assert r.returncode != 0 and "sc.pt" in r.stdout + r.stderr, \
            "kvfs sync under a stalled completion: exit %d %s" % (r.returncode, r.stdout + r.stderr)
        assert synced < outage_test.BOUNDED, "kvfs sync took %.1fs" % synced
        store.recover()
        # The retried upload stores it once the stalled request gave up (10 s).
        wait_until(lambda: subprocess.run([ctx.kvfs, "sync", a.mnt], capture_output=True,
                                          timeout=60).returncode == 0,
                   "the chunk stored after the outage", 60)
        c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
        read_back(row, c.mnt, "sc.pt", data)
        for d in (a, b, c):
            d.unmount()

        wbf = dict(opts, write_back="false")
        a = Daemon(ctx, store, ctx.path("mnt-a2"), ctx.path("cache-a2"), wbf,
                   name="a (write_back false)")
        store.control("/__fault/rules", stall)
        t0 = time.monotonic()
        err = None
        try:
            write_chunk(a.mnt, "sc2.pt", data)
        except OSError as e:
            err = e
        secs = time.monotonic() - t0
        store.recover()
        b = Daemon(ctx, store, ctx.path("mnt-b2"), ctx.path("cache-b2"), name="b2")
        listed = fault_listing(b.mnt)
        if err is None and listed.get("sc2.pt") != len(data):  # acknowledged: must be whole
            row.lost += len(data)
        elif "sc2.pt" in listed:
            row.partial += 1
        assert err is not None and err.errno in (errno.ETIMEDOUT, errno.EIO), \
            "write_back false: close under a stalled completion: %r" % (err,)
        assert secs < outage_test.BOUNDED, "write_back false: close took %.1fs" % secs
        write_chunk(a.mnt, "sc2.pt", data)
        c = Daemon(ctx, store, ctx.path("mnt-c2"), ctx.path("cache-c2"), name="c2")
        read_back(row, c.mnt, "sc2.pt", data)
        row.observed = ("close 0 in %.1fs, sync failed in %.1fs naming it, stored after the "
                        "outage; write_back false: close %s after %.1fs, nothing stored; whole "
                        "rewrite ok" % (closed, synced, errno.errorcode[err.errno], secs))
        for d in (a, b, c):
            d.unmount()
    finally:
        store.cleanup()


def stalled_abort(ctx, row, script):
    """A rejected chunk (12 of 16 MiB, chunk_sizes 16MiB) whose early-upload parts must be
    aborted, with AbortMultipartUpload stalled: close() is EINVAL without waiting for the abort
    (within blocking_timeout), nothing is stored, the whole chunk is stored next."""
    store = outage_test.FaultStore(script, ctx.work)
    try:
        opts = {"blocking_timeout": str(outage_test.BLOCKING_TIMEOUT), "chunk_sizes": "16MiB",
                "multipart_part_size": "5MiB"}
        a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), opts, name="a")
        store.control("/__fault/rules", json.dumps([
            {"method": "DELETE", "query": "uploadId", "action": "stall", "seconds": 40,
             "count": -1}]).encode())
        data = chunk("stalled-abort", 16 * MIB)
        t0 = time.monotonic()
        err = None
        try:
            with open(os.path.join(a.mnt, "sa.pt"), "wb") as f:
                f.write(data[:12 * MIB])
        except OSError as e:
            err = e
        secs = time.monotonic() - t0
        b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
        if "sa.pt" in fault_listing(b.mnt):
            row.partial += 1
        assert err is not None and err.errno == errno.EINVAL, "short close: %r" % (err,)
        assert secs < outage_test.BOUNDED, "close took %.1fs" % secs
        write_chunk(a.mnt, "sa.pt", data)
        a.sync()
        c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="c")
        read_back(row, c.mnt, "sa.pt", data)
        store.recover()
        row.observed = "write+close EINVAL in %.1fs; nothing stored; whole chunk next" % secs
        for d in (a, b, c):
            d.unmount()
    finally:
        store.cleanup()


def sigterm_mid_upload(ctx, row, script):
    """SIGTERM while a chunk's upload runs (a container runtime stopping kvfs, which SIGKILLs
    after its grace period): the mount leaves the mount table at once, so a SIGKILL then leaves
    no dead mount on the node, while the running upload completes - the object is whole in the
    store - and the daemon exits 0. At the defaults (write_back) the close returned 0 before the
    upload, which the exit waits for (write_back_drain_timeout); with write_back false (tuned)
    the close waits for it and returns 0."""
    store = outage_test.FaultStore(script, ctx.work)
    try:
        seen = []
        for tag, opts in (("", {}), ("-wbf", {"write_back": "false"})):
            name = "term%s.pt" % tag
            a = Daemon(ctx, store, ctx.path("mnt-a" + tag), ctx.path("cache-a" + tag), opts,
                       name="a" + tag)
            store.control("/__fault/rules", json.dumps([
                {"method": "PUT", "key": name, "action": "stall", "seconds": 4}]).encode())
            data = chunk("sigterm-mid-upload" + tag, 4 * MIB)
            result = {}

            def writer():
                try:
                    write_chunk(a.mnt, name, data)
                    result["closed"] = True
                except OSError as e:
                    result["error"] = e

            t = threading.Thread(target=writer)
            t.start()
            time.sleep(1.0)  # the PUT is stalled now
            if opts:
                assert t.is_alive(), "write_back false: the close returned before its PUT: %r" % (
                    result)
            else:
                t.join(10)
                assert result.get("closed"), "the close of an accepted chunk: %r" % result
            os.kill(a.pid, signal.SIGTERM)

            def in_table():
                with open("/proc/self/mountinfo") as f:
                    return any(ln.split()[4] == a.mnt for ln in f)
            wait_until(lambda: not in_table(), "the mount to leave the mount table", 3)
            detached_while_uploading = t.is_alive() or \
                os.path.exists("/proc/%d" % a.pid)  # still draining the upload
            t.join(30)
            assert not t.is_alive(), "the close never returned"
            if "closed" not in result:
                raise AssertionError("close during SIGTERM failed: %r" % result.get("error"))
            assert detached_while_uploading, "the upload ended before the mount left the table"
            st = daemon_test.wait_exit(a.pid, "after SIGTERM")
            assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "daemon exit status %d" % st
            ctx.daemons.remove(a)
            b = Daemon(ctx, store, ctx.path("mnt-b" + tag), ctx.path("cache-b" + tag),
                       name="b" + tag)
            read_back(row, b.mnt, name, data)  # counts lost and corrupt bytes
            b.unmount()
            seen.append("close 0 %s" % ("after its upload (write_back false)" if opts else
                                         "before its upload, which the exit waited for"))
        row.observed = ("mount detached at SIGTERM while the upload ran; %s; object whole; "
                        "daemon exited 0" % "; ".join(seen))
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
    ("replaced-object", False,
     "stale view dropped: next read is the new object (prefetch false), else the whole version "
     "looked up; never mixed", replaced_object),
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
    ("subprocess-mid-chunk", False, "children's closes publish nothing; the writer's whole",
     subprocess_mid_chunk),
    ("shell-writers", False, "cat >, echo >, dd of=, tee, cp each publish the whole file",
     shell_writers),
    ("killed-half-written", False,
     "chunk and temp file of a killed writer: nothing published, names and spool gone",
     killed_half_written),
    ("reader-during-write", False, "a chunk being written: ENOENT, unlisted; whole afterwards",
     reader_during_write),
    ("stalled-complete", True,
     "close 0, kvfs sync fails within blocking_timeout, stored after; write_back false: close "
     "ETIMEDOUT/EIO within blocking_timeout; nothing stored", stalled_complete),
    ("sigterm-mid-upload", True,
     "the mount leaves the table at SIGTERM; the running upload completes (stored), the exit "
     "waits for it",
     sigterm_mid_upload),
    ("stalled-abort", True, "rejected chunk's close EINVAL without waiting for its abort",
     stalled_abort),
    ("emfile", False, "400 open readers, 256 descriptors: EMFILE, daemon lives, cache kept",
     reuse(mount_edges_test.case_emfile, "as expected (mount_edges_test.case_emfile)")),
    ("hung-credential-process", False,
     "mount fails within credential_process_timeout_secs, command killed",
     reuse(mount_edges_test.case_hung_credential_process,
           "as expected (mount_edges_test.case_hung_credential_process)")),
] + tier_scenarios.SCENARIOS  # the bounded tier's scenarios


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
            bad = row.lost or row.corrupt or row.partial
            row.result = "FAIL" if bad else "pass"
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
    print("\n| scenario | expected | observed | partial objects | bytes lost | bytes corrupt "
          "| result | s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        print("| %s | %s | %s | %d | %d | %d | %s | %.0f |" % (
            name, r.expected, r.observed.replace("|", "/"), r.partial, r.lost, r.corrupt,
            r.result, r.secs))
    failed = [(n, r) for n, r in rows if r.result != "pass"]
    # The last line names what failed: CI logs are often read from their tail alone.
    print("\n%d passed, %d failed (%.0fs)%s" % (
        len(rows) - len(failed), len(failed), time.time() - t_all,
        "".join("\nFAILED %s: %s" % (n, r.observed) for n, r in failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
