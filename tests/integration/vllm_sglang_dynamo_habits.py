"""engines_two_mounts_replay.py's checks of vLLM's, SGLang's and Dynamo KVBM's own habits (as the
engines ship in 2026-11: engine_patterns_vllm_sglang_dynamo.py), through the same two mounts (node A
and node B of one bucket, unlink_policy remote, metadata TTL `ttl`): vLLM's O_DIRECT probe and its
delete after a short read, SGLang fast_file's replace of a page of another size, its delete of a
size-mismatched page, its LRU and its stale-temp scan, Dynamo KVBM's scratch file through its
fallocate fallbacks (and at a real tier's size), new_at_path. The generic
store/lookup/scan/load/evict/restart checks of these engines run in engines_two_mounts_replay.py.

A check that kvfs refuses on purpose asserts the documented errno and the engine's own way out;
EXPECTED_FAILURES lists what kvfs fails that it should not (none today)."""
import errno
import os
import time

import daemon_test as dt
import engine_patterns as ep
import engine_patterns_vllm_sglang_dynamo as ep2

# check name -> reason: run, reported as XFAIL (or XPASS) without failing the run.
EXPECTED_FAILURES = {}


def run(checks, a, b, store, size, ttl):
    def check(name, fn):
        if name not in EXPECTED_FAILURES:
            return checks.run(name, fn)
        try:
            fn()
            print("XPASS %s (expected to fail: %s)" % (name, EXPECTED_FAILURES[name]), flush=True)
        except Exception as e:  # noqa: BLE001
            print("XFAIL %s: %r (%s)" % (name, e, EXPECTED_FAILURES[name]), flush=True)

    def settle():
        # What either node accepted is stored (a write-back close returns before its upload),
        # then the other node's cached answers expire.
        a.sync()
        b.sync()
        time.sleep(ttl + 0.5)

    check("vLLM fs tier: the O_DIRECT probe passes on both nodes (stores and loads use O_DIRECT)",
          lambda: check_vllm_probe(a.mnt, b.mnt))
    check("vLLM fs tier: a short read removes the chunk (unlink_policy remote: on both nodes)",
          lambda: check_vllm_short_read(a.mnt, b.mnt, size["vllm"], settle))
    check("vLLM fs tier: cold one-read O_DIRECT loads of 16 MiB chunks on B (4 threads) are "
          "whole (a short read would make vLLM delete the chunk)",
          lambda: check_vllm_big_cold(a.mnt, b.mnt, settle))
    check("vLLM fs tier and SGLang fast_file: both nodes store the same 8 chunks at once (temp + "
          "rename racing on one name): every store succeeds, every chunk reads back",
          lambda: check_same_chunks_both_nodes(a.mnt, b.mnt, size, settle))
    check("SGLang direct_io: a page read short is an error and stays (no delete)",
          lambda: check_sglang_dio_short(a.mnt, b.mnt, size["sglang_dio"], settle))
    check("SGLang fast_file: os.replace over a page of another size is EEXIST (documented), "
          "the set fails, temp removed, the old page still reads on B",
          lambda: check_fastfile_resize(a.mnt, b.mnt, size["fastfile"], settle))
    check("SGLang fast_file: a size-mismatched page is removed at load (remote: on both nodes)",
          lambda: check_fastfile_mismatch(a.mnt, b.mnt, size["fastfile"], settle))
    check("SGLang fast_file: LRU of 4 pages on A removes the 2 oldest of 6, B sees the 4 kept",
          lambda: check_fastfile_lru(a.mnt, b.mnt, settle))
    check("SGLang fast_file: the start-up scan removes a stale temp (a dead writer's)",
          lambda: check_fastfile_stale_temp(a.mnt))
    for zero_fill in (False, True):
        how = "zero-fill (DYN_KVBM_DISK_ZEROFILL_FALLBACK)" if zero_fill else "ftruncate"
        check("Dynamo KVBM scratch file on both nodes: fallocate EOPNOTSUPP -> %s fallback, "
              "O_DIRECT pwrite/pread at offsets after the unlink, nothing in the bucket" % how,
              lambda z=zero_fill: check_dynamo_scratch(a.mnt, b.mnt, store, z))
    check("Dynamo KVBM scratch file at a real tier's size (4 GiB): its ftruncate fallback is "
          "EFBIG (past max_chunk_bytes), DiskStorage::new fails, leaks an empty file",
          lambda: check_dynamo_too_big(a.mnt, store))
    check("Dynamo KVBM new_at_path(create, persist): fallocate falls back to ftruncate, the named "
          "file is published at close and read O_DIRECT at an offset on B",
          lambda: check_dynamo_at_path(a.mnt, b.mnt, settle))


