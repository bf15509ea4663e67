#!/usr/bin/env python3
"""The bounded shared tier, through four real kvfs daemons of one store:

- nodes write a stream of new chunks three times store_capacity while another node keeps reading
  a hot set: the chunk bytes under the prefix stay within the stated slack of the capacity at
  every sample (capacity + what the nodes write in 3 x store_gc_interval, + one chunk), the hot
  set is never removed and every byte read is the object's;
- a removed chunk disappears from a node that had it cached; a descriptor opened before the
  removal reads the object's bytes or fails with a clear errno, never other bytes;
- statvfs of a mount reports the capacity and what is left of it;
- killing the collector's node hands the work to another within the lease time, and the bound
  holds again;
- `kvfs gc SOURCE --dry-run` plans without changing anything; `kvfs gc SOURCE` with no node
  mounted makes one pass; `kvfs du` shows the tier against its capacity;
- (S3) other applications' objects, written with plain S3 PUTs at the bucket root and under the
  prefix, are never counted, listed for removal or removed; a tier at the bucket root is refused
  unless tier_at_bucket_root is set.

    bounded_tier_test.py --kvfs PATH/kvfs --backend s3|dir
"""
import argparse
import errno
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import daemon_test as dt
from engines_two_mounts_replay import run_checks

MIB = 1 << 20
CAP_MIB = 24
INTERVAL = 1  # store_gc_interval, seconds: lease time 3 s, grace 2 s
TTL = 2
CHUNK = 1 * MIB
RATE = 4  # chunks per second the writers aim at


