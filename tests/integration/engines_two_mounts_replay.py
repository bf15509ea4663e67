#!/usr/bin/env python3
"""Each inference engine's disk-tier I/O (engine_patterns.py: llm-d, SGLang HiCacheFile, LMCache GDS
in both write modes, LMCache MP fs_native/fs://, Dynamo KVBM's disk tier; and, from
engine_patterns_vllm_sglang_dynamo.py, vLLM 0.33.0's fs tier, SGLang HiCacheFile direct_io and
fast_file, Dynamo KVBM's scratch file and new_at_path, with their own checks in
vllm_sglang_dynamo_habits.py) replayed through two real kvfs mounts of one bucket: written on node
A, looked up, scanned and read on node B, evicted, and everything read again after both daemons
restarted. The bucket is checked directly: no object under a temporary name, ever.

    engines_two_mounts_replay.py --kvfs PATH/kvfs --backend s3|dir

Prints `N passed, N failed` and exits 1 when a check failed; 77 = skipped (no FUSE or no S3
endpoint) unless KVFS_REQUIRE_FUSE=1 / KVFS_REQUIRE_S3=1.
"""
import argparse
import errno
import fnmatch
import os
import shutil
import sys
import tempfile
import time
import traceback

import daemon_test as dt
import engine_patterns as ep
import engine_patterns_vllm_sglang_dynamo as ep2
import vllm_sglang_dynamo_habits as habits
from mount_util import skip_or_fail

