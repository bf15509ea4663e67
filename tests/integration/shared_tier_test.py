#!/usr/bin/env python3
"""One tier shared by several nodes, through real kvfs daemons of one store:

- an engine's delete under the default unlink_policy (local) removes the name on that node only:
  it reads as missing there (past the metadata TTL, and in listings) while the other nodes still
  read the chunk and the object stays in the bucket; storing the chunk again shows it again;
- with -o unlink_policy=remote the delete reaches every node within the metadata TTL;
- a lookup of an existing chunk in a vLLM / llm-d four-level tree costs at most one store
  request on a node that has never seen its directories (counted with `kvfs stats`), and so does
  a lookup of a missing one.

    shared_tier_test.py --kvfs PATH/kvfs --backend s3|dir [--chunks N] [--tree N]

--tree (default --chunks) chunks are written, --chunks of them, picked at random, looked up: a tree
larger than one LIST page (1000 keys) measures the lookups the first listing does not answer.

Prints `N passed, N failed` and the lookup rates it saw (not checked: tests never assert
timings); exit 1 on a failure, 77 when skipped unless KVFS_REQUIRE_FUSE=1 / KVFS_REQUIRE_S3=1.
"""
import argparse
import errno
import os
import random
import sys
import time

import daemon_test as dt
from engines_two_mounts_replay import run_checks
from whole_chunks_test import on_node, payload, stored, wait_for

MIB = 1 << 20
TTL = 1  # metadata_cache_ttl_secs of every node


def vllm_path(mnt, i):
    """vLLM's fs tier (and llm-d 0.22): <root>/<model>_<sha12>_r<rank>/<hhh>/<hh>_g<group>/<hash>.bin,
    one never-seen <hhh> directory per chunk."""
    h = "%03x%02x%059x" % (i % 4096, (i * 7) % 256, i)
    return os.path.join(mnt, "kv", "org_model_0123456789ab_r0", h[:3], h[3:5] + "_g0", h + ".bin")


def requests(node):
    """Store requests other than the GETs of downloads: what lookups cost (each found chunk's
    lookup also starts its download, prefetch on lookup: those GETs are reads, not lookups)."""
    s = node.stats()
    return s["kvfs_store_requests"] - s["kvfs_store_get_requests"]


