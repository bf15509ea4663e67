#!/usr/bin/env python3
"""The mount's sharp edges (issue 21), each through the real daemon binary: the AWS SDKs'
AWS_ENDPOINT_URL convention, a SOURCE that smuggles libfuse options, relative paths, running out
of file descriptors, a credential_process that never answers, the stale-upload collection.

    mount_edges_test.py --kvfs PATH/kvfs --backend dir|s3 [--only CASE[,CASE...]]

Uses the harness of daemon_test.py (stores, Daemon, run_fail, exit 77 when FUSE or S3 is missing).
"""
import os
import subprocess
import sys

import daemon_test
from daemon_test import STEP_TIMEOUT, Daemon, chunk, mounted, ok, sha, write_chunk

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


CASES = [("env_endpoint", case_env_endpoint), ("source_comma", case_source_comma)]

if __name__ == "__main__":
    daemon_test.CASES = CASES  # the same runner: temp dir per case, cleanup, exit 77 rules
    sys.exit(daemon_test.main())