def check_vllm_probe(mnt_a, mnt_b):
    for mnt in (mnt_a, mnt_b):
        e = ep2.VllmFs(mnt)
        assert e.use_o_direct, "O_DIRECT probe failed on %s (vLLM falls back to buffered)" % mnt
        assert os.path.exists(os.path.join(e.base, "config.json"))
        left = [n for n in os.listdir(e.base) if n.startswith(".o_direct_probe")]
        assert not left, "probe file left: %s" % left
    dt.ok("probe O_DIRECT on both nodes, config.json one file, no probe left")


def check_vllm_short_read(mnt_a, mnt_b, n, settle):
    va, vb = ep2.VllmFs(mnt_a), ep2.VllmFs(mnt_b)
    h = 200
    assert va.store(h, ep.payload(h, n))
    settle()
    # The same name read as a bigger chunk (a run whose block size changed, same prefix).
    dt.expect_errno(lambda: vb.load(h, n + ep2.PAGE), errno.EIO, "vLLM load of a short file")
    assert not vb.lookup(h), "B still finds the chunk it removed"
    deadline = time.time() + 10
    while va.lookup(h):
        assert time.time() < deadline, "A still finds the chunk B removed"
        settle()
    dt.ok("short read -> unlink on B -> gone on A (unlink_policy remote)")


def check_vllm_big_cold(mnt_a, mnt_b, settle):
    import concurrent.futures as cf
    va, vb = ep2.VllmFs(mnt_a), ep2.VllmFs(mnt_b)
    n, hs = 16 << 20, range(240, 244)
    for h in hs:
        assert va.store(h, ep.payload(h, n))
    settle()
    with cf.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda h: vb.load(h, n), hs))
    for h, data in zip(hs, got):
        assert data == ep.payload(h, n), "chunk %d differs" % h
    for h in hs:
        vb.evict(h)  # keep the bucket small for the checks after this one


def check_same_chunks_both_nodes(mnt_a, mnt_b, size, settle):
    import concurrent.futures as cf
    for cls in (ep2.VllmFs, ep2.SglangFastFile):
        ea, eb = cls(mnt_a), cls(mnt_b)
        n, hs = size[ea.name], range(220, 228)
        with cf.ThreadPoolExecutor(8) as pool:
            futs = [pool.submit(e.store, h, ep.payload(h, n)) for h in hs for e in (ea, eb)]
            for f in futs:
                f.result()  # vLLM: EEXIST from the rename is "already stored"; a raise fails
        settle()
        for e in (ea, eb):
            for h in hs:
                assert e.load(h, n) == ep.payload(h, n), "%s: chunk %d" % (e.name, h)


def check_sglang_dio_short(mnt_a, mnt_b, n, settle):
    sa, sb = ep2.SglangDirectIo(mnt_a), ep2.SglangDirectIo(mnt_b)
    h = 210
    assert sa.store(h, ep.payload(h, n))
    settle()
    dt.expect_errno(lambda: sb.load(h, n + ep2.PAGE), errno.EIO, "direct_io load of a short page")
    assert sb.lookup(h) and sb.load(h, n) == ep.payload(h, n)


