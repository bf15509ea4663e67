#!/usr/bin/env python3
"""The inference engines' own KV-cache I/O against a directory (python3 stdlib only).

Does what LMCache's LocalDiskBackend does (see /work/shared/notes/engine-io.md): a flat directory of
`<model>@1@0@<16 hex>@bfloat16.pt` chunk files; write = open('wb') + one write of the whole chunk +
close (or os.open(O_CREAT|O_WRONLY|O_DIRECT) without O_TRUNC + one os.write); read = open + one
readinto of the whole chunk (buffered, or O_DIRECT with an aligned buffer); lookups =
os.path.exists on existing and on missing names. Prints one JSON object per measurement.

Names and contents are deterministic in (--tag, set, size, threads, index), so the write phases
and the read phases can run in separate invocations with a remount in between (run.sh does that so
that "cold" reads really start cold). All expected bytes are generated before any timing starts,
and reads are verified after the timed phase (against per-chunk destination buffers), so
verification never counts as I/O time.

Phases (--phases, comma separated, run in this order for every thread count and chunk size):
  write              set "b": buffered writes of --chunks chunks; then (untimed) the
                     --ttfb-chunks chunks of set "t" that the ttfb phase reads cold
  write_odirect      set "d": O_DIRECT writes (skipped, with a note, when the size is not a
                     multiple of statvfs f_bsize - LMCache would then not use O_DIRECT either)
  ttfb               open + read of 1 byte on each (cold) chunk of set "t", one at a time
  read_cold          set "b", buffered readinto, first read since the mount
  read_cold_odirect  set "d", O_DIRECT readinto
  read_warm          set "b" again (second read)
  read_warm_odirect  set "d" again
  read_hit           set "b" again after the kernel's page cache is dropped (needs root): a hit
                     in the filesystem's own cache, as after a restart or once the kernel has
                     reclaimed the pages (tmpfs files stay in memory)
  lookup             per thread count: os.path.exists on existing names, then on missing names
  all                all of the above in one go (no remount: "cold" is then not cold)
"""
import argparse
import atexit
import ctypes
import hashlib
import json
import mmap
import os
import sys
import threading
import time

MODEL = "meta-llama-Llama-3.1-8B-Instruct"
MIB = 1 << 20
ALL_PHASES = ["write", "write_odirect", "ttfb", "read_cold", "read_cold_odirect", "read_warm",
              "read_warm_odirect", "read_hit", "lookup"]

_libc = ctypes.CDLL(None, use_errno=True)
_libc.memcmp.restype = ctypes.c_int
_libc.memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]


def addr_of(mm, offset=0):
    # The temporary ctypes object releases its buffer export at once; the address stays valid
    # as long as the mmap is open.
    return ctypes.addressof(ctypes.c_char.from_buffer(mm)) + offset


def chunk_name(tag, set_, size_mib, threads, i):
    h = hashlib.sha256(f"{tag}/{set_}/{size_mib}/{threads}/{i}".encode()).hexdigest()[:16]
    return f"{MODEL}@1@0@{h}@bfloat16.pt"


class Content:
    """Deterministic chunk bytes: one random base buffer per size (SHAKE-256 of the size), each
    chunk a page-aligned window into it at a name-dependent offset. Windows of an mmap are
    page-aligned, so the same memory serves as the O_DIRECT write buffer. raw_s3.cc uses the
    same rule."""

    WINDOWS = 256

    def __init__(self, size):
        self.size = size
        n = size + self.WINDOWS * 4096
        self.mm = mmap.mmap(-1, n)
        self.mm[:] = hashlib.shake_256(f"kvbench/{size}".encode()).digest(n)
        self.base = addr_of(self.mm)

    def offset(self, name):
        h = hashlib.sha256(name.encode()).digest()
        return int.from_bytes(h[:8], "little") % self.WINDOWS * 4096

    def view(self, name):
        off = self.offset(name)
        return memoryview(self.mm)[off:off + self.size]

    def matches(self, name, buf_addr):
        return _libc.memcmp(buf_addr, self.base + self.offset(name), self.size) == 0


