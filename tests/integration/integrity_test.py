#!/usr/bin/env python3
"""End-to-end integrity through real daemonized mounts (`verify: auto`): kvfs over
tests/objstore/fault_server.py, which can invert one byte of a GET body (action flip_byte).

- A chunk written through the mount is stored with its CRC32C and the CRC32C of each 1 MiB slice
  as object metadata (x-amz-meta-kvfs-crc32c, x-amz-meta-kvfs-crc32c-slices).
- On a second node (fresh cache), a read while the server flips a byte of the body fails with
  EIO - no byte of the damaged slice is returned (the slices before it may be: each is served
  once it matched) - and counts in kvfs_download_verify_failures; nothing is cached.
- Once the wire is clean again, the same read returns the chunk's bytes, verified slice by slice
  (kvfs_downloads_verified_by_slice).
- With `verify: off`, the flipped byte is what the reader gets (what "off" means).
- With a cache smaller than the chunk (reads stream from the store), the read that would complete
  the chunk fails with EIO; once the wire is clean, the streamed read is verified.

    integrity_test.py --kvfs PATH/kvfs --fault-server PATH/fault_server.py

Exit 77 = skipped (no FUSE), unless KVFS_REQUIRE_FUSE=1.
"""
import argparse
import errno
import json
import os
import shutil
import sys
import tempfile
import urllib.request

import daemon_test
from daemon_test import Ctx, Daemon, chunk, ok, write_chunk
from mount_util import read_direct
from outage_test import FaultStore

FLIP_AT = 3 * daemon_test.MIB + 12345  # in the middle of the chunk, not in its first part


def head(store, key):
    req = urllib.request.Request("%s/%s/kv/%s" % (store.endpoint, store.bucket, key), method="HEAD")
    with urllib.request.urlopen(req, timeout=30) as r:
        return {k.lower(): v for k, v in r.headers.items()}


def read_fails_with_eio(path):
    try:
        read_direct(path)
    except OSError as e:
        assert e.errno == errno.EIO, "read of %s: %s (expected EIO)" % (path, e)
        return
    # read_direct loops over short reads: a read that got the slices before the flipped byte
    # and then EIO raises too. Bytes returned means the damaged slice was served.
    raise AssertionError("read of %s returned bytes despite a flipped byte on the wire" % path)


def run(ctx, script):
    store = FaultStore(script, ctx.work)
    try:
        a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
        data = chunk("integrity", 6 * daemon_test.MIB + 7)  # one PUT (below a multipart part)
        write_chunk(a.mnt, "c.pt", data)
        a.sync()  # the close returned before its upload (write_back)
        meta = head(store, "c.pt").get("x-amz-meta-kvfs-crc32c", "")
        assert len(meta) == 8 and all(c in "0123456789abcdef" for c in meta), \
            "no checksum metadata on the uploaded chunk: %r" % meta
        ok("uploaded chunk carries x-amz-meta-kvfs-crc32c: %s" % meta)
        slices = head(store, "c.pt").get("x-amz-meta-kvfs-crc32c-slices", "")
        assert slices.startswith("1048576:") and len(slices) == len("1048576:") + 7 * 8, \
            "no slice checksums on the uploaded chunk (7 slices of 1 MiB): %r" % slices
        ok("and x-amz-meta-kvfs-crc32c-slices: 7 slices of 1 MiB")

        b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
        flip = [{"method": "GET", "key": "c.pt", "action": "flip_byte", "at": FLIP_AT,
                 "count": -1}]
        store.control("/__fault/rules", json.dumps(flip).encode())
        path_b = os.path.join(b.mnt, "c.pt")
        read_fails_with_eio(path_b)
        s = b.settled()  # the failure is counted just after the reader is told
        assert s["kvfs_download_verify_failures"] >= 1, "no verify failure counted: %s" % s
        assert s["kvfs_cache_entries"] == 0, "a corrupt download was cached: %s" % s
        ok("byte flipped on the wire: EIO, %d verify failure(s), nothing cached" %
           s["kvfs_download_verify_failures"])

        store.recover()
        assert read_direct(path_b) == data, "read after the wire is clean again"
        s = b.settled()
        assert s["kvfs_downloads_verified_by_slice"] == 1, "not verified by slice: %s" % s
        ok("wire clean again: the read returns the chunk's bytes, verified slice by slice")

        c = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), {"verify": "off"},
                   name="c")
        store.control("/__fault/rules", json.dumps(flip).encode())
        got = read_direct(os.path.join(c.mnt, "c.pt"))
        assert got != data and got[FLIP_AT] == data[FLIP_AT] ^ 0xFF, "verify: off"
        assert c.stats()["kvfs_downloads_unverified"] >= 1
        ok("verify: off serves what the wire carried, counted as unverified")

        # A cache smaller than the chunk: reads stream from the store, and the read that
        # completes the chunk fails instead of being held back.
        d = Daemon(ctx, store, ctx.path("mnt-d"), ctx.path("cache-d"), {"cache_size": "4MiB"},
                   name="d (cache smaller than the chunk)")
        path_d = os.path.join(d.mnt, "c.pt")
        read_fails_with_eio(path_d)
        s = d.stats()
        assert s["kvfs_read_streamed_opens"] >= 1, "not streamed: %s" % s
        assert s["kvfs_download_verify_failures"] >= 1, "no verify failure counted: %s" % s
        ok("streamed read with a flipped byte: EIO before the chunk completes")
        store.recover()
        assert read_direct(path_d) == data, "streamed read after the wire is clean again"
        s = d.stats()  # an unverified whole read is counted before its last read returns
        assert s["kvfs_downloads_unverified"] == 0, "streamed read not verified: %s" % s
        ok("wire clean again: the streamed read returns the chunk's bytes, verified")
        for n in (a, b, c, d):
            n.unmount()
    finally:
        ctx.cleanup()
        store.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--fault-server", required=True)
    args = ap.parse_args()
    daemon_test.require(s3=False)
    work = tempfile.mkdtemp(prefix="kvfs-integrity-")
    ctx = Ctx(os.path.abspath(args.kvfs), "s3", work)
    try:
        run(ctx, os.path.abspath(args.fault_server))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("integrity_test: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
