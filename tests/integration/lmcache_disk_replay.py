#!/usr/bin/env python3
"""Replays an inference engine's KV-cache I/O (LMCache local_disk and MP fs adapter, see
shared notes engine-io.md) against a directory - normally a kvfs mount - and checks every byte.

    lmcache_disk_replay.py MOUNTPOINT [--chunk-bytes N] [--big-chunk-bytes N] [--chunks N]
                                [--threads N] [--manifest OUT.json]

Exits 0 when everything matched; prints what failed otherwise. The manifest (optional) lists the
files left in the directory with their SHA-256, and the removed names, so a caller can check the
objects in the bucket or read the chunks through a second mount.
"""
import argparse
import concurrent.futures
import errno
import hashlib
import json
import mmap
import os
import sys
import uuid

MODEL = "meta-llama-Llama-3.1-8B-Instruct-" + "long-model-path-component-" * 6


def chunk_bytes(seed, size):
    # Deterministic, distinct per chunk, cheap to produce: a repeated 64 KiB block.
    block = hashlib.sha256(seed.encode()).digest() * 2048
    reps = size // len(block) + 1
    return (block * reps)[:size]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def lmcache_name(h):
    return "%s@1@0@%016x@bfloat16.pt" % (MODEL, h)


def mp_name(h):
    return "%s@0x%08x@%x@%016x.data" % (MODEL.replace("/", "-SEP-"), 0, 0, h)


def aligned_buffer(size):
    # Anonymous mmap is page-aligned: what O_DIRECT needs.
    return mmap.mmap(-1, max(size, mmap.PAGESIZE))


def write_buffered(path, data):
    with open(path, "wb") as f:  # LMCache: open(path, "wb").write(whole_chunk)
        f.write(data)


def write_odirect(path, data):
    # LMCache use_odirect: O_CREAT|O_WRONLY|O_DIRECT (no O_TRUNC), one os.write.
    buf = aligned_buffer(len(data))
    buf[: len(data)] = data
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o644)
    try:
        n = os.write(fd, memoryview(buf)[: len(data)])
        assert n == len(data), "short O_DIRECT write %d of %d" % (n, len(data))
    finally:
        os.close(fd)
        buf.close()


def read_buffered(path, size):
    buf = bytearray(size)
    with open(path, "rb") as f:
        n = f.readinto(buf)
    assert n == size, "%s: buffered readinto returned %d of %d" % (path, n, size)
    return bytes(buf)


def read_odirect(path, size):
    buf = aligned_buffer(size)
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_DIRECT), "rb", buffering=0) as f:
            n = f.readinto(memoryview(buf)[:size])  # a single read syscall of the whole chunk
        assert n == size, "%s: O_DIRECT readinto returned %d of %d" % (path, n, size)
        return bytes(buf[:size])
    finally:
        buf.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mountpoint")
    ap.add_argument("--chunk-bytes", type=int, default=2 << 20)
    ap.add_argument("--big-chunk-bytes", type=int, default=0,
                    help="also write one chunk of this size (exercises multipart); 0: none")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--manifest")
    args = ap.parse_args()
    mnt = args.mountpoint
    run = uuid.uuid4().int & ((1 << 48) - 1)
    expected = {}  # name -> sha256 of the bytes it must hold

    # Startup: LMCache aligns O_DIRECT I/O to f_bsize.
    st = os.statvfs(mnt)
    assert st.f_bsize > 0 and args.chunk_bytes % st.f_bsize == 0, "f_bsize %d" % st.f_bsize
    assert st.f_namemax >= 255, "f_namemax %d" % st.f_namemax
    print("ok: statvfs f_bsize=%d f_namemax=%d" % (st.f_bsize, st.f_namemax))

    # Buffered whole-chunk writes from a small thread pool (the backend's writer threads).
    names = [lmcache_name(run * 1000 + i) for i in range(args.chunks)]
    assert len(names[0]) > 200, "names should be long like LMCache's"
    datas = {n: chunk_bytes(n, args.chunk_bytes) for n in names}
    with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
        list(pool.map(lambda n: write_buffered(os.path.join(mnt, n), datas[n]), names))
    for n in names:
        expected[n] = sha(datas[n])
    print("ok: %d buffered chunk writes" % len(names))

    # O_DIRECT writes without O_TRUNC: new names, and one name that already exists.
    od_names = [lmcache_name(run * 1000 + 500 + i) for i in range(2)]
    for n in od_names:
        datas[n] = chunk_bytes(n, args.chunk_bytes)
        write_odirect(os.path.join(mnt, n), datas[n])
        expected[n] = sha(datas[n])
    write_odirect(os.path.join(mnt, names[0]), datas[names[0]])
    print("ok: O_DIRECT writes (new names and an existing one)")

    # Whole-file reads, buffered and O_DIRECT, each checked byte for byte.
    for n in names + od_names:
        p = os.path.join(mnt, n)
        assert os.path.getsize(p) == args.chunk_bytes
        assert sha(read_buffered(p, args.chunk_bytes)) == expected[n], n
        assert sha(read_odirect(p, args.chunk_bytes)) == expected[n], n
    print("ok: buffered and O_DIRECT whole-chunk reads verified")

    # exists() on names that are not there (most lookups of a KV cache miss), twice.
    for _ in range(2):
        for i in range(200):
            assert not os.path.exists(os.path.join(mnt, lmcache_name(run * 1000 + 900 + i)))
    print("ok: 400 negative exists()")

    # MP-mode store: write <final>.tmp, then os.replace to the final name.
    mp = [mp_name(run * 1000 + i) for i in range(3)]
    for n in mp:
        datas[n] = chunk_bytes(n, args.chunk_bytes)
        tmp = os.path.join(mnt, n + ".tmp")
        write_buffered(tmp, datas[n])
        os.replace(tmp, os.path.join(mnt, n))
        assert not os.path.exists(tmp), tmp
        assert sha(read_buffered(os.path.join(mnt, n), args.chunk_bytes)) == sha(datas[n])
        expected[n] = sha(datas[n])
    print("ok: temp file + os.replace uploads")

    if args.big_chunk_bytes:
        n = lmcache_name(run * 1000 + 999)
        datas[n] = chunk_bytes(n, args.big_chunk_bytes)
        write_buffered(os.path.join(mnt, n), datas[n])
        expected[n] = sha(datas[n])
        assert sha(read_odirect(os.path.join(mnt, n), args.big_chunk_bytes)) == expected[n]
        print("ok: big chunk (%d bytes) written and read" % args.big_chunk_bytes)

    # Recovery scan: scandir shows exactly the chunks, no temp files.
    seen = {e.name: e.stat().st_size for e in os.scandir(mnt) if e.is_file()}
    for n in expected:
        assert n in seen, "scandir misses " + n
    assert not [n for n in seen if n.endswith(".tmp")], "temp files visible"
    print("ok: scandir lists %d entries" % len(seen))

    # Eviction: os.remove.
    victim = names[-1]
    os.remove(os.path.join(mnt, victim))
    assert not os.path.exists(os.path.join(mnt, victim))
    assert victim not in {e.name for e in os.scandir(mnt)}
    del expected[victim]
    try:
        open(os.path.join(mnt, victim), "rb")
        raise AssertionError("removed chunk still opens")
    except FileNotFoundError:
        pass
    print("ok: os.remove")

    if args.manifest:
        with open(args.manifest, "w") as f:
            json.dump({"files": expected, "removed": [victim]}, f)
    print("LMCache disk replay: all checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, OSError) as e:
        print("LMCache disk replay FAILED: %r" % (e,), file=sys.stderr)
        sys.exit(1)