def payload(seed, size=CHUNK):
    block = (b"%s:" % seed.encode()) * 64
    return (block * (size // len(block) + 1))[:size]


def chunk_bytes(store):
    """{key: size} of the chunks under the prefix (not kvfs's own records, not markers)."""
    if isinstance(store, dt.S3Store):
        keys = store.keys()
    else:
        keys = {}
        base = os.path.join(store.root, "objects")
        for d, _, files in os.walk(base):
            for fn in files:
                path = os.path.join(d, fn)
                try:
                    keys[dt.dir_store_key(os.path.relpath(path, base))] = os.path.getsize(path)
                except OSError:
                    pass  # removed while walking
    return {k: v for k, v in keys.items()
            if "~kvfs-tier/" not in k and "~kvfs-feed/" not in k and not k.endswith("/")}


def tier_stats(daemon):
    r = subprocess.run([daemon.ctx.kvfs, "stats", daemon.mnt], capture_output=True, text=True,
                       timeout=dt.STEP_TIMEOUT)
    out = {}
    for ln in r.stdout.splitlines():
        parts = ln.split()
        if len(parts) == 2 and parts[0].startswith("kvfs_tier_"):
            out[parts[0]] = parts[1]
    return out


def wait_for(fn, what, timeout):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.time() < deadline, "not within %.0f s: %s" % (timeout, what)
        time.sleep(0.2)


class Sampler(threading.Thread):
    def __init__(self, store):
        super().__init__(daemon=True)
        self.store, self.samples, self.stop = store, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.samples.append((time.time(), sum(chunk_bytes(self.store).values())))
            except Exception:  # noqa: BLE001 - a listing racing removals; next sample
                pass
            time.sleep(0.25)


class HotReader(threading.Thread):
    def __init__(self, mnt, names):
        super().__init__(daemon=True)
        self.mnt, self.names, self.stop = mnt, names, threading.Event()
        self.reads, self.errors, self.wrong = 0, [], 0

    def run(self):
        while not self.stop.is_set():
            for n in self.names:
                try:
                    with open(os.path.join(self.mnt, n), "rb") as f:
                        data = f.read()
                    if data != payload(n):
                        self.wrong += 1
                    self.reads += 1
                except OSError as e:
                    self.errors.append("%s: %s" % (n, e))
            time.sleep(0.2)


def write_stream(mnt, names, times):
    for n in names:
        t0 = time.time()
        dt.write_chunk(mnt, n, payload(n))
        times.append((time.time(), CHUNK))
        time.sleep(max(0.0, 1.0 / RATE - (time.time() - t0)))


def max_window_bytes(times, window):
    best = 0
    for i, (t, _) in enumerate(times):
        best = max(best, sum(s for u, s in times[i:] if u - t <= window))
    return best


def run(ctx, checks):
    store = ctx.store()
    opts = {"store_capacity": "%dMiB" % CAP_MIB, "store_gc_interval": "%ds" % INTERVAL,
            "metadata_cache_ttl_secs": str(TTL), "cache_size": "512MiB"}
    nodes = {}
    port = dt.free_port()
    for name in "abcd":
        o = dict(opts, **({"metrics_listen": "127.0.0.1:%d" % port} if name == "b" else {}))
        nodes[name] = dt.Daemon(ctx, store, ctx.path("mnt-" + name), ctx.path("cache-" + name),
                                opts=o, name=name)
    a, b, c, d = (nodes[n] for n in "abcd")
    cap = CAP_MIB * MIB
    hot = ["hot%d" % i for i in range(4)]
    for n in hot:
        dt.write_chunk(b.mnt, n, payload(n))
    dt.write_chunk(a.mnt, "early", payload("early"))
    dt.write_chunk(a.mnt, "early2", payload("early2"))
    b.sync()  # stored before other nodes read them (a write-back close returns before its upload)
    a.sync()
    with open(os.path.join(d.mnt, "early"), "rb") as f:  # cached on d
        assert f.read() == payload("early")
    held_fd = os.open(os.path.join(d.mnt, "early2"), os.O_RDONLY)  # opened, never read yet

    sampler = Sampler(store)
    sampler.start()
    reader = HotReader(c.mnt, hot)
    reader.start()
    times = []
    stream = ["s%03d" % i for i in range(3 * CAP_MIB)]
    half = len(stream) // 2
    wa = threading.Thread(target=write_stream, args=(a.mnt, stream[:half], times))
    wb = threading.Thread(target=write_stream, args=(d.mnt, stream[half:], times))
    wa.start()
    wb.start()
    wa.join()
    wb.join()
    # The last writes are older than the grace period after 2 intervals; a pass follows.
    wait_for(lambda: sum(chunk_bytes(store).values()) <= cap, "tier back under its capacity",
             10 * INTERVAL + 10)
    time.sleep(1)
    sampler.stop.set()
    sampler.join()
    reader.stop.set()
    reader.join()

    def bound_held():
        slack = max_window_bytes(sorted(times), 3 * INTERVAL) + CHUNK
        worst = max(s for _, s in sampler.samples)
        assert worst <= cap + slack, "tier reached %d bytes; capacity %d + slack %d" % (
            worst, cap, slack)
        print("  %d samples; at most %.1f MiB (capacity %d MiB, slack %.1f MiB); %d chunks "
              "written (%.1f MiB), now %.1f MiB" % (
                  len(sampler.samples), worst / MIB, CAP_MIB, slack / MIB, len(times),
                  len(times) * CHUNK / MIB, sum(chunk_bytes(store).values()) / MIB))
    checks.run("the tier stays within its capacity plus the stated slack at every sample "
               "while 3x its capacity is written", bound_held)

    def hot_kept():
        keys = chunk_bytes(store)
        names = {k.rsplit("/", 1)[-1] for k in keys}
        assert all(h in names for h in hot), "hot chunks removed: %s" % sorted(
            set(hot) - names)
        assert reader.wrong == 0, "%d reads returned other bytes" % reader.wrong
        assert not reader.errors, "hot reads failed: %s" % reader.errors[:3]
        assert reader.reads > 20, "only %d hot reads" % reader.reads
        print("  %d hot reads on node c, all the objects' bytes" % reader.reads)
    checks.run("the hot set another node keeps reading is never removed; no read is wrong",
               hot_kept)

    def removed_forgotten():
        names = {k.rsplit("/", 1)[-1] for k in chunk_bytes(store)}
        assert "early" not in names, "the oldest unused chunk was not removed"
        # d had it cached: it must stop answering for it (the removed batch, or the TTL).
        wait_for(lambda: not os.path.exists(os.path.join(d.mnt, "early")),
                 "node d forgets the removed chunk it had cached", TTL + 4 * INTERVAL + 5)
        try:
            got = os.pread(held_fd, 2 * CHUNK, 0)
            assert got == payload("early2"), "a descriptor of a removed chunk read other bytes"
            print("  the descriptor opened before the removal read the object's bytes")
        except OSError as e:
            assert e.errno in (errno.ENOENT, errno.ESTALE), "read after removal: %s" % e
            print("  the descriptor opened before the removal: %s" % errno.errorcode[e.errno])
        finally:
            os.close(held_fd)
    checks.run("a removed chunk disappears from the node that had it cached; an open "
               "descriptor never reads other bytes", removed_forgotten)

    def statvfs_capacity():
        v = os.statvfs(b.mnt)
        total, free = v.f_blocks * v.f_frsize, v.f_bavail * v.f_frsize
        assert total == cap, "statvfs total %d, capacity %d" % (total, cap)
        used = sum(chunk_bytes(store).values())
        assert free <= cap and abs((cap - free) - used) <= 4 * CHUNK, (
            "statvfs free %d; the tier holds %d of %d" % (free, used, cap))
        print("  statvfs: %.1f MiB of %d MiB free; the tier holds %.1f MiB" % (
            free / MIB, CAP_MIB, used / MIB))
    checks.run("statvfs reports the capacity and what is left of it", statvfs_capacity)

    def hidden():
        for n in nodes.values():
            if n not in ctx.daemons:
                continue
            listed = os.listdir(n.mnt)
            assert not [x for x in listed if "kvfs-tier" in x], listed
            assert not os.path.exists(os.path.join(n.mnt, "~kvfs-tier"))
        assert any("~kvfs-tier/" in k for k in (
            store.keys() if isinstance(store, dt.S3Store) else [""])) or not isinstance(
            store, dt.S3Store), "no tier records in the bucket"
    checks.run("the tier's own objects never appear in a mount", hidden)

    def metrics():
        code, text = dt.scrape("http://127.0.0.1:%d/metrics" % port)
        assert code == 200, code
        samples = dt.prometheus_samples(text)
        for name in ("kvfs_tier_bytes", "kvfs_tier_chunks", "kvfs_tier_capacity_bytes",
                     "kvfs_tier_collector_lag_seconds", "kvfs_tier_removed_capacity_total",
                     "kvfs_tier_removed_age_total", "kvfs_tier_is_collector"):
            assert name in samples, "no %s in /metrics" % name
        assert samples["kvfs_tier_capacity_bytes"] == cap, samples["kvfs_tier_capacity_bytes"]
        info = [k for k in samples if k.startswith("kvfs_tier_collector_info{node=")]
        assert info and 'node=""' not in info[0], info
        print("  " + info[0] + "; tier bytes %d" % samples["kvfs_tier_bytes"])
    checks.run("Prometheus: tier bytes and chunks, removals by reason, the collector's lag and "
               "node", metrics)

    def du_line():
        r = subprocess.run([ctx.kvfs, "du", b.mnt], capture_output=True, text=True,
                           timeout=dt.STEP_TIMEOUT)
        assert r.returncode == 0, r.stderr
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("tier:")]
        assert line and "of capacity %d" % cap in line[0], r.stdout
        print("  " + line[0])
    checks.run("kvfs du shows the tier against its capacity", du_line)

    def takeover():
        holders = [n for n in nodes.values() if tier_stats(n).get("kvfs_tier_is_collector") == "1"]
        assert len(holders) == 1, "collectors: %s" % [h.mnt for h in holders]
        victim = holders[0]
        st = tier_stats(victim)
        assert int(st["kvfs_tier_passes"]) > 0, st
        t0 = time.time()
        victim.kill()
        ctx.daemons.remove(victim)
        rest = [n for n in nodes.values() if n is not victim]

        def new_holder():
            got = [n for n in rest if tier_stats(n).get("kvfs_tier_is_collector") == "1"]
            return got[0] if got else None
        # The lease time is 3 x store_gc_interval; the deadline adds room for a loaded machine.
        h = wait_for(new_holder, "another node takes the lease", 3 * INTERVAL + 15)
        took = time.time() - t0
        print("  killed the collector (%s); %s took over after %.1f s (lease time %d s)" % (
            os.path.basename(victim.mnt), os.path.basename(h.mnt), took, 3 * INTERVAL))
        # The new collector keeps the bound.
        more = ["t%03d" % i for i in range(CAP_MIB)]
        times.clear()
        write_stream(rest[0].mnt, more, times)
        wait_for(lambda: sum(chunk_bytes(store).values()) <= cap,
                 "tier under its capacity again", 10 * INTERVAL + 10)
        names = {k.rsplit("/", 1)[-1] for k in chunk_bytes(store)}
        assert all(x in names for x in more[-4:]), "the newest chunks were removed"
    checks.run("killing the collector's node hands the work to another within the lease "
               "time; the bound holds again", takeover)

    def gc_cli():
        for n in list(ctx.daemons):
            n.unmount()
        time.sleep(2 * INTERVAL + 1)  # past the grace period
        before = chunk_bytes(store)
        o = dict(store.opts)
        o.update({"store_capacity": "4MiB", "store_gc_interval": "%ds" % INTERVAL})
        cmd = [ctx.kvfs, "gc", store.source, "-o", ",".join("%s=%s" % kv for kv in o.items())]
        env = dict(os.environ, **store.env)
        r = subprocess.run(cmd + ["--dry-run"], capture_output=True, text=True, env=env,
                           timeout=dt.STEP_TIMEOUT)
        assert r.returncode == 0, "gc --dry-run: %s %s" % (r.stdout, r.stderr)
        assert "would remove" in r.stdout, r.stdout
        assert chunk_bytes(store) == before, "--dry-run changed the store"
        r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=dt.STEP_TIMEOUT)
        assert r.returncode == 0, "gc: %s %s" % (r.stdout, r.stderr)
        left = sum(chunk_bytes(store).values())
        assert left <= 4 * MIB, "kvfs gc left %d bytes: %s" % (left, r.stdout)
        print("  " + r.stdout.strip().splitlines()[-2])
    checks.run("kvfs gc SOURCE: --dry-run changes nothing; a pass with no node mounted "
               "bounds the tier", gc_cli)
    if isinstance(store, dt.S3Store):
        foreign_objects(ctx, checks, store)


