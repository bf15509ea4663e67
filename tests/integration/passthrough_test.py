#!/usr/bin/env python3
"""Cache hits read by the kernel from the cache file (FUSE passthrough), through the real daemon:
the bytes are exactly the object's (to its end: the cache file holds nothing else), every way an
engine reads (buffered, pread, O_DIRECT, mmap), on the writing node and on a second node that
downloaded the chunk; the kernel's per-inode rules (fs/fuse/passthrough_table.h) never turn into
EIO; `passthrough: false` serves hits from the daemon.

    passthrough_test.py --kvfs PATH/kvfs --backend dir|s3 [--only CASE[,CASE...]]

Needs a kvfs built with libfuse 3.16+ (`kvfs --version` says "passthrough") and a kernel with
FUSE passthrough (6.9+); otherwise the cases check that hits are served by the daemon, unless
KVFS_REQUIRE_PASSTHROUGH=1 (CI), which fails then.
"""
import errno
import mmap
import os
import subprocess
import sys
import time

import daemon_test
from daemon_test import Daemon, chunk, ok, read_direct, sha, write_chunk

MIB = daemon_test.MIB


def built_with_passthrough(ctx):
    r = subprocess.run([ctx.kvfs, "--version"], capture_output=True, text=True, check=True)
    have = "passthrough" in r.stdout and "no passthrough" not in r.stdout
    if not have and os.environ.get("KVFS_REQUIRE_PASSTHROUGH") == "1":
        raise AssertionError("KVFS_REQUIRE_PASSTHROUGH=1 but: " + r.stdout.strip())
    ok(r.stdout.strip())
    return have


def read_all_ways(path, data, shared_mmap=True):
    """Every read an engine makes returns exactly `data`, and nothing past its end (a shared
    mapping of a hit works only as a passthrough open)."""
    with open(path, "rb") as f:
        got = f.read()
    assert len(got) == len(data) and sha(got) == sha(data), \
        "buffered read to EOF: %d bytes, want %d" % (len(got), len(data))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert os.fstat(fd).st_size == len(data)
        assert os.pread(fd, 4096, len(data) - 100) == data[-100:], "pread across the end"
        assert os.pread(fd, 4096, len(data)) == b"", "pread at the end"
        flags = mmap.MAP_SHARED if shared_mmap else mmap.MAP_PRIVATE
        with mmap.mmap(fd, 0, flags, mmap.PROT_READ) as m:
            assert sha(m[:]) == sha(data), "read-only mapping"
    finally:
        os.close(fd)
    assert sha(read_direct(path, len(data))) == sha(data), "O_DIRECT read"


def case_hits(ctx):
    """Hits on the writing node and on a second node are passthrough opens with exact bytes."""
    have = built_with_passthrough(ctx)
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("a"), ctx.path("cache-a"))
    b = Daemon(ctx, store, ctx.path("b"), ctx.path("cache-b"), name="b")
    data = chunk("pt-hits", 12 * MIB + 12345)  # not a multiple of a page
    write_chunk(a.mnt, "c.pt", data)
    a.sync()  # hits: the chunk is the cache's entry once its upload is recorded
    s0 = a.settled()
    read_all_ways(os.path.join(a.mnt, "c.pt"), data, shared_mmap=have)
    s1 = a.settled()
    opens = s1["kvfs_read_passthrough_opens"] - s0["kvfs_read_passthrough_opens"]
    if have:
        assert opens >= 3, "writing node: %d passthrough opens: %s" % (opens, s1)
        assert s1["kvfs_read_bytes_from_cache"] == s0["kvfs_read_bytes_from_cache"], \
            "the daemon served bytes of a passthrough hit"
    ok("writing node: %d passthrough opens, bytes exact to the end" % opens)
    # Node b downloads it first (served by the daemon), then hits are passthrough.
    with open(os.path.join(b.mnt, "c.pt"), "rb") as f:
        assert sha(f.read()) == sha(data)
    t0 = b.settled()
    read_all_ways(os.path.join(b.mnt, "c.pt"), data, shared_mmap=have)
    t1 = b.settled()
    opens = t1["kvfs_read_passthrough_opens"] - t0["kvfs_read_passthrough_opens"]
    if have:
        assert opens >= 3, "second node: %d passthrough opens: %s" % (opens, t1)
    ok("second node: downloaded once, then %d passthrough opens" % opens)
    a.unmount()
    b.unmount()