class Buffers:
    """Page-aligned, pre-faulted destination buffers, one per chunk of a phase."""

    def __init__(self, size, count):
        self.size = size
        self.mms = []
        for _ in range(count):
            mm = mmap.mmap(-1, size)
            ctypes.memset(addr_of(mm), 0, size)
            self.mms.append(mm)

    def clear(self):
        for mm in self.mms:
            ctypes.memset(addr_of(mm), 0, self.size)


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def run_parallel(n_items, threads, fn):
    """Runs fn(i) for i in range(n_items) on `threads` workers. Returns (results, wall seconds,
    first error text)."""
    results = [None] * n_items
    errors = []
    lock = threading.Lock()
    next_i = [0]
    start = threading.Barrier(threads + 1)

    def worker():
        start.wait()
        while True:
            with lock:
                i = next_i[0]
                next_i[0] += 1
            if i >= n_items:
                return
            try:
                results[i] = fn(i)
            except OSError as e:
                with lock:
                    errors.append(f"{type(e).__name__}: {e}")

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    return results, time.perf_counter() - t0, errors


class Bench:
    def __init__(self, args):
        self.a = args
        self.out = open(args.out, "a") if args.out else sys.stdout
        self.bsize = os.statvfs(args.dir).f_bsize
        self.contents = {}
        self.cpu = CpuMeter(args.pid or find_mount_pid(args.dir))

    def emit(self, rec):
        base = {"ts": round(time.time(), 3), "system": self.a.system, "rep": self.a.rep}
        base.update({k: v for k, v in rec.items() if v is not None})
        self.out.write(json.dumps(base) + "\n")
        self.out.flush()

    def content(self, size_mib):
        if size_mib not in self.contents:
            self.contents = {size_mib: Content(size_mib * MIB)}  # one size in memory at a time
        return self.contents[size_mib]

    def names(self, set_, size_mib, threads):
        n = {"b": self.a.chunks, "d": self.a.odirect_chunks, "t": self.a.ttfb_chunks}[set_]
        return [chunk_name(self.a.tag, set_, size_mib, threads, i) for i in range(n)]

    def path(self, name):
        return os.path.join(self.a.dir, name)

    def odirect_ok(self, size_mib):
        return (size_mib * MIB) % self.bsize == 0

    # --- writes ---
    def write_one(self, name, data, odirect):
        p = self.path(name)
        t0 = time.perf_counter()
        if odirect:
            fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o644)
            os.write(fd, data)  # LMCache ignores the return value
            t1 = time.perf_counter()
            os.close(fd)
        else:
            f = open(p, "wb")
            f.write(data)
            t1 = time.perf_counter()
            f.close()
        return t1 - t0, time.perf_counter() - t1

    def phase_write(self, phase, size_mib, threads):
        odirect = phase == "write_odirect"
        rec = {"phase": phase, "size_mib": size_mib, "threads": threads}
        if odirect and not self.odirect_ok(size_mib):
            self.emit(dict(rec, skipped=True, note=f"size not a multiple of f_bsize={self.bsize}"))
            return
        c = self.content(size_mib)
        names = self.names("d" if odirect else "b", size_mib, threads)
        views = [c.view(n) for n in names]
        self.cpu.start()
        res, wall, errs = run_parallel(len(names), threads,
                                       lambda i: self.write_one(names[i], views[i], odirect))
        closes = [r[1] for r in res if r]
        stores = [r[0] + r[1] for r in res if r]  # open to close returned: what one store costs
        ok = len(closes)
        rec.update(self.cpu.fields(ok * size_mib))
        self.emit(dict(rec, chunks=len(names), bytes=ok * c.size, seconds=round(wall, 6),
                       mib_s=round(ok * size_mib / wall, 2) if wall > 0 else None,
                       close_p50_ms=ms(percentile(closes, 50)),
                       close_p99_ms=ms(percentile(closes, 99)),
                       store_p50_ms=ms(percentile(stores, 50)),
                       store_p99_ms=ms(percentile(stores, 99)),
                       errors=len(errs), note=errs[0] if errs else None))
        if not odirect:
            for n in self.names("t", size_mib, threads):  # untimed: cold chunks for ttfb
                try:
                    self.write_one(n, c.view(n), False)
                except OSError as e:
                    print(f"kvbench: writing ttfb chunk {n}: {e}", file=sys.stderr)

    # --- reads ---
    def read_one(self, name, buf, odirect, lat=None):
        p = self.path(name)
        t0 = time.perf_counter()
        if odirect:
            with os.fdopen(os.open(p, os.O_RDONLY | os.O_DIRECT), "rb", buffering=0) as f:
                n = f.readinto(buf)
        else:
            with open(p, "rb") as f:
                n = f.readinto(buf)
        if lat is not None:
            lat.append(time.perf_counter() - t0)  # open to last byte (and close): one load
        return n

    def phase_read(self, phase, size_mib, threads):
        odirect = phase.endswith("_odirect")
        rec = {"phase": phase, "size_mib": size_mib, "threads": threads}
        if odirect and not self.odirect_ok(size_mib):
            self.emit(dict(rec, skipped=True, note=f"size not a multiple of f_bsize={self.bsize}"))
            return
        if phase == "read_hit":
            try:
                with open("/proc/sys/vm/drop_caches", "w") as f:
                    f.write("1\n")  # clean page-cache pages only
            except OSError as e:
                self.emit(dict(rec, skipped=True, note=f"cannot drop the page cache: {e}"))
                return
        c = self.content(size_mib)
        names = self.names("d" if odirect else "b", size_mib, threads)
        bufs = self.buffers(size_mib, len(names))
        lat = []
        self.cpu.start()
        res, wall, errs = run_parallel(
            len(names), threads, lambda i: self.read_one(names[i], bufs.mms[i], odirect, lat))
        cpu = self.cpu.fields(sum(1 for r in res if r == c.size) * size_mib)
        short = sum(1 for r in res if r is not None and r != c.size)
        bad = sum(1 for i, r in enumerate(res)
                  if r == c.size and not c.matches(names[i], addr_of(bufs.mms[i])))
        ok = sum(1 for r in res if r == c.size)
        rec.update(cpu)
        self.emit(dict(rec, chunks=len(names), bytes=ok * c.size, seconds=round(wall, 6),
                       mib_s=round(ok * size_mib / wall, 2) if wall > 0 else None,
                       load_p50_ms=ms(percentile(lat, 50)), load_p99_ms=ms(percentile(lat, 99)),
                       errors=len(errs) + short, verify_errors=bad,
                       note=errs[0] if errs else ("short read" if short else None)))

    def buffers(self, size_mib, count):
        b = getattr(self, "_bufs", None)
        if b is None or b.size != size_mib * MIB or len(b.mms) < count:
            self._bufs = None  # free the old buffers before allocating the new ones
            b = self._bufs = Buffers(size_mib * MIB,
                                     max(count, self.a.chunks, self.a.odirect_chunks))
        else:
            b.clear()
        return b

    def phase_ttfb(self, size_mib, threads):
        lat, errs = [], []
        buf = bytearray(1)
        for n in self.names("t", size_mib, threads):
            t0 = time.perf_counter()
            try:
                with open(self.path(n), "rb", buffering=0) as f:
                    if f.readinto(buf) != 1:
                        raise OSError("short read")
                    lat.append(time.perf_counter() - t0)
            except OSError as e:
                errs.append(str(e))
        self.emit({"phase": "ttfb", "size_mib": size_mib, "threads": threads, "chunks": len(lat),
                   "ttfb_p50_ms": ms(percentile(lat, 50)), "ttfb_max_ms": ms(max(lat or [0])),
                   "errors": len(errs), "note": errs[0] if errs else None})

    # --- lookups ---
    def phase_lookup(self, threads):
        # Chunks written by the write phase with this thread count (always there by now).
        existing = [n for s in self.a.sizes for n in self.names("b", s, threads)]
        for kind in ("positive", "negative"):
            counts = [0] * threads
            wrong = [0] * threads
            deadline = [0.0]
            salt = os.urandom(4).hex()

            def worker(w):
                i = 0
                while time.perf_counter() < deadline[0] and i < self.a.lookup_max:
                    if kind == "positive":
                        p = self.path(existing[(w + i * threads) % len(existing)])
                        good = os.path.exists(p)
                    else:
                        p = self.path(f"{MODEL}@1@0@{salt}{w:02x}{i:06x}@bfloat16.pt")
                        good = not os.path.exists(p)
                    wrong[w] += not good
                    i += 1
                counts[w] = i

            ts = [threading.Thread(target=worker, args=(w,)) for w in range(threads)]
            t0 = time.perf_counter()
            deadline[0] = t0 + self.a.lookup_seconds
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            wall = time.perf_counter() - t0
            self.emit({"phase": f"lookup_{kind}", "threads": threads, "ops": sum(counts),
                       "seconds": round(wall, 6), "ops_s": round(sum(counts) / wall, 1),
                       "errors": sum(wrong)})

    # --- daemon memory ---
    def emit_rss(self):
        pid = self.a.pid or find_mount_pid(self.a.dir)
        if not pid:
            return
        st = read_status(pid)
        if st:
            self.emit({"phase": "rss", "label": self.a.label, "pid": pid, "comm": st.get("Name"),
                       "peak_rss_mib": kib_to_mib(st.get("VmHWM")),
                       "rss_mib": kib_to_mib(st.get("VmRSS"))})

    def run(self):
        self.phases = ALL_PHASES if self.a.phases == ["all"] else self.a.phases
        for p in self.phases:
            if p not in ALL_PHASES:
                sys.exit(f"kvbench: unknown phase {p!r} (known: {', '.join(ALL_PHASES)}, all)")
        self.emit({"phase": "info", "label": self.a.label, "dir": self.a.dir,
                   "f_bsize": self.bsize, "tag": self.a.tag})
        for threads in self.a.threads:
            for size in self.a.sizes:
                for p in self.phases:
                    if p.startswith("write"):
                        self.phase_write(p, size, threads)
                    elif p == "ttfb":
                        self.phase_ttfb(size, threads)
                    elif p.startswith("read"):
                        self.phase_read(p, size, threads)
            if "lookup" in self.phases:
                self.phase_lookup(threads)
        self.emit_rss()


