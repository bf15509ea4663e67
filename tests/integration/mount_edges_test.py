#!/usr/bin/env python3
"""The mount's sharp edges, each through the real daemon binary: the AWS SDKs' AWS_ENDPOINT_URL
convention, a SOURCE that smuggles libfuse options, relative paths, running out of file descriptors,
a credential_process that never answers, the stale-upload collection.

    mount_edges_test.py --kvfs PATH/kvfs --backend dir|s3 [--only CASE[,CASE...]]

Uses the harness of daemon_test.py (stores, Daemon, run_fail, exit 77 when FUSE or S3 is missing).
"""
import errno
import mmap
import os
import shutil
import subprocess
import sys
import time

import daemon_test
from daemon_test import STEP_TIMEOUT, Daemon, chunk, mounted, ok, read_direct, sha, write_chunk

MIB = daemon_test.MIB


class Source:
    """A store seen through other mount options: same objects, another `source`/`opts`/`env`."""

    def __init__(self, store, source=None, opts=None, env=None):
        self.source = store.source if source is None else source
        self.opts = dict(store.opts) if opts is None else opts
        self.env = dict(store.env, **(env or {}))


def proc_mount_options(mnt):
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[1] == mnt:
                return fields[0], fields[3].split(",")
    raise AssertionError("not mounted: " + mnt)


# ---- cases --------------------------------------------------------------------------------------


def case_env_endpoint(ctx):
    """AWS_ENDPOINT_URL=http://host:port and no endpoint setting: path style, as RGW and MinIO
    need (section 12); --dump-config names the endpoint, not AWS's regional one."""
    if ctx.backend != "s3":
        ok("S3 only")
        return
    store = ctx.store()
    opts = {k: v for k, v in store.opts.items() if k not in ("endpoint", "addressing")}
    env = {"AWS_ENDPOINT_URL": store.endpoint}
    mnt = ctx.path("mnt")
    r = subprocess.run([ctx.kvfs, "--dump-config", store.source, mnt], capture_output=True,
                       text=True, timeout=STEP_TIMEOUT, env=dict(os.environ, **store.env, **env))
    assert r.returncode == 0, "--dump-config: %s" % r.stderr
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("# store:")]
    assert line and store.endpoint + " (from AWS_ENDPOINT_URL)" in line[0] and \
        "path-style" in line[0], "--dump-config: %s" % line
    ok(line[0])
    data = chunk("env-endpoint", 2 * MIB)
    a = Daemon(ctx, Source(store, opts=opts, env=env), mnt, ctx.path("cache"))
    write_chunk(mnt, "c.pt", data)
    a.unmount()
    daemon_test.check_store(store, {"c.pt": sha(data)})


def case_source_comma(ctx):
    """A SOURCE ending in ",allow_other" is one fsname, not an option (section 8): the mount has
    no allow_other, /proc/mounts shows the whole source, and the store is the one it names."""
    store = ctx.store()
    if ctx.backend == "dir":
        source = store.source + ",allow_other"
        odd = daemon_test.DirStore(store.root + ",allow_other")
        ctx.stores.append(odd)
    else:
        source = store.source + ",allow_other"  # the prefix "kv,allow_other"
        odd = store
    mnt = ctx.path("mnt")
    data = chunk("comma", MIB)
    a = Daemon(ctx, Source(store, source=source), mnt, ctx.path("cache"))
    fsname, options = proc_mount_options(mnt)
    assert "allow_other" not in options, "allow_other from SOURCE: %s" % options
    assert fsname == source, "fsname %r, expected %r" % (fsname, source)
    ok("no allow_other; fsname %s" % fsname)
    write_chunk(mnt, "c.pt", data)
    a.unmount()
    objs = odd.objects()
    name = "c.pt" if ctx.backend == "dir" else "kv,allow_other/c.pt"
    assert objs.get(name, (0, ""))[1] == sha(data), "objects: %s" % sorted(objs)
    ok("the chunk is under the source's own name: %s" % name)


def nofile_limit(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3]), int(line.split()[4])
    raise AssertionError("no open-file limit for %d" % pid)


