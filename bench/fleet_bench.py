#!/usr/bin/env python3
"""Scale rows of the benchmark (issue 24): many readers on one mount, and a fleet of mounts
sharing one bucket, against a running S3 server.

  readers   one mount, cold: N threads (default 64) read whole chunks of a shared set in
            random order, many of them the same chunk at once (one download per chunk,
            single flight); then the same again warm (the chunks are in the local cache).
  names     N small objects in one flat prefix (default 10k and 40k), a fresh mount: the first
            full listing (entries/s), lookups of distinct missing names and of existing names
            (per second, 8 threads); rates at 1M names are extrapolated from the two largest sizes.
  fleet     M mounts of one bucket (default 4, each with its own cache), each with writer
            threads storing new chunks and reader threads loading random chunks that any
            mount stored - the engines' pattern on a fleet that shares one tier - plus, per
            mount, a lookup thread at --lookup-rate lookups/s (half of them names another mount
            stored, half names nobody stored: the misses an engine's lookups mostly are) and a
            prober: every 0.5 s one mount stores a small chunk that every other mount has just
            missed and polls for (visibility: close returned -> found, p50/p99/max). Reported:
            loads that missed a chunk stored more than 1 s before (goal 0), and the store
            requests the lookups cost (the daemons' own counters: lookups sent, revalidations,
            the fleet feed's PUT/LIST/DELETE) per lookup and per million lookups at AWS list
            prices, beside what LMCache's S3 adapter would send for the same lookups (one HEAD
            for every name it has not found before).

Every chunk is named by the SHA-256 of its bytes (as the engines name theirs from a content
hash), and every read is checked against its name: a "verification failure" is a read that
returned other bytes. Latency is per whole-chunk open+read+close; p99 over all of them. A read of
a chunk another node stored that this node does not see yet (ENOENT: its negative lookup is
cached for metadata_cache_ttl_secs, README "Cheap misses") is counted as a miss, as an engine
takes it (it recomputes the chunk), not as an error; every other failure is an error.

usage: fleet_bench.py --kvfs BIN --endpoint URL [--readers 64] [--mounts 4] [--chunk-mib 8]
                      [--chunks 32] [--seconds 20] [--out results.jsonl]
env:   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (default: the test server's keys), AWS_REGION.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3util  # noqa: E402


def pct(values, q):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q / 100.0 * (len(v) - 1))))]


class Mount:
    """One kvfs daemon (foreground) on its own mount point and cache directory."""

    def __init__(self, kvfs, endpoint, bucket, work, name, extra_yaml=""):
        self.dir = os.path.join(work, "mnt-" + name)
        self.cache = os.path.join("/dev/shm", "kvfs-fleet-" + name + "-" + str(os.getpid()))
        os.makedirs(self.dir, exist_ok=True)
        shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.cache)
        conf = os.path.join(work, name + ".yaml")
        with open(conf, "w") as f:
            f.write(f"endpoint: {endpoint}\nregion: {os.environ['AWS_REGION']}\n"
                    f"addressing: path\ncache_dir: {self.cache}\ncache_size: 4294967296\n"
                    + extra_yaml)
        self.kvfs = kvfs
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen([kvfs, "-f", "--config", conf, f"s3://{bucket}", self.dir],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if os.path.ismount(self.dir):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"kvfs exited; see {self.log.name}")
            time.sleep(0.05)
        raise RuntimeError(f"kvfs did not mount {self.dir}")

    def stats(self):
        r = subprocess.run([self.kvfs, "stats", self.dir], capture_output=True, text=True,
                           timeout=60)
        return {k: int(v) for k, v in (ln.split() for ln in r.stdout.splitlines() if ln.strip())}

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        subprocess.run(["fusermount3", "-u", self.dir], check=False)
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        shutil.rmtree(self.cache, ignore_errors=True)


def make_chunk(size, rng):
    data = rng.randbytes(size)
    return hashlib.sha256(data).hexdigest(), data


def write_chunk(mount_dir, data, name):
    t0 = time.monotonic()
    with open(os.path.join(mount_dir, name), "wb") as f:
        f.write(data)
    return time.monotonic() - t0


def read_chunk(mount_dir, name, buf):
    """Returns (seconds, ok): ok is False when the bytes are not the ones the name hashes."""
    t0 = time.monotonic()
    mv = memoryview(buf)
    got = 0
    with open(os.path.join(mount_dir, name), "rb", buffering=0) as f:
        while True:
            k = f.readinto(mv[got:])
            if not k:
                break
            got += k
    dt = time.monotonic() - t0
    return dt, hashlib.sha256(mv[:got]).hexdigest() == name


class Tally:
    """Thread-safe: counts and latencies of one kind of operation."""

    def __init__(self, misses_ok=False):
        self.misses_ok = misses_ok  # ENOENT is a miss (fleet reads of other nodes' chunks)
        self.lock = threading.Lock()
        self.lat, self.bytes, self.errors, self.bad, self.misses = [], 0, 0, 0, 0
        self.first_error = ""

    def ok(self, seconds, nbytes, verified=True):
        with self.lock:
            self.lat.append(seconds)
            self.bytes += nbytes
            self.bad += 0 if verified else 1

    def error(self, e):
        with self.lock:
            if self.misses_ok and isinstance(e, FileNotFoundError):
                self.misses += 1
                return
            self.errors += 1
            self.first_error = self.first_error or repr(e)

    def row(self, elapsed):
        return {"ops": len(self.lat), "mib_s": round(self.bytes / 2**20 / elapsed, 1),
                "p50_ms": round(pct(self.lat, 50) * 1e3, 1),
                "p99_ms": round(pct(self.lat, 99) * 1e3, 1),
                "misses": self.misses, "errors": self.errors, "verification_failures": self.bad,
                "first_error": self.first_error}


def run_readers(args, s3, work, emit):
    bucket = f"kvfleet-readers-{os.getpid()}"
    s3.make_bucket(bucket)
    size = args.chunk_mib << 20
    rng = random.Random(1)
    seed = Mount(args.kvfs, args.endpoint, bucket, work, "seed")
    names = []
    try:
        for _ in range(args.chunks):
            name, data = make_chunk(size, rng)
            write_chunk(seed.dir, data, name)
            names.append(name)
    finally:
        seed.close()
    m = Mount(args.kvfs, args.endpoint, bucket, work, "readers")
    try:
        for phase in ("cold", "warm"):
            tally = Tally()
            per = max(1, args.chunks // 4)  # each reader reads a quarter of the set

            def reader(i):
                r = random.Random(i)
                buf = bytearray(size)
                for name in r.sample(names, per):
                    try:
                        dt, ok = read_chunk(m.dir, name, buf)
                        tally.ok(dt, size, ok)
                    except OSError as e:
                        tally.error(e)

            cpu0, t0 = m.cpu_seconds(), time.monotonic()
            threads = [threading.Thread(target=reader, args=(i,)) for i in range(args.readers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - t0
            row = tally.row(elapsed)
            row.update({"test": "readers", "phase": phase, "readers": args.readers,
                        "chunk_mib": args.chunk_mib, "chunks": args.chunks,
                        "seconds": round(elapsed, 2),
                        "daemon_cpu_s_per_gib": round((m.cpu_seconds() - cpu0) /
                                                      max(1e-9, tally.bytes / 2**30), 3)})
            emit(row)
    finally:
        m.close()
        s3.remove_bucket(bucket)


# AWS S3 Standard list prices (us-east-1, per request): GET/HEAD $0.0004 per 1,000; PUT, LIST
# $0.005 per 1,000; DELETE free.
PRICE = {"head": 0.4e-6, "list": 5e-6, "put": 5e-6, "delete": 0.0}


def lookup_requests(before, after):
    """Store requests the mounts' lookups cost between two sets of stats, by priced kind."""
    d = {k: sum(a.get(k, 0) - b.get(k, 0) for a, b in zip(after, before))
         for k in after[0]}
    return {"head": d["kvfs_lookup_heads"] + d["kvfs_lookup_revalidations"],
            "list": d["kvfs_lookup_lists"] + d["kvfs_lookup_dir_listings"] + d["kvfs_feed_lists"],
            "put": d["kvfs_feed_puts"], "delete": d["kvfs_feed_deletes"]}