def process_cpu_ticks(pid):
    """CPU seconds (user + system, all threads, also exited ones) from /proc/PID/stat: clock
    ticks, so within 20 ms. None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class CpuCgroup:
    """A cgroup of its own for the daemon, so that its CPU time is read to the nanosecond with
    the time of threads that exit during a phase (kvfs's upload threads, libfuse's idle workers)
    - /proc/PID/stat has 10 ms ticks and per-thread schedstat loses exited threads. cgroup v1
    cpuacct (cpuacct.usage, ns) or v2 (cpu.stat usage_usec). Unavailable: ticks."""

    ROOTS = [("/sys/fs/cgroup/cpuacct", "cpuacct.usage", 1e-9),
             ("/sys/fs/cgroup/unified", "cpu.stat", 1e-6),
             ("/sys/fs/cgroup", "cpu.stat", 1e-6)]

    def __init__(self, pid):
        self.pid, self.dir, self.root = pid, None, None
        for root, stat, scale in self.ROOTS:
            if not os.path.exists(os.path.join(root, stat)):
                continue
            d = os.path.join(root, f"kvbench-{pid}")
            try:
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
            except OSError:
                try:
                    os.rmdir(d)
                except OSError:
                    pass
                continue
            self.dir, self.root, self.stat, self.scale = d, root, stat, scale
            atexit.register(self.close)
            return

    def seconds(self):
        if self.dir is None:
            return process_cpu_ticks(self.pid)
        try:
            with open(os.path.join(self.dir, self.stat)) as f:
                text = f.read()
        except OSError:
            return None
        if self.stat == "cpu.stat":
            text = dict(line.split() for line in text.splitlines())["usage_usec"]
        return int(text) * self.scale

    def close(self):
        """Back into the root cgroup; the group is removed."""
        if self.dir is None:
            return
        try:
            with open(os.path.join(self.root, "cgroup.procs"), "w") as f:
                f.write(str(self.pid))
        except OSError:
            pass  # the daemon exited
        try:
            os.rmdir(self.dir)
        except OSError:
            pass
        self.dir = None


class CpuMeter:
    """CPU a phase costs on the client side: the process serving the mount (none for a local
    directory) plus this reader/writer process. The S3 server's CPU is not counted."""

    def __init__(self, daemon_pid):
        self.group = CpuCgroup(daemon_pid) if daemon_pid else None

    def start(self):
        self.t0 = time.process_time()  # this process, all threads, nanosecond clock
        self.d0 = self.group.seconds() if self.group else 0.0

    def fields(self, mib):
        """{cpu_ms_per_mib, daemon_cpu_ms_per_mib} over `mib` MiB moved since start()."""
        own = time.process_time() - self.t0
        d1 = self.group.seconds() if self.group else 0.0
        if not mib or d1 is None or self.d0 is None:
            return {}
        daemon = d1 - self.d0
        return {"cpu_ms_per_mib": round((own + daemon) * 1000 / mib, 3),
                "daemon_cpu_ms_per_mib": round(daemon * 1000 / mib, 3)}