class Limited:
    """Daemons started inside run with RLIMIT_NOFILE (soft, hard): ctx.kvfs becomes a wrapper
    named kvfs that execs the real one under prlimit (this process could not raise its own hard
    limit back without CAP_SYS_RESOURCE)."""

    def __init__(self, ctx, soft, hard):
        self.ctx, self.want = ctx, (soft, hard)

    def __enter__(self):
        self.real = self.ctx.kvfs
        d = self.ctx.path("limited-%d-%d" % self.want)
        os.makedirs(d, exist_ok=True)
        wrapper = os.path.join(d, "kvfs")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec prlimit --nofile=%d:%d %s "$@"\n' % (self.want + (self.real,)))
        os.chmod(wrapper, 0o755)
        self.ctx.kvfs = wrapper

    def __exit__(self, *exc):
        self.ctx.kvfs = self.real


def cache_entry_files(cache):
    return sorted(n for n in os.listdir(os.path.join(cache, "data")) if not n.endswith(".fill"))


def case_emfile(ctx):
    """Out of descriptors (section 6): 400 reading handles against a daemon limited to 256. The
    daemon keeps a reserve of descriptors (base/fd_reserve.h): a cache entry it cannot open within
    it is a miss served from the store, never a dropped entry, and a request it cannot serve at
    all fails with EMFILE - the daemon never dies (it did: ENOTCONN; UBSan's vptr check aborts when
    its pipe() probe fails). Every chunk is a hit once descriptors are back. The daemon raises its
    soft limit to the hard one."""
    store = ctx.store()
    mnt, cache = ctx.path("mnt"), ctx.path("cache")
    with Limited(ctx, 1024, 8192):
        a = Daemon(ctx, store, mnt, cache, name="soft 1024, hard 8192")
    assert nofile_limit(a.pid) == (8192, 8192), "limits %s" % (nofile_limit(a.pid),)
    ok("the daemon raised its soft open-file limit to the hard one (8192)")
    a.unmount()

    with Limited(ctx, 256, 256):
        a = Daemon(ctx, store, mnt, cache, name="256 descriptors")
    data = {"c%02d.pt" % i: chunk("emfile-%d" % i, 64 * 1024) for i in range(20)}
    for n, d in data.items():
        write_chunk(mnt, n, d)
    for n, d in data.items():
        assert read_direct(os.path.join(mnt, n)) == d, "bytes of " + n
    before = a.settled()
    files = cache_entry_files(cache)
    assert before["kvfs_cache_entries"] == 20 and len(files) == 20, "%s %s" % (before, files)
    held, errors, served = [], {}, 0
    buf = mmap.mmap(-1, 4096)
    for _ in range(20):  # 400 reading handles of cached chunks against 256 descriptors
        for n, d in data.items():
            try:
                fd = os.open(os.path.join(mnt, n), os.O_RDONLY | os.O_DIRECT)
                held.append(fd)
                # An open transfers nothing (LazyReadHandle): the first read opens the entry.
                got = os.preadv(fd, [buf], 0)
                assert buf[:got] == d[:4096], "bytes of %s while short of descriptors" % n
                served += 1
            except OSError as e:
                assert e.errno in (errno.EMFILE, errno.ENFILE), "%s: %s" % (n, e)
                errors[e.errno] = errors.get(e.errno, 0) + 1
    for fd in held:
        os.close(fd)
    assert mounted(mnt), "the daemon died"
    ok("%d of 400 reads served, the rest EMFILE/ENFILE (%s); the daemon lives" % (served, errors))
    after = a.settled()
    assert after["kvfs_cache_open_failures"] > 0, \
        "no cache entry failed to open: the test proves nothing: %s" % after
    assert after["kvfs_cache_entries"] == 20, "cache entries %d -> %d" % (
        before["kvfs_cache_entries"], after["kvfs_cache_entries"])
    assert cache_entry_files(cache) == files, "entry files changed: %s" % cache_entry_files(cache)
    ok("%d cache opens refused within the reserve; all 20 entries and their files kept" %
       after["kvfs_cache_open_failures"])
    for n, d in data.items():
        assert read_direct(os.path.join(mnt, n)) == d, "bytes of " + n
    hits = a.settled()["kvfs_read_hits"] - after["kvfs_read_hits"]
    assert hits == 20, "%d of 20 reads were hits" % hits
    ok("every chunk is a hit afterwards")
    a.unmount()