def case_rules(ctx):
    """Opens beside a passthrough open: O_DIRECT and buffered ones read; a rewrite is EBUSY and
    changes nothing; an unlinked open file stays readable."""
    have = built_with_passthrough(ctx)
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("a"), ctx.path("cache-a"))
    p = os.path.join(a.mnt, "r.pt")
    data = chunk("pt-rules", 4 * MIB)
    write_chunk(a.mnt, "r.pt", data)
    a.sync()
    # The writer's last release reaches the daemon after close() returned; until then the chunk
    # is still the writer's local file and an open of it is not a passthrough open.
    held = open(p, "rb")
    deadline = time.time() + 10
    while have and time.time() < deadline:
        before = a.stats()["kvfs_read_passthrough_opens"]
        again = open(p, "rb")
        if a.stats()["kvfs_read_passthrough_opens"] > before:
            held.close()
            held = again
            break
        again.close()
        time.sleep(0.05)
    assert sha(read_direct(p, len(data))) == sha(data)
    with open(p, "rb") as f:
        assert sha(f.read()) == sha(data)
    if have:
        try:
            with open(p, "wb") as w:
                w.write(b"x")
            raise AssertionError("a rewrite beside a passthrough open was allowed")
        except OSError as e:
            assert e.errno == errno.EBUSY, "rewrite beside a passthrough open: %s" % e
        ok("rewrite beside a passthrough open: EBUSY")
    assert sha(held.read()) == sha(data), "the held open after the refused rewrite"
    held.close()
    with open(p, "rb") as f:
        assert sha(f.read()) == sha(data), "the chunk after the refused rewrite"
    held = open(p, "rb")
    os.unlink(p)
    assert os.fstat(held.fileno()).st_size == len(data)
    assert sha(held.read()) == sha(data), "an open, unlinked hit"
    held.close()
    ok("an open, unlinked passthrough hit keeps its bytes")
    a.unmount()


def case_off(ctx):
    """passthrough: false - hits are served by the daemon, bytes exact."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("a"), ctx.path("cache-a"), opts={"passthrough": "false"})
    data = chunk("pt-off", 5 * MIB + 7)
    write_chunk(a.mnt, "o.pt", data)
    s0 = a.settled()
    read_all_ways(os.path.join(a.mnt, "o.pt"), data, shared_mmap=False)
    s1 = a.settled()
    assert s1["kvfs_read_passthrough_opens"] == 0, s1
    assert s1["kvfs_read_bytes_from_cache"] - s0["kvfs_read_bytes_from_cache"] >= len(data), s1
    ok("no passthrough opens; %d bytes served by the daemon" %
       (s1["kvfs_read_bytes_from_cache"] - s0["kvfs_read_bytes_from_cache"]))
    a.unmount()


def case_writes(ctx):
    """passthrough_writes (tuned: off by default): the kernel writes the spool - no write request
    reaches the daemon - and what is published is exactly the bytes, buffered and O_DIRECT; the
    writer reads its own bytes; a second version of a name being written is EBUSY; a chunk past
    max_chunk_bytes is refused at close (EFBIG). At the defaults the daemon serves the writes."""
    have = built_with_passthrough(ctx)
    store = ctx.store()
    d = Daemon(ctx, store, ctx.path("d"), ctx.path("cache-d"), name="defaults")
    data = chunk("ptw-default", 3 * MIB + 11)
    write_chunk(d.mnt, "d.pt", data)
    s = d.stats()
    assert s["kvfs_write_passthrough_opens"] == 0 and s["kvfs_write_bytes_served"] == len(data), s
    ok("defaults: the daemon served the %d bytes written" % len(data))
    d.unmount()
    a = Daemon(ctx, store, ctx.path("a"), ctx.path("cache-a"),
               opts={"passthrough_writes": "true", "max_chunk_bytes": "16MiB"}, name="ptw")
    data = chunk("ptw-buffered", 5 * MIB + 7)
    p = os.path.join(a.mnt, "w.pt")
    with open(p, "wb") as f:
        f.write(data[:MIB])
        assert os.fstat(f.fileno()).st_size == MIB, "fstat while written"
        with open(p, "rb") as r:  # the writer reads its own bytes (the same backing spool)
            assert r.read() == data[:MIB], "the writer's own read"
        if have:
            try:
                open(p, "wb")  # another version of the name
                raise AssertionError("a second version of a name the kernel is writing")
            except OSError as e:
                assert e.errno == errno.EBUSY, "second version: %s" % e
        f.write(data[MIB:])
    a.sync()
    assert store.objects().get("w.pt") == (len(data), sha(data)), "published bytes differ"
    fd = os.open(os.path.join(a.mnt, "direct.pt"), os.O_CREAT | os.O_WRONLY | os.O_TRUNC |
                 os.O_DIRECT, 0o644)
    buf = mmap.mmap(-1, 4 * MIB)  # page-aligned for O_DIRECT
    direct = chunk("ptw-direct", 4 * MIB)
    buf.write(direct)
    assert os.write(fd, buf) == 4 * MIB
    os.close(fd)
    a.sync()
    assert store.objects().get("direct.pt") == (len(direct), sha(direct)), "O_DIRECT: bytes"
    s = a.stats()
    if have:
        assert s["kvfs_write_passthrough_opens"] >= 2, s
        assert s["kvfs_write_bytes_served"] == 0, s
        ok("%d passthrough write opens, 0 bytes through the daemon" %
           s["kvfs_write_passthrough_opens"])
    big = os.path.join(a.mnt, "big.pt")
    with open(big, "wb") as f:
        f.write(b"b" * (17 * MIB))
        try:
            f.close()
            raise AssertionError("17 MiB past max_chunk_bytes 16 MiB was accepted")
        except OSError as e:
            assert e.errno == errno.EFBIG, "past max_chunk_bytes: %s" % e
    a.sync()
    assert not os.path.exists(big) and "big.pt" not in store.objects()
    ok("past max_chunk_bytes: EFBIG at close, nothing published")
    a.unmount()


CASES = [("hits", case_hits), ("rules", case_rules), ("off", case_off), ("writes", case_writes)]

if __name__ == "__main__":
    daemon_test.CASES = CASES
    sys.exit(daemon_test.main())