def ms(sec):
    return None if sec is None else round(sec * 1000, 3)


def kib_to_mib(v):
    return round(int(v.split()[0]) / 1024, 1) if v else None


def read_status(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except OSError:
        return None


def find_mount_pid(mnt):
    """The process serving a FUSE mount: the one whose command line names the mount point."""
    want = os.path.realpath(mnt)
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if args and b"python" in os.path.basename(args[0]):
            continue
        for a in args[1:]:
            if a and os.path.isabs(a.decode(errors="replace")) and \
                    os.path.realpath(a.decode(errors="replace")) == want:
                return int(d)
    return None


def int_list(s):
    return [int(x) for x in s.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="directory (mount point) to work in")
    ap.add_argument("--system", default="local", help="label for the results")
    ap.add_argument("--rep", type=int, default=0, help="repetition number, for the results")
    ap.add_argument("--tag", default="r0", help="name salt: same tag = same chunk names")
    ap.add_argument("--label", default="", help="free label (e.g. write-mount/read-mount)")
    ap.add_argument("--phases", type=lambda s: s.split(","), default=["all"])
    ap.add_argument("--sizes", type=int_list, default=[8, 32, 64], help="chunk sizes in MiB")
    ap.add_argument("--chunks", type=int, default=4, help="chunks per size (buffered set)")
    ap.add_argument("--odirect-chunks", type=int, default=None,
                    help="chunks per size in the O_DIRECT set (default: --chunks)")
    ap.add_argument("--ttfb-chunks", type=int, default=2)
    ap.add_argument("--threads", type=int_list, default=[1, 4])
    ap.add_argument("--lookup-seconds", type=float, default=2.0)
    ap.add_argument("--lookup-max", type=int, default=100000, help="max lookups per thread")
    ap.add_argument("--pid", type=int, default=0,
                    help="daemon pid for peak RSS (default: found from the mount point)")
    ap.add_argument("--out", help="append JSON lines here (default stdout)")
    a = ap.parse_args()
    if a.odirect_chunks is None:
        a.odirect_chunks = a.chunks
    Bench(a).run()


if __name__ == "__main__":
    main()