MIB = 1 << 20
TTL = 1  # metadata_cache_ttl_secs of both nodes: B sees A's new files this long after a miss
TEMP_PATTERNS = ["*.tmp", "*.tmp.*", "*.tmp[0-9a-f]*"]  # kvfs's default temp_patterns
COUNT = 4  # chunks per engine


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, []

    def run(self, name, fn):
        t0 = time.time()
        try:
            fn()
            self.passed += 1
            print("PASS %s (%.1fs)" % (name, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on
            traceback.print_exc(limit=2)
            self.failed.append(name)
            print("FAIL %s: %r" % (name, e), flush=True)


def run_checks(name, args, run, work_prefix):
    """The main of a test of Checks on real daemons: requires the backend, runs run(ctx, checks)
    in a fresh work directory, cleans up, prints `<name> (<backend>): N passed, N failed` and
    returns the exit status."""
    dt.require(s3=args.backend == "s3")
    t0 = time.time()
    ctx = dt.Ctx(os.path.abspath(args.kvfs), args.backend, tempfile.mkdtemp(prefix=work_prefix))
    # --opt K=V: every mount of the test also gets it (a CI leg at a setting other than the
    # default; its test name says which).
    ctx.extra_opts = dict(kv.split("=", 1) for kv in getattr(args, "opt", None) or [])
    if ctx.extra_opts:
        name += " [%s]" % ",".join("%s=%s" % kv for kv in ctx.extra_opts.items())
    checks = Checks()
    try:
        run(ctx, checks)
    finally:
        ctx.cleanup()
        shutil.rmtree(ctx.work, ignore_errors=True)
    print("%s (%s): %d passed, %d failed (%.1fs)%s" % (
        name, args.backend, checks.passed, len(checks.failed), time.time() - t0,
        (": " + ", ".join(checks.failed)) if checks.failed else ""))
    return 1 if checks.failed else 0


def engines(root):
    return [ep.LlmD(root), ep.LlmD022(root), ep.Sglang(root),
            ep.LmcacheGds(root, use_mmap=False), ep.LmcacheMp(root), ep2.VllmFs(root), ep2.SglangDirectIo(root),
            ep2.SglangFastFile(root), ep2.DynamoKvbmAtPath(root)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--backend", choices=["dir", "s3"], default="s3")
    ap.add_argument("--opt", action="append", metavar="K=V", help="a setting for every mount")
    args = ap.parse_args()
    return run_checks("engines_two_mounts_replay", args, run, "kvfs-engines-")


def run(ctx, checks):
    store = ctx.store()
    # remote: "node B evicts" checks that B's delete reaches A (the default, local, keeps it).
    opts = {"metadata_cache_ttl_secs": str(TTL), "unlink_policy": "remote"}

    def mount(name, label=None):
        return dt.Daemon(ctx, store, ctx.path("mnt-" + name), ctx.path("cache-" + name), opts,
                         name=label or name)

    a, b = mount("A"), mount("B")
    on_a, on_b = engines(a.mnt), engines(b.mnt)
    size = {e.name: ep.DEFAULT_MIB[e.name] * MIB // 4 for e in on_a}  # small: keep it < 60 s
    size["sglang"] = 256 << 10
    written = {}

    def write_all():
        for e in on_a:
            for h in range(COUNT):
                assert not e.lookup(h), "%s: chunk %d exists before it was written" % (e.name, h)
                assert e.store(h, ep.payload(h, size[e.name])), "%s: store skipped" % e.name
            # The engine's second store of the same chunk finds it and skips (llm-d: atime).
            assert not e.store(0, ep.payload(0, size[e.name])), "%s: rewrote chunk 0" % e.name
            written[e.name] = set(range(COUNT))

    # B looks first: its misses are cached for the TTL only.
    checks.run("node B: lookups of chunks not written yet miss",
               lambda: [check_missing(e, range(COUNT)) for e in on_b])
    checks.run("node A: every engine stores %d chunks (temp + rename, nested trees)" % COUNT,
               write_all)
    checks.run("node A: GDS POSIX fallback (ftruncate + shared mmap) stores a chunk",
               lambda: ep.LmcacheGds(a.mnt, use_mmap=True).store(100, ep.payload(100, size["gds"])))
    a.sync()  # A's chunks are stored (a write-back close returns before its upload) ...
    time.sleep(TTL + 0.5)  # ... and B's cached misses have expired
    checks.run("node B: exists() finds every chunk", lambda: [
        check_present(e, written.get(e.name, ())) for e in on_b])
    checks.run("node B: start-up scans (readdir of the trees) find every chunk",
               lambda: [check_scan(ea, eb) for ea, eb in zip(on_a, on_b)])
    checks.run("node B: every engine reads its chunks back byte for byte",
               lambda: [check_load(e, written.get(e.name, ()), size[e.name]) for e in on_b])
    checks.run("node B: the GDS chunk written through a shared mmap reads back",
               lambda: check_load(ep.LmcacheGds(b.mnt), [100], size["gds"]))
    checks.run("node B: 200 lookups of missing chunks in never-seen hash directories miss",
               lambda: [check_missing(e, range(1000, 1050)) for e in on_b])
    checks.run("bucket: no object under a temporary name", lambda: check_no_temp_objects(store))
    checks.run("llm-d with O_TMPFILE: clear EOPNOTSUPP (it then fails that store, no file left)",
               lambda: check_o_tmpfile(on_a[0]))
    checks.run("llm-d: utimensat(atime) on a stored chunk is accepted",
               lambda: ep.utimensat_atime_now(on_a[0].path(1)))
    checks.run("Dynamo KVBM disk tier: fallocate EOPNOTSUPP, preallocation EFBIG, nothing left",
               lambda: check_dynamo(a.mnt, store))
    habits.run(checks, a, b, store, size, TTL)

    def evict():
        for e in on_b:
            e.evict(COUNT - 1)
            written[e.name].discard(COUNT - 1)
        # Node A sees the eviction after its TTL; a chunk A holds in its own cache is answered
        # from there once more while it is revalidated in the background (cached_chunk_trust_secs),
        # so A's view may take one more lookup to change.
        deadline = time.time() + 10
        while True:
            time.sleep(TTL + 0.2)
            left = [e.name for e in on_a if e.lookup(COUNT - 1)]
            if not left:
                break
            assert time.time() < deadline, "evicted chunk still visible on node A: %s" % left
    checks.run("node B evicts (unlink_policy remote): gone on both nodes", evict)

    def restart():
        nonlocal on_a
        a.unmount()
        b.unmount()
        a2 = mount("A", "A (restarted on its cache)")
        on_a = engines(a2.mnt)
        for e in on_a:
            check_present(e, written[e.name])
            check_load(e, written[e.name], size[e.name])
            check_scan_equals(e, written[e.name])
    checks.run("restart: a new daemon sees, scans and reads every remaining chunk", restart)


def check_missing(e, hs):
    for h in hs:
        assert not e.lookup(h), "%s: chunk %d should be missing" % (e.name, h)


def check_present(e, hs):
    for h in hs:
        assert e.lookup(h), "%s: chunk %d not found" % (e.name, h)


def check_load(e, hs, n):
    for h in hs:
        got = e.load(h, n)
        assert got == ep.payload(h, n), "%s: chunk %d differs (%d bytes)" % (e.name, h, len(got))


def check_scan(ea, eb):
    if eb.scan() is None:  # no start-up scan (vLLM): lookups go to the filesystem
        return
    want = {os.path.basename(ea.path(h)) for h in range(COUNT)}
    got = eb.scan()
    assert want <= got, "%s: scan misses %s" % (eb.name, sorted(want - got)[:2])


def check_scan_equals(e, hs):
    want = {os.path.basename(e.path(h)) for h in hs}
    got = e.scan()
    if got is None:
        return
    assert want <= got, "%s: scan after restart misses %s" % (e.name, sorted(want - got)[:2])
    assert (COUNT - 1) not in hs and os.path.basename(e.path(COUNT - 1)) not in got, \
        "%s: evicted chunk scanned" % e.name


def check_no_temp_objects(store):
    names = list(store.objects())
    bad = [n for n in names for p in TEMP_PATTERNS if fnmatch.fnmatch(n.rsplit("/", 1)[-1], p)]
    assert not bad, "temporary names in the bucket: %s" % bad[:3]
    assert names, "the bucket is empty"
    dt.ok("%d objects, none under a temporary name" % len(names))


def check_o_tmpfile(llmd):
    code = llmd.o_tmpfile_errno()
    assert code == errno.EOPNOTSUPP, "open(O_TMPFILE): errno %s" % errno.errorcode.get(code, code)
    dt.ok("open(dir, O_RDWR|O_TMPFILE) -> EOPNOTSUPP")


def check_dynamo(mnt, store):
    d = os.path.join(mnt, "kvbm")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "dynamo-kvbm-disk-cache-Xy12Ab")  # mkostemp(O_RDWR|O_DIRECT)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_DIRECT, 0o600)
    try:
        dt.expect_errno(lambda: ep.fallocate(fd, 4 << 30), errno.EOPNOTSUPP, "fallocate(4 GiB)")
        dt.expect_errno(lambda: os.ftruncate(fd, 4 << 30), errno.EFBIG, "ftruncate(4 GiB)")
        os.unlink(path)  # DiskStorage unlinks its file right away
    finally:
        os.close(fd)
    assert not [n for n in store.objects() if "dynamo-kvbm" in n], "Dynamo's file was uploaded"


if __name__ == "__main__":
    sys.exit(main())