def run_fleet(args, s3, work, emit):
    bucket = f"kvfleet-shared-{os.getpid()}"
    s3.make_bucket(bucket)
    size = args.chunk_mib << 20
    extra = args.mount_yaml.replace(";", "\n") + ("\n" if args.mount_yaml else "")
    mounts = [Mount(args.kvfs, args.endpoint, bucket, work, f"node{i}", extra)
              for i in range(args.mounts)]
    stored, stored_lock = [], threading.Lock()
    stored_at = {}  # name -> when its writer's close returned
    late = [0]  # loads that missed a chunk stored more than 1 s before
    lookups = [0] * args.mounts  # lookups made (loads' opens and the lookup threads')
    lmcache_heads = [0] * args.mounts  # what LMCache's S3 adapter would send for them
    found_by = [set() for _ in range(args.mounts)]  # its positive cache, per mount
    visible = []  # seconds from a probe's close to another mount finding it
    writes, reads = Tally(), Tally(misses_ok=True)
    stop = time.monotonic() + args.seconds
    try:
        # A first set so that readers have something to load from the start.
        rng = random.Random(99)
        for i in range(args.mounts * 2):
            name, data = make_chunk(size, rng)
            write_chunk(mounts[i % args.mounts].dir, data, name)
            stored.append(name)

        def counted(mi, name, found):
            with stored_lock:
                lookups[mi] += 1
                if name not in found_by[mi]:
                    lmcache_heads[mi] += 1
                if found:
                    found_by[mi].add(name)

        def writer(mi, wi):
            r = random.Random(1000 * mi + wi)
            while time.monotonic() < stop:
                name, data = make_chunk(size, r)
                try:
                    writes.ok(write_chunk(mounts[mi].dir, data, name), size)
                    with stored_lock:
                        stored.append(name)
                        stored_at[name] = time.monotonic()
                except OSError as e:
                    writes.error(e)

        def reader(mi, ri):
            r = random.Random(5000 + 1000 * mi + ri)
            buf = bytearray(size)
            while time.monotonic() < stop:
                with stored_lock:
                    name = r.choice(stored)
                try:
                    dt, ok = read_chunk(mounts[mi].dir, name, buf)
                    reads.ok(dt, size, ok)
                    counted(mi, name, True)
                except OSError as e:
                    counted(mi, name, False)
                    if isinstance(e, FileNotFoundError):
                        with stored_lock:
                            if time.monotonic() - stored_at.get(name, 0) > 1.0:
                                late[0] += 1
                    reads.error(e)

        def looker(mi):
            # An engine's lookups: half of them chunks some mount stored, half never stored.
            r = random.Random(9000 + mi)
            period = 1.0 / args.lookup_rate
            nxt = time.monotonic()
            while time.monotonic() < stop:
                if r.random() < 0.5:
                    with stored_lock:
                        name = r.choice(stored)
                else:
                    name = "%064x" % r.getrandbits(256)
                found = os.path.exists(os.path.join(mounts[mi].dir, name))
                counted(mi, name, found)
                if not found and name in stored_at and time.monotonic() - stored_at[name] > 1.0:
                    with stored_lock:
                        late[0] += 1
                nxt += period
                time.sleep(max(0.0, nxt - time.monotonic()))

        def prober():
            r = random.Random(77)
            i = 0
            while time.monotonic() < stop - 3:
                wm = i % args.mounts
                name, data = make_chunk(64 << 10, r)
                others = [m for m in range(args.mounts) if m != wm]
                for m in others:  # each has just missed it
                    os.path.exists(os.path.join(mounts[m].dir, name))
                write_chunk(mounts[wm].dir, data, name)
                t_closed = time.monotonic()

                def poll(m):
                    p = os.path.join(mounts[m].dir, name)
                    while not os.path.exists(p):
                        if time.monotonic() - t_closed > 30:
                            return
                        time.sleep(0.002)
                    with stored_lock:
                        visible.append(time.monotonic() - t_closed)
                ts = [threading.Thread(target=poll, args=(m,)) for m in others]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                i += 1
                time.sleep(max(0.0, 0.5 - (time.monotonic() - t_closed)))

        threads = [threading.Thread(target=writer, args=(mi, w))
                   for mi in range(args.mounts) for w in range(args.fleet_writers)]
        threads += [threading.Thread(target=reader, args=(mi, r))
                    for mi in range(args.mounts) for r in range(args.fleet_readers)]
        if args.lookup_rate > 0:
            threads += [threading.Thread(target=looker, args=(mi,)) for mi in range(args.mounts)]
        threads.append(threading.Thread(target=prober))
        stats0 = [m.stats() for m in mounts]
        cpu0 = sum(m.cpu_seconds() for m in mounts)
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        cpu = sum(m.cpu_seconds() for m in mounts) - cpu0
        stats1 = [m.stats() for m in mounts]
        req = lookup_requests(stats0, stats1)
        n_lookups = max(1, sum(lookups))
        n_req = sum(req.values())
        cost = sum(req[k] * PRICE[k] for k in req)
        lm_heads = sum(lmcache_heads)
        emit({"test": "fleet", "phase": "lookups", "mounts": args.mounts,
              "mount_yaml": args.mount_yaml,
              "lookup_rate_per_mount": args.lookup_rate, "seconds": round(elapsed, 2),
              "lookups": n_lookups,
              "lookups_per_s_per_mount": round(n_lookups / elapsed / args.mounts, 1),
              "requests": req, "requests_per_lookup": round(n_req / n_lookups, 4),
              "requests_per_s_per_mount": round(n_req / elapsed / args.mounts, 2),
              "usd_per_million_lookups": round(cost / n_lookups * 1e6, 3),
              "lmcache_s3_requests_per_lookup": round(lm_heads / n_lookups, 4),
              "lmcache_s3_usd_per_million_lookups": round(
                  lm_heads * PRICE["head"] / n_lookups * 1e6, 3),
              "late_misses": late[0], "loads_missed": reads.misses,
              "visibility_n": len(visible),
              "visibility_p50_s": round(pct(visible, 50), 3),
              "visibility_p99_s": round(pct(visible, 99), 3),
              "visibility_max_s": round(max(visible) if visible else 0.0, 3),
              "errors": 0, "verification_failures": 0})
        moved = max(1e-9, (writes.bytes + reads.bytes) / 2**30)
        for kind, tally in (("write", writes), ("read", reads)):
            row = tally.row(elapsed)
            row.update({"test": "fleet", "phase": kind, "mounts": args.mounts,
                        "writers_per_mount": args.fleet_writers,
                        "readers_per_mount": args.fleet_readers, "chunk_mib": args.chunk_mib,
                        "seconds": round(elapsed, 2),
                        "daemons_cpu_s_per_gib": round(cpu / moved, 3)})
            emit(row)
    finally:
        for m in mounts:
            m.close()
        s3.remove_bucket(bucket)


