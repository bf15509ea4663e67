#!/usr/bin/env python3
"""A store outage through a real daemonized mount: kvfs over tests/objstore/fault_server.py, whose
requests are then all stalled (the server accepts connections and never answers, as a stopped
RGW does). Proves, with generous bounds (no timing is asserted beyond "never hangs"):

- stat and read of a chunk in the local cache, statfs and `kvfs stats` answer at once, also while
  other requests wait on the dead store - lookups of unknown names, and opens and reads of
  chunks that are not cached, more of them than the mount has FUSE threads;
- a lookup of a name that is not cached and the write of a new chunk fail within
  blocking_timeout with ETIMEDOUT or EIO;
- the circuit breaker opened and is counted in `kvfs stats`;
- when the store answers again, everything works without a remount.

    outage_test.py --kvfs PATH/kvfs --fault-server PATH/fault_server.py

Exit 77 = skipped (no FUSE), unless KVFS_REQUIRE_FUSE=1. The shared RGW is never touched.
"""
import argparse
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import daemon_test
from daemon_test import Ctx, Daemon, chunk, ok, write_chunk
from mount_util import read_direct, skip_or_fail

BLOCKING_TIMEOUT = 3  # seconds (the blocking_timeout setting of the mount)
FAST = 5.0  # "answers at once": generous for a loaded CI machine (measured well under 1 s)
BOUNDED = BLOCKING_TIMEOUT + 15.0  # "ends within blocking_timeout", with room for a loaded host
# The kernel sends lookups of new names in one directory to the daemon one at a time (measured on
# 6.18: the next LOOKUP is handed out only after the previous reply), so a miss queued behind
# others waits for theirs too - until the circuit breaker (5 failures) makes them fail at once.
BREAKER_FAILURES = 5
QUEUED_MISS_BOUND = (BREAKER_FAILURES + 1) * BLOCKING_TIMEOUT + 15.0


class FaultStore:
    """The fault server as the mount's S3 store (it checks no signatures)."""

    def __init__(self, script, work):
        self.bucket = "outage"
        self.proc = subprocess.Popen([sys.executable, script, "--bucket", self.bucket],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), "fault server did not start: %r" % line
        self.endpoint = "http://127.0.0.1:%d" % int(line.split()[1])
        self.source = "s3://%s/kv" % self.bucket
        self.opts = {"endpoint": self.endpoint, "region": "us-east-1", "addressing": "path"}
        self.env = {"AWS_ACCESS_KEY_ID": "FAKEACCESSKEY", "AWS_SECRET_ACCESS_KEY": "fakesecret"}

    def control(self, path, body=b""):
        req = urllib.request.Request(self.endpoint + path, data=body, method="POST")
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200, "%s: HTTP %d" % (path, r.status)

    def stall_everything(self):
        self.control("/__fault/rules", b'[{"action": "stall", "seconds": 600, "count": -1}]')

    def put(self, key, data):
        req = urllib.request.Request("%s/__fault/object?bucket=%s&key=kv/%s" % (
            self.endpoint, self.bucket, key), data=data, method="PUT")
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200, "put %s: HTTP %d" % (key, r.status)

    def get(self, key):
        """The object's bytes (path style, no signature needed), or None if there is none."""
        try:
            with urllib.request.urlopen("%s/%s/kv/%s" % (self.endpoint, self.bucket, key),
                                        timeout=30) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise

    def recover(self):
        self.control("/__fault/clear_rules")

    def cleanup(self):
        self.proc.stdin.close()  # the server exits when its stdin closes
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def timed(fn):
    t0 = time.monotonic()
    try:
        return fn(), None, time.monotonic() - t0
    except OSError as e:
        return None, e, time.monotonic() - t0


def expect_fast(what, fn):
    value, err, secs = timed(fn)
    assert err is None, "%s failed during the outage: %s" % (what, err)
    assert secs < FAST, "%s took %.1fs during the outage" % (what, secs)
    ok("%s during the outage: %.3fs" % (what, secs))
    return value


def expect_bounded_failure(what, fn, bound=BOUNDED):
    _, err, secs = timed(fn)
    assert err is not None, "%s succeeded against a dead store" % what
    assert err.errno in (errno.ETIMEDOUT, errno.EIO), "%s: %s" % (what, err)
    assert secs < bound, "%s took %.1fs (blocking_timeout=%ds)" % (what, secs, BLOCKING_TIMEOUT)
    ok("%s fails with %s after %.1fs (blocking_timeout=%ds)" %
       (what, errno.errorcode[err.errno], secs, BLOCKING_TIMEOUT))


