#!/usr/bin/env python3
"""Prefetch on lookup, through real kvfs daemons at the defaults a user gets:

- an engine's lookups of a request's chunks (LMCache's lookup-and-lock: one stat of each key, no
  listing) start their downloads on this node; the loads that follow join them: every chunk is
  downloaded once, read byte for byte, and counted as a miss;
- scans download nothing: `ls -l`, `du`, `find -size` and Python's scandir + stat (an engine's
  start-up scan) of directories of uncached chunks start no prefetch and read no byte;
- a chunk prefetched here and then deleted by another node (unlink_policy remote there) is gone
  here too, once the fleet feed says so: never served from the prefetched copy after that;
- with `prefetch: false` (named so) an open without a read transfers nothing (llm-d's check).

    prefetch_test.py --kvfs PATH/kvfs --backend s3|dir

Prints `N passed, N failed`; exit 1 on a failure, 77 when skipped (no FUSE / no S3 endpoint)
unless KVFS_REQUIRE_FUSE=1 / KVFS_REQUIRE_S3=1.
"""
import argparse
import errno
import os
import subprocess
import sys

import daemon_test as dt
from engines_two_mounts_replay import run_checks
from fleet_visibility_test import payload, read, write
from whole_chunks_test import wait_for

KIB = 1 << 10
MIB = 1 << 20


def delta(after, before, name):
    return after.get(name, 0) - before.get(name, 0)


def run(ctx, checks):
    store = ctx.store()
    a = dt.Daemon(ctx, store, ctx.path("mnt-A"), ctx.path("cache-A"),
                  {"unlink_policy": "remote"}, name="A (writer; unlink_policy remote)")
    b = dt.Daemon(ctx, store, ctx.path("mnt-B"), ctx.path("cache-B"), {}, name="B (defaults)")

    request = {"req/chunk-%02d.pt" % i: payload(i, 2 * MIB + 4099 * i) for i in range(16)}
    os.makedirs(os.path.join(a.mnt, "req"))
    for name, data in request.items():
        write(os.path.join(a.mnt, name), data)
    a.sync()  # the request is in the store (a close returns before its upload)

    def lookups_then_loads():
        s0 = b.settled()
        for name in request:  # lookup-and-lock: each key once, no listing
            assert os.path.exists(os.path.join(b.mnt, name)), "%s not found on B" % name
        s1 = b.settled()  # the prefetches have ended
        started = delta(s1, s0, "kvfs_prefetches_started")
        assert started == len(request), "prefetches started: %d of %d" % (started, len(request))
        total = sum(len(d) for d in request.values())
        got = delta(s1, s0, "kvfs_read_bytes_from_store")
        assert got == total, "prefetched %d bytes, the chunks are %d" % (got, total)
        for name, data in request.items():
            assert read(os.path.join(b.mnt, name)) == data, "%s differs on B" % name
        s2 = b.settled()
        assert delta(s2, s1, "kvfs_read_bytes_from_store") == 0, "a load downloaded again"
        assert delta(s2, s1, "kvfs_prefetches_joined") == len(request), s2
        assert delta(s2, s1, "kvfs_read_misses") == len(request), "joined loads are misses"
        assert s2["kvfs_prefetch_bytes_held"] == 0, s2
        dt.ok("16 lookups started 16 downloads (%d bytes); the loads joined them" % got)
    checks.run("an engine's lookups start the downloads its loads join (16 x 2 MiB, defaults)",
               lookups_then_loads)

    scans = {
        "ls -l": ["ls", "-l"],
        "du": ["du", "-s"],
        "find -size": ["find", ".", "-size", "+1k"],
        "scandir + stat": [sys.executable, "-c",
                           "import os\nfor e in os.scandir('.'): e.stat()"],
    }
    for i, tool in enumerate(scans):
        os.makedirs(os.path.join(a.mnt, "scan%d" % i))
        for j in range(50):
            write(os.path.join(a.mnt, "scan%d" % i, "c%03d.bin" % j), payload(j, 64 * KIB))
    a.sync()

    def scans_download_nothing():
        c = dt.Daemon(ctx, store, ctx.path("mnt-C"), ctx.path("cache-C"), {}, name="C (defaults)")
        for i, (tool, cmd) in enumerate(scans.items()):
            s0 = c.settled()
            r = subprocess.run(cmd, cwd=os.path.join(c.mnt, "scan%d" % i), capture_output=True,
                               text=True, timeout=60)
            assert r.returncode == 0, "%s: %s" % (tool, r.stderr)
            s1 = c.settled()
            assert delta(s1, s0, "kvfs_prefetches_started") == 0, "%s prefetched: %s" % (tool, s1)
            assert delta(s1, s0, "kvfs_read_bytes_from_store") == 0, "%s downloaded" % tool
            assert delta(s1, s0, "kvfs_lookups_of_scans") >= 50, "%s: scan lookups %d" % (
                tool, delta(s1, s0, "kvfs_lookups_of_scans"))
            dt.ok("%s of 50 uncached chunks: 0 bytes downloaded, no prefetch" % tool)
        c.unmount()
    checks.run("ls -l, du, find -size and scandir + stat download nothing", scans_download_nothing)

    def deleted_between_prefetch_and_read():
        name = "req/gone.pt"
        data = payload(77, 1 * MIB)
        write(os.path.join(a.mnt, name), data)
        a.sync()
        path = os.path.join(b.mnt, name)
        s0 = b.settled()
        wait_for(lambda: os.path.exists(path), "B to find %s" % name, 5)  # the prefetch starts
        s1 = b.settled()
        assert delta(s1, s0, "kvfs_prefetches_started") == 1, "B did not prefetch it: %s" % s1
        os.unlink(os.path.join(a.mnt, name))  # A deletes the object (unlink_policy remote)
        wait_for(lambda: not os.path.exists(path), "B to see A's delete of %s" % name, 15)
        dt.expect_errno(lambda: read(path), errno.ENOENT, "read of a chunk deleted elsewhere")
    checks.run("a chunk another node deletes after the prefetch is gone here too",
               deleted_between_prefetch_and_read)

    def prefetch_off_open_without_read():
        d = dt.Daemon(ctx, store, ctx.path("mnt-D"), ctx.path("cache-D"), {"prefetch": "false"},
                      name="D (prefetch false)")
        s0 = d.settled()
        for name in request:
            with open(os.path.join(d.mnt, name), "rb"):
                pass  # llm-d's existence check: open + close
        s1 = d.settled()
        assert delta(s1, s0, "kvfs_read_bytes_from_store") == 0, "downloaded %d" % delta(
            s1, s0, "kvfs_read_bytes_from_store")
        assert delta(s1, s0, "kvfs_prefetches_started") == 0
        d.unmount()
    checks.run("prefetch false: an open without a read transfers nothing",
               prefetch_off_open_without_read)
    b.unmount()
    a.unmount()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--backend", choices=("s3", "dir"), default="s3")
    ap.add_argument("--opt", action="append")
    return run_checks("prefetch_test", ap.parse_args(), run, "kvfs-prefetch-")


if __name__ == "__main__":
    sys.exit(main())
