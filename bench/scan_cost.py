#!/usr/bin/env python3
"""What a scan of a directory of uncached chunks costs on a fresh node, with prefetch on lookup at
its default (on) and off: issue 45's "`ls -l` of 10,000 uncached chunks no more expensive than
today" (before prefetch, a scan's stats started no download by construction).

One writer mount stores --chunks chunks of --chunk-kib KiB in one directory (then `kvfs sync`);
then, --reps times alternately, a fresh mount (empty cache) with `prefetch` on and one with it off
runs `ls -l` and `du -s` of the directory, --settle-s after it mounted. Per run: wall time, the daemon's CPU (utime + stime
from /proc), and from `kvfs stats` the bytes read from the store and the prefetches started.
Prints one JSON line per measurement and a Markdown table (medians, ranges).

    KVFS_TEST_S3_ENDPOINT=... bench/scan_cost.py --kvfs build-release/kvfs [--chunks 10000]

Uses the test harness's S3 bucket and daemon helpers (tests/integration/daemon_test.py): a fresh
bucket on KVFS_TEST_S3_ENDPOINT, removed at the end.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import daemon_test as dt  # noqa: E402

TOOLS = {"ls -l": ["ls", "-l"], "du -s": ["du", "-s"]}


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, clock ticks


def measure(ctx, store, rep, prefetch, directory, settle_s):
    name = "r%d-%s" % (rep, "on" if prefetch else "off")
    d = dt.Daemon(ctx, store, ctx.path("mnt-" + name), ctx.path("cache-" + name),
                  {"prefetch": "true" if prefetch else "false"}, name=name)
    rows = []
    try:
        # A new mount first reads the fleet feed (the writer's names): let that settle, so that
        # its start-up work is not counted in the scan.
        time.sleep(settle_s)
        for tool, cmd in TOOLS.items():
            s0, c0, t0 = d.settled(), cpu_ticks(d.pid), time.monotonic()
            r = subprocess.run(cmd, cwd=os.path.join(d.mnt, directory), capture_output=True,
                               text=True, timeout=600)
            wall = time.monotonic() - t0
            assert r.returncode == 0, "%s: %s" % (tool, r.stderr)
            s1 = d.settled()  # any download a scan started has ended
            cpu = (cpu_ticks(d.pid) - c0) / os.sysconf("SC_CLK_TCK")
            rows.append({"tool": tool, "prefetch": prefetch, "rep": rep, "wall_s": wall,
                         "daemon_cpu_s": cpu,
                         "bytes_from_store": s1["kvfs_read_bytes_from_store"] -
                         s0["kvfs_read_bytes_from_store"],
                         "prefetches_started": s1["kvfs_prefetches_started"] -
                         s0["kvfs_prefetches_started"]})
    finally:
        d.unmount()
    return rows


def cell(values, fmt):
    return "%s (%s-%s)" % (fmt % statistics.median(values), fmt % min(values), fmt % max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--chunks", type=int, default=10000)
    ap.add_argument("--chunk-kib", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--settle-s", type=float, default=5.0,
                    help="seconds between a mount and its scans (the feed's start-up)")
    ap.add_argument("--json", help="append the rows here")
    args = ap.parse_args()
    dt.require(s3=True)
    work = tempfile.mkdtemp(prefix="kvfs-scan-")
    ctx = dt.Ctx(os.path.abspath(args.kvfs), "s3", work)
    rows = []
    try:
        store = ctx.store()
        w = dt.Daemon(ctx, store, ctx.path("mnt-w"), ctx.path("cache-w"), name="writer")
        os.makedirs(os.path.join(w.mnt, "scan"))
        data = os.urandom(args.chunk_kib * 1024)
        t0 = time.monotonic()
        for i in range(args.chunks):
            with open(os.path.join(w.mnt, "scan", "c%06d.pt" % i), "wb") as f:
                f.write(data)
        w.sync()
        dt.ok("stored %d chunks of %d KiB in %.1f s" % (args.chunks, args.chunk_kib,
                                                        time.monotonic() - t0))
        w.unmount()
        for rep in range(args.reps):
            for prefetch in (True, False) if rep % 2 == 0 else (False, True):
                rows += measure(ctx, store, rep, prefetch, "scan", args.settle_s)
    finally:
        ctx.cleanup()
    out = open(args.json, "a") if args.json else None
    for r in rows:
        line = json.dumps(dict(r, chunks=args.chunks, chunk_kib=args.chunk_kib))
        print(line)
        if out:
            out.write(line + "\n")
    print("\n| scan of %d uncached chunks | prefetch | wall s | daemon CPU s | bytes from the store "
          "| prefetches started |" % args.chunks)
    print("| --- | --- | --- | --- | --- | --- |")
    for tool in TOOLS:
        for prefetch in (True, False):
            sel = [r for r in rows if r["tool"] == tool and r["prefetch"] == prefetch]
            print("| %s | %s | %s | %s | %d | %d |" % (
                tool, "on (default)" if prefetch else "off", cell([r["wall_s"] for r in sel], "%.2f"),
                cell([r["daemon_cpu_s"] for r in sel], "%.2f"),
                max(r["bytes_from_store"] for r in sel), max(r["prefetches_started"] for r in sel)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