def sealed_chunks_outlive_a_killed_daemon(ctx, store):
    """write_back: chunks accepted (close() or rename() returned 0) while the store holds every
    PUT, then kill -9 of the daemon: a mount over the same cache - at the default write_back -
    uploads each of them byte-exact (a multipart one killed mid-upload too); a chunk still being
    written and a sealed spool whose bytes were changed on the disk are never published."""
    cache = ctx.path("cache-wb")
    a = Daemon(ctx, store, ctx.path("mnt-wb"), cache, {"write_back": "true"}, name="wb")
    store.control("/__fault/rules",
                  b'[{"method": "PUT", "action": "stall", "seconds": 600, "count": -1}]')
    want = {}
    for i in range(6):  # LMCache's fs adapter, vLLM's tier: temp file, close, rename
        name = "sealed-%d.data" % i
        data = chunk(name, 2 * daemon_test.MIB + i)
        write_chunk(a.mnt, name + ".tmp", data)
        os.rename(os.path.join(a.mnt, name + ".tmp"), os.path.join(a.mnt, name))
        want[name] = data
    for name in ("direct.data", "victim.data"):  # SGLang's HiCacheFile: written under its name
        want[name] = chunk(name, 3 * daemon_test.MIB + 1)
        write_chunk(a.mnt, name, want[name])
    # A multipart chunk (LMCache's 32 MiB chunks and up): its parts go out while it is written
    # (upload_while_writing) and hang, so the kill comes in the middle of its multipart upload.
    want["multipart.data"] = chunk("multipart.data", 40 * daemon_test.MIB + 3)
    write_chunk(a.mnt, "multipart.data", want["multipart.data"])
    for name, data in want.items():
        assert read_direct(os.path.join(a.mnt, name)) == data, "A reads %s differently" % name
    assert a.stats()["kvfs_write_back_pending"] == len(want), "uploads ran past the stall"
    ok("%d chunks accepted (one of them multipart, its parts hanging) and read back on their "
       "node while every PUT stalls" % len(want))
    w = subprocess.Popen([sys.executable, "-c", daemon_test.UNCLOSED_WRITER,
                          os.path.join(a.mnt, "partial.data"), str(2 * daemon_test.MIB)],
                         stdout=subprocess.PIPE, text=True)
    assert w.stdout.readline().strip() == "written", "writer did not write"
    ctx.daemons.remove(a)
    os.kill(a.pid, 9)
    os.waitpid(a.pid, 0)
    w.kill()
    w.wait(timeout=30)
    w.stdout.close()
    spool = os.path.join(cache, "spool")
    seals = [n for n in os.listdir(spool) if n.endswith(".seal")]
    assert len(seals) == len(want), "seals left by the killed daemon: %s" % seals
    for n in seals:  # the victim's spool loses a byte (a damaged disk)
        with open(os.path.join(spool, n), "rb") as f:
            if b"victim.data" not in f.read():
                continue
        with open(os.path.join(spool, n[:-len(".seal")]), "r+b") as f:
            f.seek(1000)
            b = f.read(1)
            f.seek(1000)
            f.write(bytes([b[0] ^ 0xFF]))
    del want["victim.data"]
    ok("daemon killed with %d chunks sealed in its spool; one spool damaged" % len(seals))
    store.recover()
    a = Daemon(ctx, store, a.mnt, cache, name="wb (restarted, write_back at its default)")
    deadline = time.monotonic() + 60
    while a.stats()["kvfs_write_back_pending"] > 0 or \
            a.stats()["kvfs_write_back_recovered"] < len(want):
        assert time.monotonic() < deadline, "recovery did not end: %s" % a.stats()
        time.sleep(0.1)
    for name, data in want.items():
        assert store.get(name) == data, "%s is not in the store byte-exact" % name
        assert read_direct(os.path.join(a.mnt, name)) == data, "%s reads differently" % name
    for name in ("victim.data", "partial.data", "sealed-0.data.tmp"):
        assert store.get(name) is None, "%s was published" % name
        assert not os.path.exists(os.path.join(a.mnt, name)), "%s is visible" % name
    s = a.stats()
    assert s["kvfs_write_back_recovered"] == len(want), s
    assert s["kvfs_write_back_recovery_refused"] == 1, s
    assert s["kvfs_write_back_failed"] == 0, s
    left = os.listdir(spool)
    assert not left, "spool files left after the recovery: %s" % left
    ok("restart: %d acknowledged chunks uploaded byte-exact; the damaged one and the unclosed "
       "one never published; nothing left in the spool" % len(want))
    a.unmount()


