#!/usr/bin/env python3
"""Real-mount integration test: mounts kvfs (kvfs_test_mount) over the directory store or an S3
bucket, runs lmcache_disk_replay.py through the mount, checks the objects in the store, the
bad-input errors, and a second mount ("another node") of the same store.

    run_mount_test.py --binary PATH/kvfs_test_mount --backend dir|s3

Exit 77 = skipped (no FUSE, or no S3 endpoint), unless KVFS_REQUIRE_FUSE=1 / KVFS_REQUIRE_S3=1.
"""
import argparse
import errno
import hashlib
import json
import mmap
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from mount_util import expect_errno, read_direct, skip_or_fail

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20
CHUNK = 2 * MIB
BIG = 12 * MIB
PREFIX = "kv/"
TTL = 2  # metadata TTL of both mounts, seconds


class Mount:
    def __init__(self, binary, store_args, mnt, spool, extra=()):
        self.mnt = mnt
        os.makedirs(mnt, exist_ok=True)
        # Each mount ("node") has its own chunk cache next to its spool (same filesystem, so
        # written chunks are adopted into the cache).
        cache = spool + "-cache"
        # unlink_policy remote: the checks of the bucket after lmcache_disk_replay's eviction and of
        # node B after it expect the delete to reach the store.
        cmd = [binary] + store_args + ["--prefix", PREFIX, "--spool", spool, "--cache-dir",
                                       cache, "--unlink-policy", "remote"] + list(extra) + [mnt]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        deadline = time.time() + 30
        while not os.path.ismount(mnt):
            if self.proc.poll() is not None or time.time() > deadline:
                out = self.proc.stdout.read() if self.proc.poll() is not None else ""
                raise AssertionError("mount at %s failed: %s" % (mnt, out))
            time.sleep(0.05)

    def stop(self, how="sigterm"):
        if self.proc.poll() is None:
            if how == "sigterm":
                self.proc.send_signal(signal.SIGTERM)
            else:
                subprocess.run(["fusermount3", "-u", self.mnt], check=True)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            subprocess.run(["fusermount3", "-uz", self.mnt])
            raise AssertionError("mount process did not exit after %s" % how)
        if rc != 0:
            # A daemon that died leaves a dead FUSE mount (ENOTCONN, which ismount() cannot see):
            # detach it so the machine is left clean, then report.
            subprocess.run(["fusermount3", "-uz", self.mnt], stderr=subprocess.DEVNULL)
        assert not os.path.ismount(self.mnt), "still mounted: " + self.mnt
        assert rc == 0, "mount process exit code %d" % rc


def dump(binary, store_args):
    out = subprocess.run([binary, "--dump"] + store_args + ["--prefix", PREFIX], check=True,
                         capture_output=True, text=True).stdout
    objs = {}
    for line in out.splitlines():
        key, size, digest = line.rsplit(" ", 2)
        objs[key] = (int(size), digest)
    return objs


def stats(mnt):
    text = os.getxattr(mnt, "user.kvfs.stats").decode()
    assert text.strip(), "empty user.kvfs.stats"
    return {k: int(v) for k, v in (line.split() for line in text.splitlines() if line.strip())}


def settled(mnt):
    """Stats once no download is in flight: a reader gets a chunk's last bytes just before its
    download commits to the cache, so an open right after may still join it (not a hit)."""
    deadline = time.time() + 60
    while True:
        s = stats(mnt)
        if s["kvfs_downloads_in_flight"] == 0:
            return s
        assert time.time() < deadline, "downloads still in flight: %s" % s
        time.sleep(0.05)


def cache_hits(mnt, name, digest, size):
    """A chunk read twice (bypassing the page cache) gives the same bytes; the second read is a
    cache hit, which the daemon answers by splicing from the cache file."""
    path = os.path.join(mnt, name)
    s0 = stats(mnt)
    first = read_direct(path, size)
    s1 = settled(mnt)
    second = read_direct(path, size)
    s2 = stats(mnt)
    assert hashlib.sha256(first).hexdigest() == digest, "first read differs: " + name
    assert second == first, "second (cached) read differs: " + name
    assert s1["kvfs_read_misses"] > s0["kvfs_read_misses"], "first read was not a miss: %s" % s1
    assert s2["kvfs_read_hits"] > s1["kvfs_read_hits"], "second read was not a hit: %s" % s2
    # Served from the cache file: by the daemon, or by the kernel itself (passthrough).
    assert s2["kvfs_read_bytes_from_cache"] - s1["kvfs_read_bytes_from_cache"] >= size or \
        s2["kvfs_read_passthrough_opens"] > s1["kvfs_read_passthrough_opens"], \
        "hit not from cache: %s" % s2
    print("ok: %s read twice, identical; second read a cache hit" % name)


