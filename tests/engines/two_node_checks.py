#!/usr/bin/env python3
"""Two-node checks against the engines' own storage classes (installed, pinned, unchanged),
written in this project: node A and node B are two kvfs mounts of one bucket at kvfs's default
settings but unlink_policy remote (run.py), so that one node's deletes reach the other; node C
(--c) is at the defaults throughout. A name one node stores is looked up on the other SEEN_WAIT
after (the promised bound: negative_cache_ttl_ms, 1 s at p99); a name one node deletes is gone on
the other within metadata_cache_ttl_secs (30 s by default; polled, GONE_WITHIN). Every load is
compared byte for byte with what the other node stored.

    two_node_checks.py --a MOUNT_A --b MOUNT_B

Per engine, a scenario of steps; prints `PASS <engine>: <step>` or `FAIL <engine>: <step>: why`
per step (a step after a failed one fails as "not run"). run.py counts these lines. The
engines' logs go to stderr.
"""
import argparse
import asyncio
import mmap
import os
import random
import sys
import threading
import time
import traceback
import types

# A chunk another node stored is found within negative_cache_ttl_ms (500 ms) plus a request: the
# docs/guarantees.md's bound is 1 s at p99, and the checks wait no longer than that.
SEEN_WAIT = 1.0
# A name another node deleted is gone within metadata_cache_ttl_secs (30 s, the default) plus the
# one lookup a cached copy is still served for while it is revalidated.
GONE_WITHIN = 35.0
MIB = 1 << 20


def wait_gone(what, still_found):
    """Polls still_found() (how many deleted names a node still finds) until it is 0."""
    deadline = time.monotonic() + GONE_WITHIN
    while True:
        n = still_found()
        if n == 0:
            return
        assert time.monotonic() < deadline, "%s: still finds %d, %.0f s after the delete" % (
            what, n, GONE_WITHIN)
        time.sleep(0.5)


def payload(seed, n):
    return random.Random(seed).randbytes(n)


def wait_for(what, fn, timeout=30.0):
    """Polls fn() until it returns something other than None (the engines' async APIs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = fn()
        if r is not None:
            return r
        time.sleep(0.01)
    raise AssertionError("%s: no result within %.0f s" % (what, timeout))


class Scenario:
    """Steps of one engine, in order; after a failed step the rest are reported, not run."""

    def __init__(self, engine):
        self.engine, self.broken = engine, None
        self.failed = 0

    def step(self, name, fn):
        label = "%s: %s" % (self.engine, name)
        if self.broken:
            print("FAIL %s: not run (after the failed step '%s')" % (label, self.broken),
                  flush=True)
            self.failed += 1
            return None
        t0 = time.time()
        try:
            r = fn()
            print("PASS %s (%.1fs)" % (label, time.time() - t0), flush=True)
            return r
        except Exception as e:  # noqa: BLE001 - reported, then the scenario stops
            traceback.print_exc(file=sys.stderr)
            print("FAIL %s: %s" % (label, " ".join(repr(e).split())[:600]), flush=True)
            self.broken, self.failed = name, self.failed + 1
            return None


# ---- LMCache MP L2 adapters: FSL2Adapter (Python, aiofiles) and fs_native (C++ connector) ----


class _Buf:
    """The MemoryObj surface the L2 adapters use (byte_array), as LMCache's own tests do."""

    def __init__(self, data):
        self._data = bytearray(data)

    @property
    def byte_array(self):
        return memoryview(self._data)


def lookup(adp, ks):
    """An L2 adapter's lookup-and-lock of `ks` (then unlocked): which of them it finds."""
    from lmcache.v1.distributed.api import MemoryLayoutDesc
    tid = adp.submit_lookup_and_lock_task(ks, {0: MemoryLayoutDesc(shapes=[], dtypes=[])})
    bm = wait_for("lookup", lambda: adp.query_lookup_and_lock_result(tid))
    adp.submit_unlock(ks)
    return [bm.test(i) for i in range(len(ks))]


