#!/usr/bin/env python3
"""The daemon's memory with one huge directory (issue 21 section 9): N empty objects written
straight into a file:// store's directory, one kvfs daemon, H directory handles each read to the
end (or `--pages` pages) and held open, then closed. Prints the daemon's VmRSS at each step.

    dir_memory.py --kvfs build-release/src/kvfs --names 100000 --handles 4 [--pages P] [--work DIR]

Results: bench/RESULTS-memory.md. Needs /dev/fuse and fusermount3.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from daemon_test import daemon_pids  # noqa: E402


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return -1.0


def fill(root, names):
    """Objects "d/chunk-%07d.bin" in a root of the tree layout (objstore/dir/dir_key_codec.h:
    "d/" is the directory objects/d=)."""
    objects = os.path.join(root, "objects", "d=")
    os.makedirs(objects, exist_ok=True)
    with open(os.path.join(root, "layout"), "w") as f:
        f.write("tree\n")
    for i in range(names):
        os.close(os.open(os.path.join(objects, "chunk-%07d.bin" % i),
                         os.O_CREAT | os.O_WRONLY, 0o600))


def read_handle(fd, pages):
    """Reads the directory through this handle: to the end, or about `pages` store pages."""
    n = 0
    with os.scandir(fd) as it:  # a dup of fd: the same open directory, the same kvfs handle
        for _ in it:
            n += 1
            if pages and n >= pages * 1000:
                break
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--names", type=int, default=100000)
    ap.add_argument("--handles", type=int, default=4)
    ap.add_argument("--pages", type=int, default=0, help="store pages read per handle (0: all)")
    ap.add_argument("--work", default="")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="kvfs-dirmem-")
    root, mnt, cache = (os.path.join(work, d) for d in ("store", "mnt", "cache"))
    os.makedirs(mnt, exist_ok=True)
    t0 = time.time()
    fill(root, args.names)
    print("filled %d names in %.0fs" % (args.names, time.time() - t0), flush=True)
    subprocess.run([args.kvfs, "file://" + root, mnt, "-o", "cache_dir=" + cache], check=True)
    try:
        pid = daemon_pids(mnt)[0]
        d = os.path.join(mnt, "d")
        os.stat(d)
        print("mounted: RSS %.1f MiB" % rss_mib(pid), flush=True)
        fds = []
        t0 = time.time()
        for h in range(args.handles):
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            fds.append(fd)
            n = read_handle(fd, args.pages)
            print("handle %d: %d entries read (%.0fs), RSS %.1f MiB" % (
                h + 1, n, time.time() - t0, rss_mib(pid)), flush=True)
        print("%d handles open: RSS %.1f MiB" % (len(fds), rss_mib(pid)), flush=True)
        for fd in fds:
            os.close(fd)
        time.sleep(1)
        print("all closed: RSS %.1f MiB" % rss_mib(pid), flush=True)
    finally:
        subprocess.run(["fusermount3", "-u", mnt])
        time.sleep(1)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