def put_objects(s3, bucket, names, threads=16, method="PUT"):
    """Creates 1-byte objects named `names` (or deletes them) with `threads` parallel clients."""
    def put(part):
        c = s3util.S3()
        for n in part:
            st, body = c.request(method, f"/{bucket}/{n}", body=b"x" if method == "PUT" else b"")
            if st not in (200, 204):
                raise RuntimeError(f"{method} {bucket}/{n}: HTTP {st} {body[:200]!r}")
    ts = [threading.Thread(target=put, args=(names[i::threads],)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def timed_threads(fn, items, threads=8):
    """Runs fn(item) over items on `threads` threads; returns (seconds, errors)."""
    errors = [0]
    lock = threading.Lock()

    def work(part):
        for it in part:
            try:
                fn(it)
            except OSError:
                with lock:
                    errors[0] += 1
    t0 = time.monotonic()
    ts = [threading.Thread(target=work, args=(items[i::threads],)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.monotonic() - t0, errors[0]


def must_miss(d, name):
    if os.path.exists(os.path.join(d, name)):
        raise FileExistsError(f"{name} was never stored but exists")


def run_names(args, s3, work, emit):
    bucket = f"kvfleet-names-{os.getpid()}"
    s3.make_bucket(bucket)
    have = []
    rows = []
    try:
        for n in [int(x) for x in args.names.split(",")]:
            add = [hashlib.sha256(f"name{i}".encode()).hexdigest() for i in range(len(have), n)]
            put_objects(s3, bucket, add)
            have += add
            m = Mount(args.kvfs, args.endpoint, bucket, work, f"names{n}")
            try:
                t0 = time.monotonic()
                listed = len(os.listdir(m.dir))
                list_s = time.monotonic() - t0
                misses = [hashlib.sha256(f"miss{n}-{i}".encode()).hexdigest()
                          for i in range(args.lookups)]
                miss_s, miss_err = timed_threads(lambda name: must_miss(m.dir, name), misses)
                hits = random.Random(n).sample(have, min(args.lookups, len(have)))
                hit_s, hit_err = timed_threads(lambda name: os.stat(os.path.join(m.dir, name)),
                                               hits)
            finally:
                m.close()
            row = {"test": "names", "names": n, "listed": listed,
                   "list_entries_per_s": round(listed / list_s),
                   "miss_lookups_per_s": round(len(misses) / miss_s),
                   "hit_lookups_per_s": round(len(hits) / hit_s),
                   "errors": miss_err + hit_err + (0 if listed == n else 1),
                   "verification_failures": 0}
            rows.append(row)
            emit(row)
        if len(rows) >= 2:
            # The time of each measured workload (n entries listed; `lookups` lookups) as a line
            # through the two largest sizes, evaluated at 1M names. Both sizes are in the regime
            # where misses are answered from one listing of the directory (up to 100k entries);
            # past that each miss is one LIST request (README "Cheap misses"), not measured here.
            a, b = rows[-2], rows[-1]
            big = 1_000_000
            est = {"test": "names", "names": big, "extrapolated_from": [a["names"], b["names"]],
                   "errors": 0, "verification_failures": 0}
            for k, work_a, work_b, work_big in (
                    ("list_entries_per_s", a["names"], b["names"], big),
                    ("hit_lookups_per_s", args.lookups, args.lookups, args.lookups)):
                ta, tb = work_a / a[k], work_b / b[k]
                t_big = tb + (tb - ta) / (b["names"] - a["names"]) * (big - b["names"])
                est[k] = round(work_big / max(tb, t_big))
            # Misses: past 100k entries a directory is not listed; each miss is one LIST request,
            # a regime these sizes do not reach, so no extrapolation.
            est["miss_lookups_per_s"] = None
            emit(est)
    finally:
        put_objects(s3, bucket, have, method="DELETE")
        s3.remove_bucket(bucket)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kvfs", required=True)
    p.add_argument("--endpoint", required=True)
    p.add_argument("--tests", default="readers,names,fleet")
    p.add_argument("--names", default="10000,40000")
    p.add_argument("--lookups", type=int, default=5000)
    p.add_argument("--readers", type=int, default=64)
    p.add_argument("--chunks", type=int, default=32)
    p.add_argument("--chunk-mib", type=int, default=8)
    p.add_argument("--mounts", type=int, default=4)
    p.add_argument("--fleet-writers", type=int, default=1)
    p.add_argument("--fleet-readers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--mount-yaml", default="",
                   help="config lines for the fleet's mounts, ';'-separated (fleet_feed: false)")
    p.add_argument("--lookup-rate", type=float, default=150,
                   help="lookups per second of each mount's lookup thread (fleet); 0: none")
    p.add_argument("--out", default="")
    args = p.parse_args()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "TESTACCESSKEY0000001")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testsecretkey0000000000000000000000000001")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    os.environ["S3_ENDPOINT"] = args.endpoint
    s3 = s3util.S3()
    work = tempfile.mkdtemp(prefix="kvfleet.")
    out = open(args.out, "a") if args.out else None
    failed = False

    def emit(row):
        nonlocal failed
        row["ts"] = round(time.time(), 3)
        failed = failed or row["errors"] > 0 or row["verification_failures"] > 0
        print(json.dumps(row), flush=True)
        if out:
            out.write(json.dumps(row) + "\n")
            out.flush()

    try:
        if "readers" in args.tests:
            run_readers(args, s3, work, emit)
        if "names" in args.tests:
            run_names(args, s3, work, emit)
        if "fleet" in args.tests:
            run_fleet(args, s3, work, emit)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
