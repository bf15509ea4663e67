#!/usr/bin/python3
"""Hit throughput of kvfs in a container with its cache on the container's overlay root, on a host
directory and on tmpfs, beside the raw limits (the same bytes read from a host file and from a
tmpfs file), in one run. Issue: containers, item 4.

    bench/container_cache.py --kvfs-image IMG [--chunks 8] [--chunk-mib 32] [--reps 3]
                             [--out DIR]

kvfs runs in a privileged podman container (as docs/kubernetes.md's DaemonSet: the mount inside a
shared host directory) over a file:// store on a host directory; the chunks are written through
the node's view of the mount, so the cache holds them (a written chunk's spool becomes its cache
entry), then read whole from the node, each pass after dropping the page cache (tmpfs keeps its
pages: that is its point). Reported per place: GiB/s (median of the passes), the daemon's CPU
seconds per GiB read, and whether hits were FUSE passthrough. Needs root, podman (with
tests/containers/containers.conf on this machine kind) and an idle machine. ~1 min.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "containers"))
import container_test as ct  # noqa: E402  (podman helpers, the stand-in node)

MIB = 1 << 20
PLACES = [
    ("overlay-root", []),
    ("host-dir", ["-v", "{cache}:/var/cache/kvfs"]),
    ("tmpfs", ["--mount", "type=tmpfs,destination=/var/cache/kvfs,tmpfs-mode=0700"]),
]


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1")


def read_all(paths):
    n = 0
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while True:
                b = f.read(8 * MIB)
                if not b:
                    break
                n += len(b)
    return n


def cpu_secs(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_passes(paths, reps, pid=None):
    rates, cpus = [], []
    for _ in range(reps):
        drop_caches()
        c0 = cpu_secs(pid) if pid else 0
        t0 = time.perf_counter()
        n = read_all(paths)
        dt = time.perf_counter() - t0
        rates.append(n / dt / (1 << 30))
        if pid:
            cpus.append((cpu_secs(pid) - c0) / (n / (1 << 30)))
    return statistics.median(rates), (statistics.median(cpus) if cpus else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs-image", required=True)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--chunk-mib", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    os.environ.setdefault("CONTAINERS_CONF",
                          os.path.join(ROOT, "tests", "containers", "containers.conf"))
    work = tempfile.mkdtemp(prefix="kvfs-bench-ctr-")
    node = ct.Node(work)
    store = os.path.join(work, "store")
    os.makedirs(store)
    size = args.chunk_mib * MIB
    rows = []
    try:
        # The raw limits: the same amount of bytes from a host file (ext4 here) and from tmpfs.
        raw_host = os.path.join(work, "raw.bin")
        with open(raw_host, "wb") as f:
            for i in range(args.chunks):
                f.write(ct.chunk("raw-%d" % i, size))
        shm = tempfile.mkdtemp(dir="/dev/shm")
        raw_tmpfs = os.path.join(shm, "raw.bin")
        shutil.copy(raw_host, raw_tmpfs)
        for name, path in (("raw host file", raw_host), ("raw tmpfs file", raw_tmpfs)):
            rate, _ = timed_passes([path], args.reps)
            rows.append({"place": name, "gib_s": rate, "cpu_s_per_gib": None,
                         "passthrough": None})
        shutil.rmtree(shm, ignore_errors=True)
        for place, vol in PLACES:
            cname = "kvfs-bench-" + place
            cmd = ("mkdir -p /mnt/kvfs/kv; exec kvfs -f file:///store /mnt/kvfs/kv "
                   "-o cache_dir=/var/cache/kvfs")
            ct.podman("run", "-d", "--name", cname, "--privileged", "--network", "none",
                      "-v", node.kvfs + ":/mnt/kvfs:rshared", "-v", store + ":/store",
                      *[a.format(cache=node.cache) for a in vol], "--entrypoint", "sh",
                      args.kvfs_image, "-c", cmd)
            try:
                ct.wait(lambda: ct.live_mount(node.mnt), "the mount", 30)
                pid = int(ct.podman("inspect", "-f", "{{.State.Pid}}", cname).stdout)
                paths = []
                for i in range(args.chunks):
                    p = os.path.join(node.mnt, "%s-%d.bin" % (place, i))
                    with open(p, "wb") as f:
                        f.write(ct.chunk("%s-%d" % (place, i), size))
                    paths.append(p)
                rate, cpu = timed_passes(paths, args.reps, pid)
                r = ct.podman("exec", cname, "kvfs", "stats", "/mnt/kvfs/kv")
                stats = {k: int(v) for k, v in (ln.split() for ln in r.stdout.splitlines()
                                                if ln.strip())}
                rows.append({"place": "kvfs, cache on " + place, "gib_s": rate,
                             "cpu_s_per_gib": cpu,
                             "passthrough": stats["kvfs_read_passthrough_opens"] > 0})
            finally:
                ct.podman("rm", "-f", "-t", "30", cname, check=False, timeout=90)
    finally:
        node.cleanup()
        shutil.rmtree(work, ignore_errors=True)

    machine = "%s, %d CPUs, %s, kernel %s" % (
        platform.node(), os.cpu_count(), _cpu_model(), platform.release())
    lines = ["| where the bytes are | GiB/s (median of %d, page cache dropped) | daemon CPU s/GiB "
             "| hits by passthrough |" % args.reps, "|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %.2f | %s | %s |" % (
            r["place"], r["gib_s"], "-" if r["cpu_s_per_gib"] is None else
            "%.3f" % r["cpu_s_per_gib"],
            "-" if r["passthrough"] is None else ("yes" if r["passthrough"] else "no")))
    text = "%d x %d MiB chunks read whole from the node; %s\n\n%s\n" % (
        args.chunks, args.chunk_mib, machine, "\n".join(lines))
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "rows.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(dict(r, chunks=args.chunks, chunk_mib=args.chunk_mib,
                                        machine=machine)) + "\n")
        with open(os.path.join(args.out, "table.md"), "w") as f:
            f.write(text)
    return 0


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