def page_cache_bypass(mnt, name, digest):
    """Chunks served from the local cache are read around the kernel's page cache (page_cache is
    false by default): buffered reads still give the object's bytes, a private mapping works, and
    a shared one fails with ENODEV instead of mapping pages the kernel would not keep coherent."""
    path = os.path.join(mnt, name)
    for _ in range(2):  # a miss on this node, then a hit
        with open(path, "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == digest, "buffered read differs: " + name
    with open(path, "rb") as f:
        with mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ) as m:
            assert hashlib.sha256(m[:]).hexdigest() == digest, "private mapping differs: " + name

        def shared():
            with mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ) as m:
                assert hashlib.sha256(m[:]).hexdigest() == digest, "shared mapping differs"
        if stats(mnt)["kvfs_read_passthrough_opens"] > 0:
            shared()  # a hit the kernel reads from the cache file maps it too
            how = "works (passthrough)"
        else:
            expect_errno(shared, errno.ENODEV, "shared mmap of a cached chunk")
            how = "is ENODEV"
    print("ok: %s read around the page cache; private mmap works, shared mmap %s" % (name, how))


def xattrs(mnt):
    assert "user.kvfs.stats" in os.listxattr(mnt), "root does not list user.kvfs.stats"
    expect_errno(lambda: os.getxattr(mnt, "user.other"), errno.ENODATA, "root getxattr(other)")
    expect_errno(lambda: os.setxattr(mnt, "user.kvfs.stats", b"v"), errno.EOPNOTSUPP,
                 "root setxattr()")
    some = next(e.name for e in os.scandir(mnt) if e.is_file())
    # Files have no attributes: "no such attribute" (ENODATA), an empty list.
    expect_errno(lambda: os.getxattr(os.path.join(mnt, some), "user.kvfs.stats"),
                 errno.ENODATA, "file getxattr()")
    assert os.listxattr(os.path.join(mnt, some)) == [], "file listxattr() not empty"