def raw_put(store, key, data):
    """PUT of `key` as another application writes it: curl --aws-sigv4, no kvfs metadata."""
    path = "/%s/%s" % (store.bucket, key)
    url = store.endpoint + urllib.parse.quote(path, safe="/-_.~")
    cfg = 'user = "%s:%s"\n' % (store.access, store.secret)
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        r = subprocess.run(["curl", "-sS", "-K", "-", "-X", "PUT", "--aws-sigv4",
                            "aws:amz:%s:s3" % store.region, "-H",
                            "x-amz-content-sha256: UNSIGNED-PAYLOAD", "--data-binary",
                            "@" + f.name, "-o", "/dev/null", "-w", "%{http_code}", url],
                           input=cfg.encode(), capture_output=True, timeout=dt.STEP_TIMEOUT,
                           check=True)
    assert r.stdout == b"200", "PUT %s: HTTP %s %s" % (key, r.stdout, r.stderr)


def foreign_objects(ctx, checks, store):
    """After run(): every node unmounted, a few kvfs chunks left under the prefix."""
    foreign = ["backup.tar", "reports/q3.csv", "%s/notes.txt" % store.prefix,
               "%s/zz-foreign" % store.prefix]

    def gc(source, extra, dry):
        o = dict(store.opts)
        o.update({"store_capacity": "1", "store_gc_interval": "%ds" % INTERVAL}, **extra)
        cmd = [ctx.kvfs, "gc", source, "-o", ",".join("%s=%s" % kv for kv in o.items())]
        return subprocess.run(cmd + (["--dry-run"] if dry else []), capture_output=True,
                              text=True, env=dict(os.environ, **store.env),
                              timeout=dt.STEP_TIMEOUT)

    def check():
        for k in foreign:
            raw_put(store, k, b"not kvfs's: " + k.encode() * 100)
        time.sleep(2 * INTERVAL + 1.5)  # older than the grace period, like the chunks
        keys = store.keys()
        mine = [k for k in chunk_bytes(store) if k not in foreign]
        assert mine, "no kvfs chunk left to remove: %s" % sorted(keys)
        root = "s3://%s" % store.bucket

        r = gc(root, {}, dry=True)
        assert r.returncode == 1, "gc at the bucket root: %d %s %s" % (
            r.returncode, r.stdout, r.stderr)
        assert "tier_at_bucket_root" in r.stderr, r.stderr
        print("  " + [ln for ln in r.stderr.splitlines() if "tier_at_bucket_root" in ln][0][:100]
              + "...")

        r = gc(root, {"tier_at_bucket_root": "true"}, dry=True)
        assert r.returncode == 0, "gc --dry-run at the root: %s %s" % (r.stdout, r.stderr)
        for k in foreign:
            assert k not in r.stdout, "--dry-run lists %s: %s" % (k, r.stdout)
        for k in mine:
            assert "would remove %s " % k in r.stdout, "%s not planned: %s" % (k, r.stdout)
        assert store.keys() == keys, "--dry-run changed the bucket"

        r = gc(store.source, {}, dry=False)
        assert r.returncode == 0, "gc: %s %s" % (r.stdout, r.stderr)
        left = store.keys()
        assert all(k in left for k in foreign), "foreign objects removed: %s" % sorted(
            set(foreign) - set(left))
        assert not [k for k in mine if k in left], "kvfs chunks left: %s" % [
            k for k in mine if k in left]
        assert "tier: 0 bytes in 0 chunks" in r.stdout, r.stdout
        print("  removed the %d kvfs chunks, kept %s" % (len(mine), ", ".join(foreign)))
        for ln in r.stdout.splitlines():
            if "not kvfs's" in ln:
                print("  " + ln)
    checks.run("kvfs gc: other applications' objects (plain S3 PUTs at the bucket root and "
               "under the prefix) are neither counted, listed nor removed; a tier at the bucket "
               "root is refused unless tier_at_bucket_root is set", check)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--backend", choices=["dir", "s3"], default="s3")
    args = ap.parse_args()
    return run_checks("bounded_tier_test", args, run, "kvfs-tier-")


if __name__ == "__main__":
    sys.exit(main())