def run(ctx, checks, nchunks, ntree):
    store = ctx.store()
    opts = {"metadata_cache_ttl_secs": str(TTL)}
    a = dt.Daemon(ctx, store, ctx.path("mnt-A"), ctx.path("cache-A"), opts, name="A")
    b = dt.Daemon(ctx, store, ctx.path("mnt-B"), ctx.path("cache-B"), opts, name="B")
    data = payload(1, MIB)
    os.makedirs(os.path.join(a.mnt, "tier"))
    for n in ("c1", "c2"):
        with open(os.path.join(a.mnt, "tier", n), "wb") as f:
            f.write(data)

    def local_delete():
        pa, pb = os.path.join(a.mnt, "tier", "c1"), on_node(b.mnt, "tier", "c1")
        with open(pb, "rb") as f:
            assert f.read() == data
        os.unlink(pa)  # node A's engine evicts (its LRU, or a read it did not like)
        for _ in range(2):  # at once, and after the metadata TTL (cached entries expired)
            assert not os.path.exists(pa), "A still sees the chunk it deleted"
            assert "c1" not in os.listdir(os.path.join(a.mnt, "tier")), "A still lists it"
            try:
                open(pa, "rb")
                raise AssertionError("A opens the chunk it deleted")
            except FileNotFoundError:
                pass
            time.sleep(TTL + 0.5)
        with open(pb, "rb") as f:
            assert f.read() == data, "B lost the chunk A deleted"
        assert "tier/c1" in stored(store), "the object left the bucket"
        try:
            os.unlink(pa)
            raise AssertionError("a second unlink on A succeeded")
        except FileNotFoundError:
            pass
    checks.run("unlink_policy local (default): A's delete hides the chunk on A only; B reads it; "
               "the object stays", local_delete)

    def store_again():
        pa = os.path.join(a.mnt, "tier", "c1")
        with open(pa, "wb") as f:  # the engine stores the chunk again: same bytes, same name
            f.write(data)
        with open(pa, "rb") as f:
            assert f.read() == data
        assert "c1" in os.listdir(os.path.join(a.mnt, "tier"))
    checks.run("A stores the chunk it deleted again: it shows on A again", store_again)

    c = dt.Daemon(ctx, store, ctx.path("mnt-C"), ctx.path("cache-C"),
                  dict(opts, unlink_policy="remote"), name="C (unlink_policy=remote)")

    def remote_delete():
        pb = on_node(b.mnt, "tier", "c2")
        with open(pb, "rb") as f:
            assert f.read() == data
        os.unlink(on_node(c.mnt, "tier", "c2"))
        assert "tier/c2" not in stored(store), "the object is still in the bucket"
        # Within the TTL on the other nodes (polled with a deadline: no timing is asserted).
        wait_for(lambda: not os.path.exists(pb), "the delete to reach B")
        wait_for(lambda: not os.path.exists(os.path.join(a.mnt, "tier", "c2")),
                 "the delete to reach A")
    checks.run("-o unlink_policy=remote: C's delete removes the object for every node",
               remote_delete)

    def deep_lookups():
        for i in range(ntree):
            p = vllm_path(a.mnt, i)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data[:4096])
        a.sync()  # stored before the cold node looks (a write-back close returns before its upload)
        # A TTL longer than the run: the counts are of first lookups, not of lookups repeated
        # once an answer expired.
        d = dt.Daemon(ctx, store, ctx.path("mnt-D"), ctx.path("cache-D"),
                      {"metadata_cache_ttl_secs": "600"}, name="D (cold)")
        picked = random.Random(22).sample(range(ntree), nchunks)
        before, t0 = requests(d), time.time()
        found = [os.path.exists(vllm_path(d.mnt, i)) for i in picked]
        dt_hit, hit = time.time() - t0, requests(d) - before
        assert all(found), "D misses %d existing chunks" % found.count(False)
        before, t0 = requests(d), time.time()
        missing = [os.path.exists(vllm_path(d.mnt, i)) for i in range(ntree, ntree + nchunks)]
        dt_miss, miss = time.time() - t0, requests(d) - before
        assert not any(missing), "D finds chunks never written"
        print("  lookups from a cold node: %d existing chunks, %d store requests (%.2f each, "
              "%.0f/s); %d missing, %d requests (%.2f each, %.0f/s)" % (
                  nchunks, hit, hit / nchunks, nchunks / dt_hit, nchunks, miss, miss / nchunks,
                  nchunks / dt_miss), flush=True)
        # The root and model directories are looked up once for all chunks.
        assert hit <= nchunks + 2, "%d store requests for %d chunk lookups" % (hit, nchunks)
        assert miss <= nchunks + 2, "%d store requests for %d missed lookups" % (miss, nchunks)
        d.unmount()
    checks.run("lookups of chunks in never-seen four-level directories cost at most one store "
               "request each", deep_lookups)

    def missing_dir_and_empty_dir():
        os.mkdir(os.path.join(a.mnt, "empty"))
        e = dt.Daemon(ctx, store, ctx.path("mnt-E"), ctx.path("cache-E"), opts, name="E (cold)")
        assert os.path.isdir(os.path.join(e.mnt, "empty")), "a mkdir'd empty directory vanished"
        assert os.listdir(os.path.join(e.mnt, "empty")) == []
        for p in ("nodir", "kv/nodir", "kv/org_model_0123456789ab_r0/fff/zz_g0"):
            try:
                os.stat(os.path.join(e.mnt, p))
                raise AssertionError("a missing directory exists: " + p)
            except OSError as err:
                assert err.errno == errno.ENOENT, err
        e.unmount()
    checks.run("cold node: a missing directory is ENOENT, a mkdir'd empty one exists",
               missing_dir_and_empty_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--backend", choices=["dir", "s3"], default="s3")
    ap.add_argument("--chunks", type=int, default=200)
    ap.add_argument("--tree", type=int, default=0)
    args = ap.parse_args()
    return run_checks("shared_tier_test", args,
                      lambda ctx, checks: run(ctx, checks, args.chunks, max(args.tree, args.chunks)),
                      "kvfs-shared-")


if __name__ == "__main__":
    sys.exit(main())