def case_cache_symlink(ctx):
    """An entry file in the cache replaced by a symlink (section 14): never followed (opened
    relative to data/ with O_NOFOLLOW); the entry is dropped and the chunk read from the store."""
    store = ctx.store()
    mnt, cache = ctx.path("mnt"), ctx.path("cache")
    a = Daemon(ctx, store, mnt, cache)
    data = chunk("symlink", 256 * 1024)
    write_chunk(mnt, "c.pt", data)
    a.sync()  # the spool becomes the cache's entry once its upload is recorded
    assert read_direct(os.path.join(mnt, "c.pt")) == data
    files = cache_entry_files(cache)
    assert len(files) == 1, files
    entry = os.path.join(cache, "data", files[0])
    victim = ctx.path("victim")
    with open(entry, "rb") as f:
        size = len(f.read())
    with open(victim, "wb") as f:
        f.write(b"V" * size)
    os.unlink(entry)
    os.symlink(victim, entry)
    got = read_direct(os.path.join(mnt, "c.pt"))
    assert got == data, "read %s bytes through the planted symlink" % (
        "the victim's" if got[:1] == b"V" else "other")
    ok("the symlink was not followed; the chunk's own bytes were read")
    with open(victim, "rb") as f:
        assert f.read() == b"V" * size, "the victim was changed"
    a.unmount()


def case_relative_paths(ctx):
    """`cd DIR && kvfs SRC mnt -o cache_dir=cache` (section 5): mnt and cache are DIR/mnt and
    DIR/cache, though the daemon runs in "/" once it detaches."""
    store = ctx.store()
    os.makedirs(ctx.path("mnt"))
    o = dict(store.opts, cache_dir="cache")
    cmd = [ctx.kvfs, store.source, "mnt", "-o", ",".join("%s=%s" % kv for kv in o.items())]
    r = subprocess.run(cmd, cwd=ctx.work, env=dict(os.environ, **store.env), capture_output=True,
                       text=True, timeout=STEP_TIMEOUT)
    if r.returncode == 0 and not mounted(ctx.path("mnt")):
        subprocess.run(["fusermount3", "-u", "/mnt"], capture_output=True)  # where it went
        raise AssertionError("exit 0 but %s is not mounted (mounted elsewhere?)" % ctx.path("mnt"))
    assert r.returncode == 0, "mount failed (%d): %s" % (r.returncode, r.stderr)
    a = Attached(ctx, ctx.path("mnt"))
    assert os.path.isdir(ctx.path("cache/data")), "no cache at %s" % ctx.path("cache")
    ok("mounted at %s with its cache at %s" % (ctx.path("mnt"), ctx.path("cache")))
    data = chunk("relative", MIB)
    write_chunk(ctx.path("mnt"), "c.pt", data)
    a.sync()  # the spool becomes the cache's entry once its upload is recorded
    assert read_direct(os.path.join(ctx.path("mnt"), "c.pt")) == data
    assert len(cache_entry_files(ctx.path("cache"))) == 1, "the chunk is not in ./cache"
    a.unmount()
    daemon_test.check_store(store, {"c.pt": sha(data)})


class Attached(Daemon):
    """A mount the test started itself; unmounts like Daemon."""

    def __init__(self, ctx, mnt):
        pids = daemon_test.daemon_pids("mnt") or daemon_test.daemon_pids(mnt)
        assert len(pids) == 1, "daemon processes for %s: %s" % (mnt, pids)
        self.ctx, self.mnt, self.cache, self.pid = ctx, mnt, None, pids[0]
        ctx.daemons.append(self)


def case_hung_credential_process(ctx):
    """A profile's credential_process that never answers (section 7): the mount fails within
    credential_process_timeout_secs, naming the setting and the profile but not the command, and
    the command's processes are killed."""
    if ctx.backend != "s3":
        ok("S3 only")
        return
    store = ctx.store()
    config = ctx.path("aws-config")
    hung = ctx.path("hung.sh")  # never answers; "--hunter2" stands for a secret on its command line
    with open(hung, "w") as f:
        f.write("#!/bin/sh\nsleep 617\n")
    os.chmod(hung, 0o755)
    with open(config, "w") as f:
        f.write("[profile hung]\ncredential_process = %s --hunter2\n" % hung)
    env = {"AWS_CONFIG_FILE": config, "AWS_PROFILE": "hung", "AWS_ACCESS_KEY_ID": "",
           "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_EC2_METADATA_DISABLED": "1",
           "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials"}
    mnt = ctx.path("mnt")
    os.makedirs(mnt)
    o = dict(store.opts, cache_dir=ctx.path("cache"), credential_process_timeout_secs=2)
    cmd = [ctx.kvfs, store.source, mnt, "-o", ",".join("%s=%s" % kv for kv in o.items())]
    t0 = time.time()
    msg = daemon_test.run_fail(ctx, cmd, ["credential_process_timeout_secs", "profile hung"], mnt,
                               env=env)
    assert time.time() - t0 < 30, "took %.0f s" % (time.time() - t0)
    assert "hunter2" not in msg, "the command line is in the message: %s" % msg
    # The kill is asynchronous: a loaded machine (the fault campaign) may still show the process
    # for a moment after the mount failed. It must go, not linger for its 617 s.
    def left():
        return [p for p in os.listdir("/proc") if p.isdigit() and (
            b"sleep\x00617" in proc_cmdline(p) or hung.encode() in proc_cmdline(p))]
    deadline = time.time() + 10
    while left() and time.time() < deadline:
        time.sleep(0.05)
    assert not left(), "the credential_process survived: %s" % left()
    ok("failed in %.1f s; the command was killed" % (time.time() - t0))