def write_back_rides_out_an_outage(ctx, store):
    """write_back: chunks accepted while every PUT fails (503) stay shown and sealed, their
    uploads are tried again with backoff, and once the store answers they are all stored - no
    remount, nothing dropped."""
    a = Daemon(ctx, store, ctx.path("mnt-ride"), ctx.path("cache-ride"), {"write_back": "true"},
               name="ride")
    store.control("/__fault/rules", b'[{"method": "PUT", "action": "status", "status": 503,'
                                    b' "code": "ServiceUnavailable", "count": -1}]')
    want = {}
    for i in range(3):
        name = "ride-%d.data" % i
        want[name] = chunk(name, 2 * daemon_test.MIB + i)
        write_chunk(a.mnt, name, want[name])
    deadline = time.monotonic() + 60
    while a.stats()["kvfs_write_back_retries"] < len(want):
        assert time.monotonic() < deadline, "no upload was tried again: %s" % a.stats()
        time.sleep(0.1)
    for name, data in want.items():
        assert read_direct(os.path.join(a.mnt, name)) == data, "%s reads differently" % name
        assert store.get(name) is None, "%s stored during the outage" % name
    ok("%d chunks accepted during the outage: shown on their node, uploads tried again" % len(want))
    r = subprocess.run([ctx.kvfs, "sync", a.mnt], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, "kvfs sync during the outage: %d %s" % (r.returncode, r.stderr)
    for name in want:
        assert "'%s' is not in the store" % name in r.stderr, r.stderr
    ok("kvfs sync during the outage fails naming each chunk not stored")
    store.recover()
    r = subprocess.run([ctx.kvfs, "sync", a.mnt], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "kvfs sync after the outage: %d %s" % (r.returncode, r.stderr)
    for name, data in want.items():
        assert store.get(name) == data, "%s is not in the store byte-exact" % name
    s = a.stats()
    assert s["kvfs_write_back_failed"] == 0, s
    ok("store back: kvfs sync returned 0 with all %d stored byte-exact, none dropped (%d retries)" %
       (len(want), s["kvfs_write_back_retries"]))
    a.unmount()


def a_stalled_upload_holds_no_file(ctx, store):
    """write_back: while the PUTs of accepted chunks hang, an unlink, stat, open, read and close
    of those chunks answer at once (no file's lock is held across its upload); once the store
    answers, the unlinked chunk stays gone on its node and the others are stored byte-exact."""
    a = Daemon(ctx, store, ctx.path("mnt-held"), ctx.path("cache-held"), {"write_back": "true"},
               name="held")
    store.control("/__fault/rules",
                  b'[{"method": "PUT", "action": "stall", "seconds": 15, "count": -1}]')
    names = ["held-%d.data" % i for i in range(3)]
    want = {n: chunk(n, 2 * daemon_test.MIB + i) for i, n in enumerate(names)}
    for n in names:
        write_chunk(a.mnt, n, want[n])
    time.sleep(0.5)  # the uploads are on their way, each held by the stalled PUT
    assert a.stats()["kvfs_write_back_pending"] == len(names), a.stats()
    gone = names[0]
    expect_fast("unlink of a chunk whose PUT hangs", lambda: os.unlink(os.path.join(a.mnt, gone)))
    expect_fast("stat of a chunk whose PUT hangs", lambda: os.stat(os.path.join(a.mnt, names[1])))
    got = expect_fast("open, read and close of a chunk whose PUT hangs",
                      lambda: read_direct(os.path.join(a.mnt, names[1])))
    assert got == want[names[1]], "reads differently while its upload hangs"
    assert not os.path.exists(os.path.join(a.mnt, gone)), "the unlinked chunk is still shown"
    store.recover()
    deadline = time.monotonic() + 90
    while a.stats()["kvfs_write_back_pending"] > 0:
        assert time.monotonic() < deadline, "uploads did not end: %s" % a.stats()
        time.sleep(0.2)
    for n in names[1:]:
        assert store.get(n) == want[n], "%s is not in the store byte-exact" % n
    assert not os.path.exists(os.path.join(a.mnt, gone)), \
        "the unlinked chunk is shown again after its upload ended"
    s = a.stats()
    assert s["kvfs_write_back_failed"] == 0, s
    ok("store back: %d chunks stored byte-exact; the one unlinked during its upload stays gone on "
       "its node (unlink_policy local)" % (len(names) - 1))
    a.unmount()


def two_nodes_store_one_chunk_while_one_is_pending(ctx, store):
    """At the defaults (write_back), node A's chunk is accepted and its PUT hangs; node B, which
    cannot see A's pending chunk, stores the same name. The same bytes: A's upload meets B's
    object, its checksum makes it A's too - stored, nothing failed. Another size: B's chunk is
    the object; A's upload is refused for good (EEXIST after its close returned 0: what
    write-back gives up, docs/guarantees.md), logged and counted, and A's name shows B's
    object - never A's bytes under B's, never a mix."""
    a = Daemon(ctx, store, ctx.path("mnt-pa"), ctx.path("cache-pa"), name="pending A")
    b = Daemon(ctx, store, ctx.path("mnt-pb"), ctx.path("cache-pb"), name="B")
    same = chunk("pending-same", 2 * daemon_test.MIB)
    mine, theirs = chunk("pending-A", 2 * daemon_test.MIB), chunk("pending-B", daemon_test.MIB)
    for name, a_data, b_data in (("same.pt", same, same), ("other.pt", mine, theirs)):
        store.control("/__fault/rules", json.dumps([
            {"method": "PUT", "key": name, "action": "stall", "seconds": 5,
             "count": 1}]).encode())
        write_chunk(a.mnt, name, a_data)  # accepted; its PUT hangs
        time.sleep(0.5)
        assert a.stats()["kvfs_write_back_pending"] == 1, a.stats()
        write_chunk(b.mnt, name, b_data)
        b.sync()
        assert store.get(name) == b_data, "%s: B's chunk is not the object" % name
        deadline = time.monotonic() + 90
        while a.stats()["kvfs_write_back_pending"] > 0:
            assert time.monotonic() < deadline, "A's upload did not end: %s" % a.stats()
            time.sleep(0.2)
        assert store.get(name) == b_data, "%s: A's upload replaced B's object" % name
    s = a.stats()
    assert s["kvfs_write_back_failed"] == 1, "A's refused upload (other.pt) not counted: %s" % s
    assert s["kvfs_write_back_uploaded"] >= 1, s
    time.sleep(1.5)  # past the kernel's entry timeout: A looks other.pt up again
    assert read_direct(os.path.join(a.mnt, "other.pt")) == theirs, \
        "A's name does not show B's object after its own upload was refused"
    assert read_direct(os.path.join(a.mnt, "same.pt")) == same
    ok("two nodes, one name, one pending: the same bytes are stored once and count as A's; "
       "another size leaves B's object, A's upload refused and counted, A shows B's chunk")
    a.unmount()
    b.unmount()


def reads_of_uncached_chunks_leave_threads_free(ctx, store):
    """More reads of uncached chunks than FUSE threads, all stuck on a stalled GET: they wait on
    the store-wait threads (WaitOnStore, fs/fuse/fuse_request.h), so a read of a cached chunk
    still gets a FUSE thread. The mount's blocking_timeout is above FAST, so a read queued behind the stuck ones would fail."""
    threads, timeout = 4, 12
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"),
               {"blocking_timeout": str(timeout), "fuse_threads": str(threads)}, name="b")
    cached = os.path.join(b.mnt, "cached-b.pt")
    data = chunk("cached-b", 2 * daemon_test.MIB + 5)
    write_chunk(b.mnt, "cached-b.pt", data)
    names = ["uncached-%d.pt" % i for i in range(3 * threads)]
    # The GETs stall from the start: the lookups' prefetches hang in the background too, and
    # the reads that join them wait on the store-wait threads.
    store.control("/__fault/rules",
                  b'[{"method": "GET", "key": "uncached", "action": "stall", "seconds": 600,'
                  b' "count": -1}]')
    for n in names:
        store.put(n, chunk(n, daemon_test.MIB))
        os.stat(os.path.join(b.mnt, n))  # metadata known: the open needs no request
    results = []
    readers = [threading.Thread(target=lambda n=n: results.append(
        timed(lambda: read_direct(os.path.join(b.mnt, n))))) for n in names]
    for t in readers:
        t.start()
    time.sleep(1.0)
    got = expect_fast("read of a cached chunk while %d reads of uncached chunks wait on the store "
                      "(%d FUSE threads)" % (len(names), threads), lambda: read_direct(cached))
    assert got == data, "cached read differs"
    expect_fast("stat of a cached chunk (same)", lambda: os.stat(cached))
    for t in readers:
        t.join(timeout=timeout + BOUNDED)
        assert not t.is_alive(), "a read of an uncached chunk is still waiting on the store"
    for _, err, secs in results:
        assert err is not None and err.errno in (errno.ETIMEDOUT, errno.EIO), \
            "read of a stalled chunk: %s" % err
    ok("the %d stuck reads all failed with ETIMEDOUT/EIO (longest %.1fs, blocking_timeout=%ds)" %
       (len(results), max(r[2] for r in results), timeout))
    store.recover()
    b.unmount()


def write_back_false_writers_in_close_leave_threads_free(ctx, store):
    """write_back false (tuned: at the default a close returns before its upload, see
    a_stalled_upload_holds_no_file): 20 writers in close() on a store whose PUTs stall (vLLM's fs
    tier has 16 store threads;
    the mount has 16 FUSE threads, the default): the closes wait on the store-write threads
    (WaitOnStoreWrite, fs/fuse/fuse_request.h), so a cached chunk still reads and stats, and a
    directory listing the stalled store must answer ends with ETIMEDOUT within blocking_timeout
    instead of failing at once. Every close then fails (nothing is acknowledged that is not
    stored). blocking_timeout is 12 s here (the default is 30 s) to keep the test short."""
    timeout = 12
    c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"),
               {"blocking_timeout": str(timeout), "write_back": "false"},
               name="c (write_back false)")
    cached = os.path.join(c.mnt, "cached-c.pt")
    data = chunk("cached-c", 2 * daemon_test.MIB + 9)
    write_chunk(c.mnt, "cached-c.pt", data)
    store.control("/__fault/rules",
                  b'[{"method": "PUT", "action": "stall", "seconds": 600, "count": -1}]')
    results = []
    writers = [threading.Thread(target=lambda i=i: results.append(timed(lambda: write_chunk(
        c.mnt, "stuck-%02d.pt" % i, chunk("stuck-%d" % i, 2 * daemon_test.MIB))))) for i in range(20)]
    for t in writers:
        t.start()
    time.sleep(1.5)
    got = expect_fast("read of a cached chunk while 20 writers wait in close() on stalled PUTs",
                      lambda: read_direct(cached))
    assert got == data, "cached read differs"
    expect_fast("stat of a cached chunk (same)", lambda: os.stat(cached))
    # Now the listings stall too: a readdir waits within blocking_timeout, then ETIMEDOUT (or
    # is answered from a listing already held) - never an EIO at once.
    store.control("/__fault/rules",
                  b'[{"action": "stall", "seconds": 600, "count": -1}]')
    names, err, secs = timed(lambda: os.listdir(c.mnt))
    if err is None:
        assert "cached-c.pt" in names, "ls during the outage: %s" % names
        ok("ls of the mount during the outage: answered in %.1fs (%d names)" % (secs, len(names)))
    else:
        assert err.errno == errno.ETIMEDOUT and secs >= timeout - 1, \
            "ls of a directory the stalled store must list: %s after %.1fs" % (err, secs)
        assert secs < timeout + BOUNDED, "ls took %.1fs (blocking_timeout=%ds)" % (secs, timeout)
        ok("ls of a directory the stalled store must list: ETIMEDOUT after %.1fs "
           "(blocking_timeout=%ds)" % (secs, timeout))
    for t in writers:
        t.join(timeout=timeout + BOUNDED)
        assert not t.is_alive(), "a writer is still in close() past blocking_timeout"
    failed = [r for r in results if r[1] is not None]
    assert len(failed) == 20, "%d of 20 closes on a stalled store returned 0" % (20 - len(failed))
    ok("the 20 closes all failed (%s), longest %.1fs" % (
        sorted({errno.errorcode[r[1].errno] for r in failed}), max(r[2] for r in results)))
    store.recover()
    c.unmount()