def check_fastfile_resize(mnt_a, mnt_b, n, settle):
    fa, fb = ep2.SglangFastFile(mnt_a), ep2.SglangFastFile(mnt_b)
    h = 300
    assert fa.store(h, ep.payload(h, n))
    dt.expect_errno(lambda: fa.store(h, ep.payload(h, n // 2)), errno.EEXIST,
                    "fast_file replace of a page of another size")
    temps = [x for x in os.listdir(fa.dir) if ".bin.tmp." in x]
    assert not temps, "temp left: %s" % temps
    settle()
    assert fb.load(h, n) == ep.payload(h, n), "B does not read the first page"


def check_fastfile_mismatch(mnt_a, mnt_b, n, settle):
    fa, fb = ep2.SglangFastFile(mnt_a), ep2.SglangFastFile(mnt_b)
    h = 310
    assert fa.store(h, ep.payload(h, n))
    settle()
    dt.expect_errno(lambda: fb.load(h, n // 2), errno.EIO, "fast_file load, size mismatch")
    assert os.path.basename(fb.path(h)) in fb.removed and not fb.lookup(h)
    deadline = time.time() + 10
    while fa.lookup(h):
        assert time.time() < deadline, "A still finds the page B removed"
        settle()


def check_fastfile_lru(mnt_a, mnt_b, settle):
    root_a, root_b = os.path.join(mnt_a, "lru"), os.path.join(mnt_b, "lru")
    os.makedirs(root_a, exist_ok=True)
    fa = ep2.SglangFastFile(root_a, max_pages=4)
    n = 256 << 10
    for h in range(400, 406):
        assert fa.store(h, ep.payload(h, n))
    want_removed = {os.path.basename(fa.path(h)) for h in (400, 401)}
    assert set(fa.removed) == want_removed, "LRU removed %s" % fa.removed
    settle()
    fb = ep2.SglangFastFile(root_b, max_pages=4)  # its start-up scan seeds the LRU
    want = {os.path.basename(fb.path(h)) for h in range(402, 406)}
    assert fb.scan() == want, "B scans %s" % sorted(fb.scan())
    assert list(fb._lru) and set(fb._lru) == want
    for h in range(402, 406):
        assert fb.load(h, n) == ep.payload(h, n)


def check_fastfile_stale_temp(mnt):
    f = ep2.SglangFastFile(mnt)
    tmp = "%s.tmp.%d.%d.%s" % (f.path(320), 4242, 4242, "0" * 32)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # a writer that died here
    os.write(fd, b"x" * 4096)
    os.close(fd)
    time.sleep(1.1)
    f2 = ep2.SglangFastFile(mnt, stale_temp_age_s=1.0)
    assert os.path.basename(tmp) in f2.removed, "scan removed %s" % f2.removed
    assert not os.path.exists(tmp)


def check_dynamo_scratch(mnt_a, mnt_b, store, zero_fill):
    n = 512 << 10
    tiers = [ep2.DynamoKvbm(m, slots=8, block=n, zero_fill=zero_fill) for m in (mnt_a, mnt_b)]
    try:
        for t in tiers:
            want = "zero-fill" if zero_fill else "ftruncate"
            assert t.allocated_by == want, "allocated by %s" % t.allocated_by
            assert not os.path.exists(t.file), "scratch file still linked"
            assert os.fstat(t.fd).st_size == 8 * n
            for h in range(8):
                assert t.store(h, ep.payload(h + 7, n))
            for h in reversed(range(8)):
                assert t.load(h, n) == ep.payload(h + 7, n), "block %d differs" % h
    finally:
        for t in tiers:
            t.close()
    for m in (mnt_a, mnt_b):
        assert not os.listdir(os.path.join(m, "kvbm")), "left in kvbm/"
    assert not [k for k in store.objects() if "dynamo-kvbm" in k], "scratch file uploaded"


def check_dynamo_too_big(mnt, store):
    d = os.path.join(mnt, "kvbm")
    before = set(os.listdir(d)) if os.path.isdir(d) else set()
    try:
        ep2.DynamoKvbm(mnt, slots=4096, block=1 << 20)
        raise AssertionError("a 4 GiB scratch file was allocated")
    except OSError as e:
        assert e.errno == errno.EFBIG, "errno %s" % errno.errorcode.get(e.errno, e.errno)
    # DiskStorage::new returned with the descriptor open and the file linked; the process then
    # exits (KVBM cannot start): its exit closes the descriptor. What that leaves is the engine's
    # leak, as on a local disk (an empty dynamo-kvbm-disk-cache-XXXXXX in the directory).
    left = sorted(set(os.listdir(d)) - before)
    for name in left:
        for fd in fds_of(os.path.join(d, name)):
            os.close(fd)
    time.sleep(0.5)
    sizes = {n: os.stat(os.path.join(d, n)).st_size for n in left}
    assert all(v == 0 for v in sizes.values()), "leftover sizes %s" % sizes
    uploaded = [k for k in store.objects() if "dynamo-kvbm" in k]
    dt.ok("EFBIG; the engine leaks %d linked empty scratch file(s) (as on a local disk), "
          "%d in the bucket after its exit" % (len(left), len(uploaded)))
    for name in left:  # the operator's cleanup of the leak
        os.unlink(os.path.join(d, name))


def fds_of(path):
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == path:
                out.append(int(fd))
        except OSError:
            pass
    return out


def check_dynamo_at_path(mnt_a, mnt_b, settle):
    da, db = ep2.DynamoKvbmAtPath(mnt_a), ep2.DynamoKvbmAtPath(mnt_b)
    h, n = 330, 1 << 20
    p = da.path(h)
    fd = da.open(p, 2 * n, create=True)  # a two-block file: blocks written at offsets
    try:
        for i in range(2):
            buf = ep2.aligned(ep.payload(h + i, n))
            assert os.pwrite(fd, buf, i * n) == n
            buf.close()
    finally:
        os.close(fd)
    settle()
    fd = db.open(db.path(h), 2 * n, create=False)
    try:
        assert os.fstat(fd).st_size == 2 * n
        buf = ep2.aligned_empty(n)
        assert os.preadv(fd, [buf], n) == n and bytes(buf) == ep.payload(h + 1, n)
        buf.close()
    finally:
        os.close(fd)