def proc_cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def case_upload_gc_root(ctx):
    """Mounted at a bucket's root, kvfs aborts no multipart upload (section 10): they may be other
    applications'. Under a prefix, its own stale ones are aborted; at the root only when asked."""
    if ctx.backend != "s3":
        ok("S3 only (the directory store's uploads are its own)")
        return
    store = ctx.store()
    code, body = store._curl("POST", "/%s/backups/db.tar" % store.bucket, "uploads=")
    assert code == 200, "CreateMultipartUpload: HTTP %s %s" % (code, body[:200])
    code, body = store._curl("POST", "/%s/kv/c.pt" % store.bucket, "uploads=")
    assert code == 200, "CreateMultipartUpload: HTTP %s %s" % (code, body[:200])
    assert store.unfinished_uploads() == ["backups/db.tar", "kv/c.pt"], store.unfinished_uploads()
    root = Source(store, source="s3://" + store.bucket)
    mnt = ctx.path("mnt")
    # stale_upload_age_secs=1: both uploads are "stale" after a second.
    time.sleep(1.5)
    a = Daemon(ctx, root, mnt, ctx.path("cache"), {"stale_upload_age_secs": 1}, name="root")
    time.sleep(2)  # the pass runs in the background after the mount
    a.unmount()
    assert store.unfinished_uploads() == ["backups/db.tar", "kv/c.pt"], store.unfinished_uploads()
    ok("at the bucket's root: no upload aborted")
    a = Daemon(ctx, store, mnt, ctx.path("cache"), {"stale_upload_age_secs": 1}, name="prefix kv")
    wait_for(lambda: store.unfinished_uploads() == ["backups/db.tar"], "kv/c.pt aborted")
    a.unmount()
    ok("under the prefix kv/: its stale upload aborted, the other application's kept")
    a = Daemon(ctx, root, mnt, ctx.path("cache"),
               {"stale_upload_age_secs": 1, "stale_upload_gc_at_root": "true"}, name="asked")
    wait_for(lambda: store.unfinished_uploads() == [], "backups/db.tar aborted")
    a.unmount()
    ok("at the root with stale_upload_gc_at_root: aborted")


def wait_for(cond, what, secs=20):
    deadline = time.time() + secs
    while not cond():
        assert time.time() < deadline, "timed out waiting for: " + what
        time.sleep(0.2)


def case_du_control_chars(ctx):
    """`kvfs du` shows a name holding a terminal escape sequence escaped (section 14): names come
    from the store, which other writers fill."""
    store = ctx.store()
    mnt = ctx.path("mnt")
    a = Daemon(ctx, store, mnt, ctx.path("cache"))
    evil = "\x1b]0;owned\x07\x1b[2Jdir"
    os.makedirs(os.path.join(mnt, evil))
    write_chunk(os.path.join(mnt, evil), "c.pt", chunk("du", 4096))
    r = subprocess.run([ctx.kvfs, "du", mnt], capture_output=True, timeout=STEP_TIMEOUT)
    assert r.returncode == 0, "kvfs du: %s" % r.stderr
    assert b"\x1b" not in r.stdout and b"\x07" not in r.stdout, "raw control bytes: %r" % r.stdout
    assert b"\\x1b]0;owned\\x07\\x1b[2Jdir" in r.stdout, "escaped name missing: %r" % r.stdout
    ok("kvfs du printed the name escaped")
    a.unmount()


def case_metrics_idle_connections(ctx):
    """64 idle TCP connections to metrics_listen do not make /metrics unreachable (section 14)."""
    import socket
    store = ctx.store()
    port = daemon_test.free_port()
    a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"),
               {"metrics_listen": "127.0.0.1:%d" % port})
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(64)]
    try:
        t0 = time.time()
        code, text = daemon_test.scrape("http://127.0.0.1:%d/metrics" % port)
        assert code == 200 and "kvfs_" in text, "GET /metrics: %d %s" % (code, text[:200])
        ok("/metrics answered in %.2f s beside 64 idle connections" % (time.time() - t0))
    finally:
        for s in idle:
            s.close()
    a.unmount()