def run(ctx, fault_script):
    store = FaultStore(fault_script, ctx.work)
    try:
        sealed_chunks_outlive_a_killed_daemon(ctx, store)
        write_back_rides_out_an_outage(ctx, store)
        a_stalled_upload_holds_no_file(ctx, store)
        two_nodes_store_one_chunk_while_one_is_pending(ctx, store)
        reads_of_uncached_chunks_leave_threads_free(ctx, store)
        write_back_false_writers_in_close_leave_threads_free(ctx, store)
        opts = {"metadata_cache_ttl_secs": "1", "blocking_timeout": str(BLOCKING_TIMEOUT),
                "circuit_breaker_failures": str(BREAKER_FAILURES),
                "circuit_breaker_cooldown_ms": "1000", "fuse_threads": "8"}
        a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"), opts)
        cached = os.path.join(a.mnt, "cached.pt")
        data = chunk("outage", 3 * daemon_test.MIB + 17)
        write_chunk(a.mnt, "cached.pt", data)
        assert read_direct(cached) == data, "read back differs"
        time.sleep(1.5)  # past metadata_cache_ttl_secs: lookups would revalidate now

        store.stall_everything()
        # Requests that wait on the dead store: they must not take every FUSE thread from the
        # cached reads below.
        waiters = [threading.Thread(target=timed, args=(
            lambda i=i: os.stat(os.path.join(a.mnt, "missing-%d.pt" % i)),)) for i in range(6)]
        for t in waiters:
            t.start()
        time.sleep(0.5)
        st = expect_fast("stat of a cached chunk", lambda: os.stat(cached))
        assert st.st_size == len(data), "size %d" % st.st_size
        got = expect_fast("read of a cached chunk", lambda: read_direct(cached))
        assert got == data, "cached read differs during the outage"
        expect_fast("statfs", lambda: os.statvfs(a.mnt))
        expect_fast("kvfs stats", a.stats)
        expect_bounded_failure("stat of a name that is not cached (queued behind 6 others)",
                               lambda: os.stat(os.path.join(a.mnt, "never-written.pt")),
                               QUEUED_MISS_BOUND)
        expect_bounded_failure("writing a new chunk",
                               lambda: write_chunk(a.mnt, "new.pt", chunk("new", 2 * 1024 * 1024)))
        for t in waiters:
            t.join(timeout=QUEUED_MISS_BOUND)
            assert not t.is_alive(), "a stat of a missing name is still waiting on the store"
        ok("the waiting stats of missing names all ended")
        expect_bounded_failure("stat of another name that is not cached",
                               lambda: os.stat(os.path.join(a.mnt, "never-written-2.pt")))
        s = a.stats()
        assert s["kvfs_store_breaker_opens"] >= 1, "breaker never opened: %s" % s
        ok("circuit breaker opened %d time(s), refused %d request(s)" %
           (s["kvfs_store_breaker_opens"], s["kvfs_store_breaker_rejected"]))

        store.recover()
        time.sleep(1.5)  # the breaker's cool-down, then a probe goes out
        deadline = time.monotonic() + 30
        while True:  # the first request after the cool-down is the probe
            try:
                os.stat(os.path.join(a.mnt, "after.pt"))
                raise AssertionError("after.pt exists before it was written")
            except OSError as e:
                if e.errno == errno.ENOENT:
                    break
                assert time.monotonic() < deadline, "store back, but lookups still fail: %s" % e
                time.sleep(0.5)
        ok("store back: a missing name is ENOENT again")
        data2 = chunk("after", 2 * daemon_test.MIB)
        write_chunk(a.mnt, "after.pt", data2)
        assert read_direct(os.path.join(a.mnt, "after.pt")) == data2, "read after recovery"
        assert read_direct(cached) == data, "cached chunk after recovery"
        assert a.stats()["kvfs_store_breaker_open"] == 0, "breaker still open"
        ok("store back: writes and reads work without a remount")
        a.unmount()
    finally:
        ctx.cleanup()
        store.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--fault-server", required=True)
    args = ap.parse_args()
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        skip_or_fail("no /dev/fuse or fusermount3", "KVFS_REQUIRE_FUSE")
    daemon_test.become_subreaper()
    work = tempfile.mkdtemp(prefix="kvfs-outage-")
    ctx = Ctx(os.path.abspath(args.kvfs), "s3", work)
    try:
        run(ctx, os.path.abspath(args.fault_server))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("outage_test: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