def bad_inputs(mnt):
    # A partial chunk (the mount only accepts CHUNK and BIG sizes): close() fails, nothing stays.
    def partial():
        with open(os.path.join(mnt, "partial.pt"), "wb") as f:
            f.write(b"x" * MIB)
    expect_errno(partial, errno.EINVAL, "partial chunk close()")
    assert not os.path.exists(os.path.join(mnt, "partial.pt")), "partial chunk visible"

    # A write past max_chunk_bytes: EFBIG.
    def too_big():
        fd = os.open(os.path.join(mnt, "huge.pt"), os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.pwrite(fd, b"x", 32 * MIB)
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
    expect_errno(too_big, errno.EFBIG, "write past max_chunk_bytes")
    # Nothing of the refused write: the file is what was written, empty (an empty file is a file).
    assert os.path.getsize(os.path.join(mnt, "huge.pt")) == 0, "bytes of a refused write visible"
    # An empty file is published at its last release, which the kernel sends after close()
    # returns: a stat right after must still find it (a lookup between the file leaving the
    # daemon's local files and the object being recorded answered ENOENT, ~1 in 100 here).
    for i in range(300):
        p = os.path.join(mnt, "empty-%d.pt" % i)
        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
        assert os.path.getsize(p) == 0, "empty file %d" % i
    for i in range(300):
        os.unlink(os.path.join(mnt, "empty-%d.pt" % i))

    # Names: over 255 bytes.
    expect_errno(lambda: open(os.path.join(mnt, "n" * 256), "wb"), errno.ENAMETOOLONG,
                 "256-byte name")
    # Unsupported operations: documented errnos.
    some = next(e.name for e in os.scandir(mnt) if e.is_file() and e.stat().st_size > 0)
    # link() of an uploaded file: on this node the same inode under two names (st_nlink 2 while
    # both exist: LMCache's device-alias checks compare (st_dev, st_ino)), in the store a second
    # object with its bytes; never over an existing name; a linked chunk is not rewritten.
    src, hard = os.path.join(mnt, some), os.path.join(mnt, "hard")
    os.link(src, hard)
    with open(src, "rb") as a, open(hard, "rb") as b:
        assert a.read() == b.read(), "link() copy differs"
    sa, sb = os.stat(src), os.stat(hard)
    assert (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino), "link(): another inode"
    assert sa.st_nlink == 2 and sb.st_nlink == 2, "link(): st_nlink %d/%d" % (sa.st_nlink,
                                                                             sb.st_nlink)
    assert os.path.samefile(src, hard)
    expect_errno(lambda: os.link(src, hard), errno.EEXIST, "link() over an existing name")
    expect_errno(lambda: open(hard, "r+b"), errno.EPERM, "open for writing of a linked chunk")
    os.unlink(hard)
    assert os.stat(src).st_nlink == 1, "st_nlink after unlink of the link: %d" % (
        os.stat(src).st_nlink)
    assert not os.path.exists(hard)
    expect_errno(lambda: os.symlink("x", os.path.join(mnt, "sym")), errno.EPERM, "symlink()")
    # A stored chunk's user attributes are those it was stored with; other names are not kept.
    expect_errno(lambda: os.setxattr(os.path.join(mnt, some), "user.k", b"v"), errno.EPERM,
                 "setxattr() of a stored chunk")
    expect_errno(lambda: os.setxattr(os.path.join(mnt, some), "trusted.k", b"v"),
                 errno.EOPNOTSUPP, "setxattr() of a trusted.* name")
    expect_errno(lambda: os.chmod(os.path.join(mnt, some), 0o600), errno.EPERM, "chmod()")


WRITER = r"""
import os, sys, time
path, size, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
os.write(fd, os.urandom(size))
if how == "exit":
    os._exit(0)  # exits with the file still open: the kernel closes it
print("written", flush=True)
time.sleep(60)
"""


def killed_writers(a, b, binary, store):
    """A writer that dies before close() publishes nothing, even when what it wrote has a whole
    chunk's size: not on its node, not on another node, not in the store. The next full write of
    the name succeeds."""
    cases = [("killed-whole.pt", CHUNK, "kill"),   # a whole chunk's size, never closed
             ("killed-mid.pt", BIG - MIB, "kill"),  # parts already sent while written
             ("exited-open.pt", CHUNK, "exit")]     # _exit() with the descriptor still open
    for name, size, how in cases:
        path = os.path.join(a.mnt, name)
        p = subprocess.Popen([sys.executable, "-c", WRITER, path, str(size), how],
                             stdout=subprocess.PIPE, text=True)
        if how == "kill":
            assert p.stdout.readline().strip() == "written", "writer did not write " + name
            p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stdout.close()
        for mnt in (a.mnt, b.mnt):
            assert not os.path.exists(os.path.join(mnt, name)), \
                "a dead writer's %s is visible on %s" % (name, mnt)
        assert PREFIX + name not in dump(binary, store), "a dead writer's %s was stored" % name
        data = os.urandom(CHUNK)
        with open(path, "wb") as f:
            f.write(data)
        with open(path, "rb") as f:
            assert f.read() == data, "rewrite of %s differs" % name
        print("ok: writer of %s (%s) published nothing; the next write succeeded" % (name, how))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--backend", choices=["dir", "s3"], required=True)
    args = ap.parse_args()

    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        skip_or_fail("no /dev/fuse or fusermount3", "KVFS_REQUIRE_FUSE")
    work = tempfile.mkdtemp(prefix="kvfs-it-")
    bucket = None
    if args.backend == "s3":
        if not os.environ.get("KVFS_TEST_S3_ENDPOINT"):
            skip_or_fail("KVFS_TEST_S3_ENDPOINT not set", "KVFS_REQUIRE_S3")
        bucket = "kvfs-it-%d-%s" % (os.getpid(), uuid.uuid4().hex[:8])
        subprocess.run([args.binary, "--create-bucket", "--s3-bucket", bucket], check=True)
        store = ["--s3-bucket", bucket]
    else:
        store = ["--dir", os.path.join(work, "store")]
    sizes = ["--chunk-size", str(CHUNK), "--chunk-size", str(BIG), "--max-chunk", str(32 * MIB),
             "--multipart-threshold", str(8 * MIB), "--part-size", str(5 * MIB),
             "--ttl", str(TTL)]
    mounts = []
    try:
        a = Mount(args.binary, store, os.path.join(work, "mnt-a"), os.path.join(work, "spool-a"),
                  sizes)
        mounts.append(a)
        manifest = os.path.join(work, "manifest.json")
        subprocess.run([sys.executable, os.path.join(HERE, "lmcache_disk_replay.py"), a.mnt,
                        "--chunk-bytes", str(CHUNK), "--big-chunk-bytes", str(BIG),
                        "--manifest", manifest], check=True, timeout=240)
        with open(manifest) as f:
            m = json.load(f)

        # The bucket holds exactly the chunks, byte for byte, under their own names.
        objs = dump(args.binary, store)
        want = {PREFIX + n: d for n, d in m["files"].items()}
        assert set(objs) == set(want), "objects differ: extra %s missing %s" % (
            sorted(set(objs) - set(want))[:3], sorted(set(want) - set(objs))[:3])
        for k, d in want.items():
            assert objs[k][1] == d, "object bytes differ: " + k
        print("ok: %d objects in the store match" % len(objs))

        bad_inputs(a.mnt)
        xattrs(a.mnt)
        # Only the file whose write was refused (EFBIG), as it was written: empty.
        left = dump(args.binary, store)
        assert set(left) == set(want) | {PREFIX + "huge.pt"}, "bad input left objects behind"
        assert left[PREFIX + "huge.pt"][1] == hashlib.sha256(b"").hexdigest(), "huge.pt not empty"
        os.unlink(os.path.join(a.mnt, "huge.pt"))
        print("ok: bad inputs left nothing behind")

        # A second node: its own spool, same store. It reads A's chunks; A sees B's chunk.
        b = Mount(args.binary, store, os.path.join(work, "mnt-b"), os.path.join(work, "spool-b"),
                  sizes)
        mounts.append(b)
        n0 = sorted(m["files"])[0]
        cache_hits(b.mnt, n0, m["files"][n0], os.path.getsize(os.path.join(b.mnt, n0)))
        for n, d in m["files"].items():
            with open(os.path.join(b.mnt, n), "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == d, "node B read differs: " + n
        n1 = sorted(m["files"])[1]
        page_cache_bypass(b.mnt, n1, m["files"][n1])
        killed_writers(a, b, args.binary, store)
        for n in m["removed"]:
            assert not os.path.exists(os.path.join(b.mnt, n))
        data = os.urandom(CHUNK)
        with open(os.path.join(b.mnt, "from-node-b.pt"), "wb") as f:
            f.write(data)
        # A answered its many missed lookups from a directory listing: a chunk another node
        # uploads shows within the metadata TTL (as for cached negative lookups), not at once.
        time.sleep(TTL + 0.5)
        with open(os.path.join(a.mnt, "from-node-b.pt"), "rb") as f:
            assert f.read() == data, "node A read of node B's chunk differs"
        print("ok: two mounts exchange chunks")

        b.stop("fusermount")
        a.stop("sigterm")
        mounts.clear()
        for spool in ("spool-a", "spool-b"):
            left = os.listdir(os.path.join(work, spool))
            assert not left, "spool files left: %s" % left[:3]
        print("ok: clean unmount (SIGTERM and fusermount3 -u), spools empty")
        print("integration (%s): PASSED" % args.backend)
        return 0
    finally:
        for mt in mounts:
            try:
                mt.stop("fusermount")
            except Exception as e:  # noqa: BLE001 - best-effort cleanup
                print("cleanup: %s" % e)
        if bucket:
            subprocess.run([args.binary, "--delete-bucket", "--s3-bucket", bucket])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, subprocess.CalledProcessError, OSError) as e:
        print("integration FAILED: %s" % (e,))
        sys.exit(1)