def case_empty_unlinked(ctx):
    """An empty file created, closed and unlinked at the defaults is gone at once and stays gone
    (its publication happens at the release the kernel sends after close() returned; an unlink
    right after must wait for it, not be undone by it - LMCache's test_nixl_put_refcount.py)."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"))
    d = os.path.join(a.mnt, "empties")
    os.mkdir(d)
    names = []
    for i in range(40):
        p = os.path.join(d, "e%02d.bin" % i)
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        os.unlink(p)
        names.append(p)
    seen = [p for p in names if os.path.exists(p)]
    assert not seen, "%d of 40 unlinked empty files still visible: %s" % (len(seen), seen[:3])
    time.sleep(2)
    seen = [p for p in names if os.path.exists(p)] + os.listdir(d)
    assert not seen, "unlinked empty files came back: %s" % seen[:3]
    ok("40 empty files created, closed and unlinked: none visible, then or 2 s later")
    a.unmount()


def case_many_groups(ctx):
    """A writer with 1,000 and 4,000 supplementary groups (users from a directory service) stores
    its chunks: /proc/PID/status lists the groups before the lines that tell a live writer from a
    dying one, and a 4 KiB read of it made every such close() return 0 with nothing stored."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"))
    want = {}
    for groups in (0, 1000, 4000):
        name = "groups-%d.pt" % groups
        data = chunk("groups-%d" % groups, 2 * MIB + groups)
        code = ("import os, sys\n"
                "os.setgroups(range(200000, 200000 + %d))\n"
                "assert len(os.getgroups()) == %d\n"
                "with open(sys.argv[1], 'wb') as f:\n"
                "    f.write(sys.stdin.buffer.read())\n" % (groups, groups))
        subprocess.run([sys.executable, "-c", code, os.path.join(a.mnt, name)], input=data,
                       check=True, timeout=STEP_TIMEOUT)
        want[name] = sha(data)
    a.unmount()
    objs = store.objects()
    missing = sorted(n for n in want if n not in objs)
    assert not missing, "chunks closed with 0 but not stored: %s" % missing
    for n, digest in want.items():
        assert objs[n][1] == digest, "object bytes differ: " + n
    ok("chunks of writers with 0, 1,000 and 4,000 groups are all in the store")


def run_fio(args, cwd):
    """fio's own job line; returns (exit code, its output)."""
    p = subprocess.run(["fio"] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=STEP_TIMEOUT * 4)
    return p.returncode, p.stdout.decode(errors="replace")


def case_fio_default(ctx):
    """fio's default write job, then its read job (issue 47 item 12): fio creates and closes its
    file before the job writes it (the layout), so the name holds an empty object when the job's
    close() uploads 64 MiB - which met EEXIST, unchecked by fio: err=0 and an empty t.0.0. The
    job must store what it wrote (the first whole chunk replaces an empty object) or fail."""
    assert shutil.which("fio"), "fio is not installed (packaging/install-deps.sh --test)"
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"))
    d = os.path.join(a.mnt, "fio")
    os.mkdir(d)
    job = ["--name=t", "--directory=" + d, "--bs=1M", "--size=64M"]
    code, out = run_fio(job + ["--rw=write"], d)
    size = os.stat(os.path.join(d, "t.0.0")).st_size
    if code != 0 or "err= 0" not in out:
        ok("fio's write job failed visibly (exit %d): %s" % (code, out.strip()[-300:]))
        a.unmount()
        return
    assert size == 64 * MIB, "fio's write job reported success but t.0.0 has %d bytes:\n%s" % (
        size, out)
    code, out = run_fio(job + ["--rw=read"], d)
    assert code == 0 and "err= 0" in out, "fio's read job failed (exit %d):\n%s" % (code, out)
    assert "io=64.0MiB" in out, "fio's read job did not read 64 MiB:\n%s" % out
    with open(os.path.join(d, "t.0.0"), "rb") as f:
        mounted_sha = sha(f.read())
    a.unmount()
    objs = store.objects()
    assert objs.get("fio/t.0.0", (0, ""))[0] == 64 * MIB, "object fio/t.0.0: %s" % (
        objs.get("fio/t.0.0"),)
    assert objs["fio/t.0.0"][1] == mounted_sha, "the mount read other bytes than the object's"
    ok("fio's default write job stored 64 MiB in t.0.0; its read job read them back")


