#!/usr/bin/env python3
"""The fixed cost of storing a chunk through kvfs, per chunk and per MiB (issue 43 item 6).

One writer stores N chunks the way LMCache's fs adapter does (a temp file per key, one write,
close, rename into place) through a kvfs mount at its defaults, then `kvfs sync` (every chunk in
the store). Measured per chunk: the writer's CPU, the daemon's CPU (utime+stime from /proc, from
the first open to the sync's end) and the wall time; at two sizes, the cost per chunk is split
into a fixed part and a per-MiB part (the line through the two points). With --perf, the
daemon's CPU at the smaller size is sampled with `perf record -g` and its top functions printed.

    KVFS_TEST_S3_ENDPOINT=... KVFS_TEST_S3_ACCESS_KEY=... KVFS_TEST_S3_SECRET_KEY=... \\
        bench/store_fixed_cost.py [--kvfs build-release/kvfs] [--chunks 128] [--sizes 2,8]
        [--reps 3] [--opt write_back=false] [--perf]

Runs against the S3 server of KVFS_TEST_S3_ENDPOINT (tests/s3server/rgw.sh starts one); its
own CPU is not counted. Medians over --reps repetitions, each on a fresh bucket and mount.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import daemon_test as dt  # noqa: E402 - the suite's mount and bucket helpers

MIB = 1 << 20
TICK = os.sysconf("SC_CLK_TCK")

WRITER = r"""
import os, resource, sys, time
mnt, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = os.urandom(size)
t0 = time.monotonic()
for i in range(n):
    tmp = os.path.join(mnt, "c-%05d.data.tmp" % i)
    with open(tmp, "wb") as f:
        f.write(data[:8] + (b"%08d" % i) + data[16:])
    os.rename(tmp, tmp[:-4])
ru = resource.getrusage(resource.RUSAGE_SELF)
print(time.monotonic() - t0, ru.ru_utime + ru.ru_stime, flush=True)
"""


def daemon_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def one_run(ctx, n, size, opts, perf_out=None):
    store = ctx.store()
    d = dt.Daemon(ctx, store, ctx.path("mnt-%d-%d" % (size, time.monotonic_ns())),
                  ctx.path("cache-%d-%d" % (size, time.monotonic_ns())), opts, name="bench")
    perf = None
    if perf_out:
        perf = subprocess.Popen(["perf", "record", "-q", "-g", "-F", "999", "-p", str(d.pid),
                                 "-o", perf_out], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(0.5)
    c0, t0 = daemon_cpu(d.pid), time.monotonic()
    r = subprocess.run([sys.executable, "-c", WRITER, d.mnt, str(n), str(size)],
                       capture_output=True, text=True, check=True)
    task_s, writer_cpu = (float(x) for x in r.stdout.split())
    d.sync()
    wall, cpu = time.monotonic() - t0, daemon_cpu(d.pid) - c0
    if perf:
        perf.send_signal(2)
        perf.wait()
    d.unmount()
    return {"task_ms": task_s * 1000 / n, "durable_ms": wall * 1000 / n,
            "writer_cpu_ms": writer_cpu * 1000 / n, "daemon_cpu_ms": cpu * 1000 / n}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", default=os.path.join(HERE, "..", "build-release", "kvfs"))
    ap.add_argument("--chunks", type=int, default=128)
    ap.add_argument("--sizes", default="2,8", help="two chunk sizes in MiB")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--opt", action="append", default=[], help="a mount option KEY=VALUE")
    ap.add_argument("--perf", action="store_true", help="perf record the daemon (first size)")
    args = ap.parse_args()
    opts = dict(o.split("=", 1) for o in args.opt)
    sizes = [int(s) for s in args.sizes.split(",")]
    dt.become_subreaper()
    work = tempfile.mkdtemp(prefix="kvfs-fixedcost-")
    ctx = dt.Ctx(os.path.abspath(args.kvfs), "s3", work)
    rows = {}
    try:
        for rep in range(args.reps):
            for size in sizes:
                perf_out = os.path.join(work, "perf.data") if (
                    args.perf and size == sizes[0] and rep == 0) else None
                rows.setdefault(size, []).append(
                    one_run(ctx, args.chunks, size * MIB, opts, perf_out))
        print("\n%d chunks per run, %d repetitions, options %s; medians per chunk:" % (
            args.chunks, args.reps, opts or "defaults"))
        print("| MiB | store task ms | durable ms | writer CPU ms | daemon CPU ms |")
        print("| --- | --- | --- | --- | --- |")
        med = {}
        for size in sizes:
            med[size] = {k: statistics.median(r[k] for r in rows[size]) for k in rows[size][0]}
            m = med[size]
            print("| %d | %.2f | %.2f | %.2f | %.2f |" % (
                size, m["task_ms"], m["durable_ms"], m["writer_cpu_ms"], m["daemon_cpu_ms"]))
        if len(sizes) == 2:
            a, b = sizes
            for k in ("writer_cpu_ms", "daemon_cpu_ms"):
                per_mib = (med[b][k] - med[a][k]) / (b - a)
                print("%s: fixed %.2f ms per chunk + %.3f ms per MiB" % (
                    k, med[a][k] - per_mib * a, per_mib))
        if args.perf:
            rep = subprocess.run(["perf", "report", "-i", os.path.join(work, "perf.data"),
                                  "--no-children", "--sort", "dso,sym", "--stdio", "-g", "none",
                                  "--percent-limit", "1.5"], capture_output=True, text=True)
            print("\nperf, daemon at %d MiB:" % sizes[0])
            print("\n".join(ln for ln in rep.stdout.splitlines() if ln and ln[0] != "#"))
    finally:
        ctx.cleanup()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