def l2_scenario(engine, make, mnt_a, mnt_b, n=16, size=MIB):
    from lmcache.v1.distributed.api import ObjectKey

    sub = "l2-" + make.__name__[5:]  # fs_l2 / fs_native
    base_a, base_b = os.path.join(mnt_a, sub), os.path.join(mnt_b, sub)
    keys = [ObjectKey(chunk_hash=bytes([i]) * 16, model_name="kvfs-check", kv_rank=0)
            for i in range(n)]
    keys2 = [ObjectKey(chunk_hash=bytes([i]) * 16, model_name="kvfs-check", kv_rank=0)
             for i in range(n, 2 * n)]
    data = {k: payload("%s-%d" % (engine, i), size) for i, k in enumerate(keys + keys2)}
    sc = Scenario(engine)
    adapters = {}

    def store(adp, ks):
        # The buffers stay referenced until the task completes: the native connector writes
        # from them after submit returns (in LMCache they are L1 memory objects, long-lived).
        bufs = [_Buf(data[k]) for k in ks]
        tid = adp.submit_store_task(ks, bufs)

        def done():
            c = adp.pop_completed_store_tasks()
            return c[tid] if tid in c else None
        r = wait_for("store", done)
        del bufs
        assert int(r) >= 0, "store task failed: %r" % (r,)

    def load_equal(adp, ks):
        bufs = [_Buf(bytes(size)) for _ in ks]
        tid = adp.submit_load_task(ks, bufs)
        bm = wait_for("load", lambda: adp.query_load_result(tid))
        hits = [bm.test(i) for i in range(len(ks))]
        assert all(hits), "load missed %d of %d" % (hits.count(False), len(ks))
        bad = [i for i, (k, b) in enumerate(zip(ks, bufs)) if bytes(b._data) != data[k]]
        assert not bad, "%d chunks differ (first: #%d)" % (len(bad), bad[0])

    def a_stores():
        adapters["a"] = make(base_a)
        store(adapters["a"], keys)
        assert all(lookup(adapters["a"], keys)), "A does not find what it stored"

    def b_loads():
        time.sleep(SEEN_WAIT)
        adapters["b"] = make(base_b)
        assert all(lookup(adapters["b"], keys)), "B misses: %s" % lookup(adapters["b"], keys)
        load_equal(adapters["b"], keys)

    def b_deletes():
        adapters["b"].delete(keys)
        assert not any(lookup(adapters["b"], keys)), "B still finds deleted chunks"
        wait_gone("A", lambda: lookup(adapters["a"], keys).count(True))

    def a_stores_again():
        # The pool directory was emptied by B: A, which made it once at start, stores on.
        store(adapters["a"], keys2 + keys[:2])
        time.sleep(SEEN_WAIT)
        assert all(lookup(adapters["b"], keys2 + keys[:2])), "B misses the new chunks"
        load_equal(adapters["b"], keys2 + keys[:2])

    def restarted():
        for adp in adapters.values():
            adp.close()
        adapters.clear()
        for name, base in (("A", base_a), ("B", base_b)):
            adp = make(base)
            adapters[name] = adp
            want = [True] * len(keys2) + [True] * 2 + [False] * (n - 2)
            got = lookup(adp, keys2 + keys)
            assert got == want, "restarted adapter on %s: %d hits, want %d" % (
                name, got.count(True), want.count(True))
            load_equal(adp, keys2 + keys[:2])

    sc.step("A stores %d x %d MiB" % (n, size // MIB), a_stores)
    sc.step("B finds and loads them byte for byte", b_loads)
    sc.step("B deletes them all; gone on A too", b_deletes)
    sc.step("A stores again into the emptied pool; B loads", a_stores_again)
    sc.step("restarted adapters on A and B find exactly what is there", restarted)
    for adp in adapters.values():
        try:
            adp.close()
        except Exception:  # noqa: BLE001 - closing after a failure
            pass
    return sc.failed


def burst_scenario(engine, make, mnt_a, mnt_b):
    """LMCache's MP server stores the chunks of a request in one task, back to back: B looks the
    keys up first (misses, as a scheduler's lookup does), A stores 16 and then 256 of them with a
    real model's name (longer file names), and B must find every one of them within the feed's
    bound - they used to arrive 10-20 s late when a burst's feed entries were too many for the
    feed to write in time (issue 47 item 1)."""
    from lmcache.v1.distributed.api import ObjectKey

    base_a, base_b = os.path.join(mnt_a, "burst"), os.path.join(mnt_b, "burst")
    sc = Scenario(engine)
    adapters = {"a": make(base_a), "b": make(base_b)}

    def burst(n, size, seed):
        keys = [ObjectKey(chunk_hash=random.Random("%s-%d" % (seed, i)).randbytes(32),
                          model_name="meta-llama/Llama-3.1-8B", kv_rank=0) for i in range(n)]
        data = {k: payload("%s-%d" % (seed, i), size) for i, k in enumerate(keys)}
        assert not any(lookup(adapters["b"], keys)), "B finds chunks before they were stored"
        # B keeps looking while A stores, as a scheduler does with the requests it is given.
        found_at = {}
        stop = threading.Event()

        def b_looks():
            while not stop.is_set() and len(found_at) < n:
                for k, hit in zip(keys, lookup(adapters["b"], keys)):
                    if hit and k not in found_at:
                        found_at[k] = time.monotonic()
                time.sleep(0.02)
        looker = threading.Thread(target=b_looks)
        looker.start()
        bufs = [_Buf(data[k]) for k in keys]
        tid = adapters["a"].submit_store_task(keys, bufs)

        def done():
            c = adapters["a"].pop_completed_store_tasks()
            return c[tid] if tid in c else None
        try:
            r = wait_for("store", done, timeout=120)
            assert int(r) >= 0, "store task failed: %r" % (r,)
            stored = time.monotonic()
            # The README's bound is about a second; a loaded CI machine gets three.
            looker.join(timeout=3 * SEEN_WAIT)
        finally:
            stop.set()
            looker.join()
        assert len(found_at) == n, "B still misses %d of %d chunks %.1f s after A's store " \
            "task ended" % (n - len(found_at), n, time.monotonic() - stored)
        print("  B found all %d, the last %.2f s after A's store task ended" % (
            n, max(found_at.values()) - stored), file=sys.stderr, flush=True)
        bufs = [_Buf(bytes(size)) for _ in keys[:8]]
        tid = adapters["b"].submit_load_task(keys[:8], bufs)
        bm = wait_for("load", lambda: adapters["b"].query_load_result(tid))
        assert all(bm.test(i) for i in range(8)), "B's load missed"
        assert all(bytes(b._data) == data[k] for k, b in zip(keys[:8], bufs)), "B's load differs"

    sc.step("B looks up, A stores a burst of 16 x 2 MiB; B finds all", lambda: burst(16, 2 * MIB,
                                                                                  "b16"))
    sc.step("B looks up, A stores a burst of 256 x 256 KiB; B finds all",
            lambda: burst(256, 256 << 10, "b256"))
    for adp in adapters.values():
        try:
            adp.close()
        except Exception:  # noqa: BLE001 - closing after a failure
            pass
    return sc.failed


def make_fs_l2(base):
    from lmcache.v1.distributed.l2_adapters.fs_l2_adapter import FSL2Adapter, FSL2AdapterConfig
    return FSL2Adapter(FSL2AdapterConfig(base_path=base))


def make_fs_native(base):
    from lmcache.v1.distributed.l2_adapters.factory import create_l2_adapter_from_registry
    from lmcache.v1.distributed.l2_adapters.fs_native_l2_adapter import FSNativeL2AdapterConfig
    os.makedirs(base, exist_ok=True)
    return create_l2_adapter_from_registry(FSNativeL2AdapterConfig(base_path=base))


# ---- LMCache v1 LocalDiskBackend (`local_disk:` in non-MP mode) ----


def local_disk_scenario(mnt_a, mnt_b, n=8):
    import torch
    from lmcache.utils import CacheEngineKey
    from lmcache.v1.config import LMCacheEngineConfig
    from lmcache.v1.memory_management import MemoryFormat
    from lmcache.v1.memory_allocators.mixed_memory_allocator import MixedMemoryAllocator
    from lmcache.v1.storage_backend.local_cpu_backend import LocalCPUBackend
    from lmcache.v1.storage_backend.local_disk_backend import LocalDiskBackend

    sc = Scenario("LMCache LocalDiskBackend")
    shape, dtype, fmt = torch.Size([2, 2, 256, 8, 128]), torch.bfloat16, MemoryFormat.KV_2LTD
    loop = asyncio.new_event_loop()  # the backend's disk worker posts to a running loop
    threading.Thread(target=loop.run_forever, daemon=True).start()
    alloc = MixedMemoryAllocator(256 * MIB)
    keys = [CacheEngineKey(model_name="kvfs-check", world_size=1, worker_id=0,
                           chunk_hash=1000 + i, dtype=dtype) for i in range(n)]
    written = {}
    state = {}

    def backend(mnt):
        cfg = LMCacheEngineConfig.from_defaults(chunk_size=256, local_disk=os.path.join(
            mnt, "lmcache-local-disk"), max_local_disk_size=1.0,
            lmcache_instance_id="kvfs-check")
        cpu = LocalCPUBackend(LMCacheEngineConfig.from_legacy(chunk_size=256),
                              memory_allocator=alloc)
        return LocalDiskBackend(config=cfg, loop=loop, local_cpu_backend=cpu, dst_device="cpu")

    def a_puts():
        state["a"] = be = backend(mnt_a)
        for i, k in enumerate(keys):
            obj = be.local_cpu_backend.allocate(shape, dtype, fmt)
            flat = obj.tensor.view(torch.uint8).reshape(-1)
            flat.copy_(torch.frombuffer(bytearray(payload("ld-%d" % i, flat.numel())),
                                        dtype=torch.uint8))
            written[k] = bytes(obj.byte_array)
            be.submit_put_task(k, obj)
        wait_for("puts", lambda: True if all(be.contains(k) for k in keys) else None)
        for k in keys:
            assert os.path.getsize(be._key_to_path(k)) == len(written[k])

    def reads_after_restart(mnt, node):
        def fn():
            # LocalDiskBackend keeps its index in memory only: a restarted one starts empty and
            # is given each chunk's metadata (insert_key, as LMCache's own tests do); the bytes
            # come from the files, through kvfs.
            be = backend(mnt)
            try:
                assert not be.contains(keys[0]), "a new backend claims a chunk it never indexed"
                for k in keys:
                    be.insert_key(k, len(written[k]), shape, dtype, fmt)
                got = be.batched_get_blocking(keys)
                bad = [i for i, (k, o) in enumerate(zip(keys, got))
                       if o is None or bytes(o.byte_array) != written[k]]
                assert not bad, "%d of %d chunks missing or different on %s" % (
                    len(bad), n, node)
                for o in got:
                    o.ref_count_down()
            finally:
                be.close()
        return fn

    def close_a():
        state["a"].close()

    sc.step("A puts %d chunks (engine write path)" % n, a_puts)
    sc.step("A's backend closes (engine restart)", close_a)
    time.sleep(SEEN_WAIT)
    sc.step("a restarted backend on A reads every chunk byte for byte",
            reads_after_restart(mnt_a, "A"))
    sc.step("a backend on B reads every chunk byte for byte", reads_after_restart(mnt_b, "B"))
    loop.call_soon_threadsafe(loop.stop)
    return sc.failed


# ---- vLLM 0.33.0 FileSystemTierManager (kv_offload tiering "fs") ----


def vllm_spec():
    """The fields of vLLM's OffloadingSpec that FileSystemTierManager and its FileMapper read
    (building a real one needs a whole VllmConfig and a model)."""
    ns = types.SimpleNamespace
    config = ns(groups=[ns(tokens_per_block=16, layer_names=["model.layers.0.attn"])],
                parallel=ns(tp_size=1, pp_size=1, pcp_size=1, dcp_size=1, rank=0,
                            is_parallelism_agnostic=True),
                canonical_layout=False, replicated_layout=False, kv_cache_layout=None,
                model=ns(name="kvfs/check-model", dtype="bfloat16"),
                cache=ns(tokens_per_hash=16))
    return ns(config=config, blocks_per_chunk=1,
              kv_events_config=ns(enable_kv_cache_events=False))


def vllm_scenario(mnt_a, mnt_b, mnt_c=None, n=16, block=256 << 10):
    import numpy as np
    from vllm.v1.kv_offload.base import LookupResult, ReqContext, make_offload_key
    from vllm.v1.kv_offload.tiering.base import TransferJob
    from vllm.v1.kv_offload.tiering.fs.manager import FileSystemTierManager

    sc = Scenario("vLLM FileSystemTierManager")
    keys = [make_offload_key(bytes([i]) * 32, 0) for i in range(n)]
    def aligned(fill=None):
        # The primary tier's memory is page-aligned (pinned) in vLLM, and O_DIRECT needs it.
        buf = np.frombuffer(mmap.mmap(-1, n * block), dtype=np.uint8).reshape(n, block)
        if fill is not None:
            buf[:] = fill
        return buf

    src = aligned(np.frombuffer(payload("vllm", n * block), dtype=np.uint8).reshape(n, block))
    mgrs, jobs = {}, [0]

    def manager(mnt, primary):
        return FileSystemTierManager(vllm_spec(), memoryview(primary), "fs",
                                     root_dir=os.path.join(mnt, "vllm-tier"),
                                     n_read_threads=4, n_write_threads=4)

    def run_job(mgr, ks, chunk_ids, promotion):
        jobs[0] += 1
        job = TransferJob(job_id=jobs[0], keys=ks, chunk_ids=np.array(chunk_ids),
                          is_promotion=promotion, req_context=ReqContext(req_id="kvfs"))
        (mgr.submit_load if promotion else mgr.submit_store)(job)
        res = wait_for("job", lambda: next((r for r in mgr.get_finished_jobs()
                                            if r.job_id == job.job_id), None))
        assert res.success, "job %d (%s) failed" % (job.job_id,
                                                    "load" if promotion else "store")

    def lookup(mgr, ks):
        out = []
        for k in ks:
            ctx = ReqContext(req_id="lookup")
            while True:
                r = mgr.lookup(k, ctx)
                if r != LookupResult.RETRY:
                    break
                mgr.on_schedule_end(None)  # flushes the async lookups
                time.sleep(0.005)
            out.append(r == LookupResult.HIT)
        return out

    def a_stores():
        mgrs["a"] = manager(mnt_a, src)
        run_job(mgrs["a"], keys, range(n), False)
        assert all(lookup(mgrs["a"], keys)), "A misses its own blocks"

    def b_loads():
        time.sleep(SEEN_WAIT)
        dst = aligned()
        mgrs["b"] = manager(mnt_b, dst)
        assert all(lookup(mgrs["b"], keys)), "B misses blocks A stored"
        run_job(mgrs["b"], keys, range(n), True)
        assert (dst == src).all(), "B loaded different bytes"

    def b_deletes():
        # The tier's own evictors are "testing only"; a deployment's cleaner removes files.
        for k in keys:
            os.remove(mgrs["b"].file_mapper.get_file_name(k))

        def found_on_a():
            a2 = manager(mnt_a, src)  # a fresh lookup cache (the manager caches verdicts)
            try:
                return lookup(a2, keys).count(True)
            finally:
                a2.shutdown()
        wait_gone("A", found_on_a)

    def a_stores_again():
        run_job(mgrs["a"], keys, range(n), False)
        time.sleep(SEEN_WAIT)
        dst = aligned()
        b2 = manager(mnt_b, dst)
        try:
            assert all(lookup(b2, keys)), "B misses the re-stored blocks"
            run_job(b2, keys, range(n), True)
        finally:
            b2.shutdown()
        assert (dst == src).all(), "B loaded different bytes"

    def c_removes_locally():
        # Node C runs kvfs's default unlink_policy (local): its deletes (a cleaner, or vLLM's
        # own after a short read) remove the blocks on C only; A and B keep finding them.
        time.sleep(SEEN_WAIT)
        c = manager(mnt_c, aligned())
        try:
            assert all(lookup(c, keys)), "C misses blocks A stored"
            for k in keys:
                os.remove(c.file_mapper.get_file_name(k))
        finally:
            c.shutdown()
        c2 = manager(mnt_c, aligned())
        try:
            got = lookup(c2, keys)
        finally:
            c2.shutdown()
        assert not any(got), "C still finds %d blocks it removed" % got.count(True)
        time.sleep(SEEN_WAIT)
        dst = aligned()
        b3 = manager(mnt_b, dst)
        try:
            assert all(lookup(b3, keys)), "B lost blocks C removed locally"
            run_job(b3, keys, range(n), True)
        finally:
            b3.shutdown()
        assert (dst == src).all(), "B loaded different bytes"

    def restarted():
        for m in mgrs.values():
            m.shutdown()
        mgrs.clear()
        dst = aligned()
        m = manager(mnt_a, dst)
        try:
            assert all(lookup(m, keys)), "restarted manager misses blocks"
            run_job(m, keys, range(n), True)
        finally:
            m.shutdown()
        assert (dst == src).all(), "restarted manager loaded different bytes"

    sc.step("A stores %d blocks of %d KiB (O_DIRECT probe, temp + rename)" % (n, block >> 10),
            a_stores)
    sc.step("B looks them up and loads them byte for byte", b_loads)
    sc.step("B removes the files; A's lookups miss", b_deletes)
    sc.step("A stores again; B loads byte for byte", a_stores_again)
    if mnt_c:
        sc.step("C (unlink_policy local, the default) removes the files: C misses them, B still "
                "loads them", c_removes_locally)
    sc.step("a restarted manager on A finds and loads everything", restarted)
    for m in mgrs.values():
        m.shutdown()
    return sc.failed


# ---- SGLang 0.5.23 HiCacheFile with its LRUFileEvictor ----


def sglang_scenario(mnt_a, mnt_b, n=24, page=256 << 10, cap_pages=16):
    import torch
    from sglang.srt.mem_cache.hicache_storage import HiCacheFile, HiCacheStorageConfig

    sc = Scenario("SGLang HiCacheFile + LRUFileEvictor")
    os.environ.pop("SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR", None)

    def storage(mnt, evict):
        extra = {"max_size": str(cap_pages * page), "eviction_ratio": 0.75} if evict else {}
        cfg = HiCacheStorageConfig(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, attn_cp_rank=0,
                                   attn_cp_size=1, is_mla_model=False,
                                   enable_storage_metrics=False, is_page_first_layout=False,
                                   model_name="kvfs/check-model", extra_config=extra)
        return HiCacheFile(cfg, file_path=os.path.join(mnt, "hicache"))

    keys = ["%064x" % (i + 1) for i in range(n)]
    vals = {k: torch.frombuffer(bytearray(payload("sg-" + k, page)), dtype=torch.uint8)
            for k in keys}
    st = {}

    def get_equal(s, ks):
        for k in ks:
            out = torch.zeros(page, dtype=torch.uint8)
            assert s.get(k, out) is not None, "get(%s...) missed" % k[:8]
            assert torch.equal(out, vals[k]), "get(%s...) returned other bytes" % k[:8]

    def a_sets():
        st["a"] = storage(mnt_a, evict=True)
        for k in keys:
            assert st["a"].set(k, vals[k]), "set(%s...) failed" % k[:8]

    def lru_evicted():
        # The cap holds cap_pages pages; the oldest went to os.remove on A.
        present = [st["a"].exists(k) for k in keys]
        assert present[-1] and not present[0], "eviction: present %s" % present
        time.sleep(SEEN_WAIT)
        st["b"] = storage(mnt_b, evict=False)
        on_b = [st["b"].exists(k) for k in keys]
        assert on_b == present, "B sees %s, A has %s" % (on_b, present)
        st["kept"] = [k for k, p in zip(keys, present) if p]

    def b_gets():
        get_equal(st["b"], st["kept"])

    def b_clears_a_sets():
        assert st["b"].clear(), "clear() failed"
        wait_gone("A", lambda: sum(st["a"].exists(k) for k in keys))
        for k in keys[:4]:
            assert st["a"].set(k, vals[k]), "A's set(%s...) after B's clear() failed" % k[:8]
        time.sleep(SEEN_WAIT)
        get_equal(st["b"], keys[:4])

    def restarted():
        s = storage(mnt_a, evict=True)  # its evictor scans what is on the mount
        assert s._evictor._total_bytes == 4 * page, "evictor found %d bytes, want %d" % (
            s._evictor._total_bytes, 4 * page)
        get_equal(s, keys[:4])

    sc.step("A sets %d pages of %d KiB through a %d-page LRU cap" % (n, page >> 10, cap_pages),
            a_sets)
    sc.step("the LRU evictor removed the oldest; B sees exactly what A kept", lru_evicted)
    sc.step("B gets every kept page byte for byte", b_gets)
    sc.step("B clear()s the directory; A sets again; B gets them", b_clears_a_sets)
    sc.step("a restarted HiCacheFile on A scans its files and reads them", restarted)
    return sc.failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--c", default=None, help="a node with kvfs's default unlink_policy (local)")
    args = ap.parse_args()
    failed = 0
    for name, fn in [
            ("LMCache FSL2Adapter", lambda: l2_scenario("LMCache FSL2Adapter", make_fs_l2,
                                                        args.a, args.b)),
            ("LMCache fs_native", lambda: l2_scenario("LMCache fs_native", make_fs_native,
                                                      args.a, args.b)),
            ("LMCache FSL2Adapter bursts", lambda: burst_scenario(
                "LMCache FSL2Adapter bursts", make_fs_l2, args.a, args.b)),
            ("LMCache LocalDiskBackend", lambda: local_disk_scenario(args.a, args.b)),
            ("vLLM FileSystemTierManager", lambda: vllm_scenario(args.a, args.b, args.c)),
            ("SGLang HiCacheFile", lambda: sglang_scenario(args.a, args.b))]:
        try:
            failed += fn()
        except Exception as e:  # noqa: BLE001 - an import or setup error outside the steps
            traceback.print_exc(file=sys.stderr)
            print("FAIL %s: scenario setup: %r" % (name, e), flush=True)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