def case_shell_overwrite(ctx):
    """`touch x; echo hello > x` (issue 47 item 12): stores "hello\n" or exits non-zero - the
    shell does not check close(), so an EEXIST there left x empty with exit status 0."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"))
    x = os.path.join(a.mnt, "x")
    p = subprocess.run(["sh", "-c", 'touch "$1"; echo hello > "$1"', "sh", x],
                       stderr=subprocess.PIPE, timeout=STEP_TIMEOUT)
    with open(x, "rb") as f:
        seen = f.read()
    a.unmount()
    got = store.objects().get("x")
    if p.returncode != 0:
        ok("touch x; echo hello > x exited %d: %s" % (p.returncode, p.stderr.decode().strip()))
        return
    assert got == (6, sha(b"hello\n")), "exit 0, but the object x is %s (mount read %r)" % (
        got, seen)
    assert seen == b"hello\n", "the mount reads %r" % seen
    ok('touch x; echo hello > x exited 0 and stored "hello\\n"')


RENAME_WRITER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
data = sys.stdin.buffer.read(int(sys.argv[2]))
half = len(data) // 2
os.write(fd, data[:half])
print("written", flush=True)
sys.stdin.readline()
os.write(fd, data[half:])
try:
    os.close(fd)
    print("close 0", flush=True)
except OSError as e:
    print("close errno %d" % e.errno, flush=True)
"""


def case_rename_over_writer(ctx):
    """A rename onto a name another local process is still writing (issue 47 item 10): the writer
    (A) has written half its chunk when B renames its temp file onto the name; A then finishes
    and closes. A's close() must not return 0 with nothing stored: A's chunk meets B's object
    under the conditional-create rules - other bytes: EEXIST; the same bytes: 0."""
    store = ctx.store()
    a = Daemon(ctx, store, ctx.path("mnt"), ctx.path("cache"))
    d = os.path.join(a.mnt, "r")
    os.mkdir(d)
    results = {}
    for label, a_data, b_data in (("other bytes", chunk("A", 2 * MIB), chunk("B", MIB)),
                                  ("same bytes", chunk("S", 2 * MIB), chunk("S", 2 * MIB))):
        name = "x-%s.bin" % label.replace(" ", "-")
        final = os.path.join(d, name)
        w = subprocess.Popen([sys.executable, "-c", RENAME_WRITER, final, str(len(a_data))],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        w.stdin.write(a_data)
        w.stdin.flush()
        assert w.stdout.readline().strip() == b"written", "writer A did not start"
        tmp = final + ".tmp"
        with open(tmp, "wb") as f:
            f.write(b_data)
        os.rename(tmp, final)
        w.stdin.write(b"go\n")
        w.stdin.flush()
        said = w.stdout.readline().decode().strip()
        w.wait(timeout=STEP_TIMEOUT)
        results[name] = (label, said, a_data, b_data)
    a.unmount()
    objs = store.objects()
    for name, (label, said, a_data, b_data) in results.items():
        got = objs.get("r/" + name)
        assert got == (len(b_data), sha(b_data)), "%s: the store holds %s, not B's renamed chunk" % (
            name, got)
        if a_data == b_data:
            assert said == "close 0", "%s (same bytes): A's close said %r" % (name, said)
        else:
            assert said == "close errno %d" % errno.EEXIST, (
                "%s (other bytes): A's close said %r, but its chunk is not stored" % (name, said))
        ok("rename over a writer (%s): A's close says %r, the store holds B's chunk" % (label, said))


CASES = [("env_endpoint", case_env_endpoint), ("source_comma", case_source_comma),
         ("cache_symlink", case_cache_symlink),
         ("relative_paths", case_relative_paths),
         ("hung_credential_process", case_hung_credential_process),
         ("upload_gc_root", case_upload_gc_root),
         ("du_control_chars", case_du_control_chars),
         ("metrics_idle_connections", case_metrics_idle_connections),
         ("empty_unlinked", case_empty_unlinked),
         ("many_groups", case_many_groups),
         ("fio_default", case_fio_default),
         ("shell_overwrite", case_shell_overwrite),
         ("rename_over_writer", case_rename_over_writer),
         ("emfile", case_emfile)]

if __name__ == "__main__":
    daemon_test.CASES = CASES  # the same runner: temp dir per case, cleanup, exit 77 rules
    sys.exit(daemon_test.main())
