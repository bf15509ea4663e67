#!/usr/bin/env python3
"""Security tests through the real daemon binary: the cache directory against another local user
(planted symlinks, foreign owner, writable by others), a second unprivileged user on a real mount
(allow_other implies default_permissions; uid/gid/umask), and the warnings about secrets on the
command line or in readable config files, plain http and verify_tls=false.

    security_test.py --kvfs PATH/kvfs --backend dir|s3 [--only CASE[,CASE...]]

Runs as root (it chowns to and runs commands as nobody, uid 65534, with setpriv). Uses the
harness of daemon_test.py (stores, Daemon, run_fail, exit 77 when FUSE or S3 is missing).
"""
import os
import subprocess
import sys

import daemon_test
from daemon_test import (STEP_TIMEOUT, Daemon, chunk, daemon_pids, mounted, ok, run_fail, sha,
                         write_chunk)

NOBODY = 65534
SECRET = "hunter2NOTASECRET"


def as_nobody(code):
    """Runs python `code` as uid/gid 65534 with no supplementary groups; returns its stdout.
    `code` prints the outcome; OSError is printed as its errno name."""
    wrapped = ("import errno, hashlib, os, sys\ntry:\n" +
               "".join("    " + line + "\n" for line in code.splitlines()) +
               "except OSError as e:\n    print(errno.errorcode[e.errno])\n")
    r = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                        "--clear-groups", sys.executable, "-c", wrapped],
                       capture_output=True, text=True, timeout=STEP_TIMEOUT)
    assert r.returncode == 0, "as nobody: %s" % r.stderr
    return r.stdout.strip()


def expect_as_nobody(code, want, what):
    got = as_nobody(code)
    assert got == want, "%s as nobody: %r, expected %r" % (what, got, want)
    ok("as nobody: %s -> %s" % (what, want))


def mount_args(ctx, store, mnt, cache, **opts):
    o = dict(store.opts, cache_dir=cache, **opts)
    return [ctx.kvfs, store.source, mnt, "-o", ",".join("%s=%s" % kv for kv in o.items())]


class Started(Daemon):
    """A mount started by the test itself (to see its stderr); unmounts like Daemon."""

    def __init__(self, ctx, cmd, mnt, env):
        os.makedirs(mnt, exist_ok=True)
        r = subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True,
                           timeout=STEP_TIMEOUT)
        assert r.returncode == 0, "mount failed (%d): %s" % (r.returncode, r.stderr)
        assert mounted(mnt), "kvfs returned 0 but %s is not mounted" % mnt
        pids = daemon_pids(mnt)
        assert len(pids) == 1, "daemon processes for %s: %s" % (mnt, pids)
        self.ctx, self.mnt, self.cache, self.pid, self.stderr = ctx, mnt, None, pids[0], r.stderr
        ctx.daemons.append(self)


# ---- cases --------------------------------------------------------------------------------------


def case_cache_dir(ctx):
    """The cache directory: planted symlinks, another user's or a shared directory are refused."""
    store = ctx.store()
    mnt = ctx.path("mnt")
    os.makedirs(mnt)
    victim = ctx.path("victim")
    with open(victim, "w") as f:
        f.write("precious")

    cache = ctx.path("cache-lock")
    os.makedirs(cache, mode=0o700)
    os.symlink(victim, os.path.join(cache, "lock"))
    run_fail(ctx, mount_args(ctx, store, mnt, cache), [cache + "/lock", "symbolic link"], mnt,
             store.env)
    with open(victim) as f:
        assert f.read() == "precious", "the victim of the lock symlink was changed"
    ok("victim of the planted lock symlink untouched")

    cache = ctx.path("cache-link")
    os.symlink(ctx.path("elsewhere"), cache)
    run_fail(ctx, mount_args(ctx, store, mnt, cache), [cache, "symbolic link"], mnt, store.env)
    assert not os.path.exists(ctx.path("elsewhere")), "created through the cache_dir symlink"

    cache = ctx.path("cache-theirs")
    os.makedirs(cache, mode=0o700)
    os.chown(cache, NOBODY, NOBODY)
    run_fail(ctx, mount_args(ctx, store, mnt, cache), [cache, "belongs to uid 65534"], mnt,
             store.env)

    cache = ctx.path("cache-shared")
    os.makedirs(cache)
    os.chmod(cache, 0o777)
    run_fail(ctx, mount_args(ctx, store, mnt, cache),
             [cache, "writable by group or others", "chmod 0700"], mnt, store.env)

    # A usable cache: unknown files in data/ survive a mount.
    cache = ctx.path("cache-ok")
    a = Daemon(ctx, store, mnt, cache)
    a.unmount()
    note = os.path.join(cache, "data", "notes.txt")
    with open(note, "w") as f:
        f.write("mine")
    a = Daemon(ctx, store, mnt, cache)
    a.unmount()
    assert open(note).read() == "mine", "an unknown file in data/ was removed"
    ok("unknown file in data/ kept across a mount")


def case_other_user(ctx):
    """A second, unprivileged user: what allow_other, uid and umask let it do."""
    os.chmod(ctx.work, 0o755)  # nobody must reach the mount point
    store = ctx.store()
    mnt = ctx.path("mnt")
    data = chunk("other-user", 3 * daemon_test.MIB)
    path = os.path.join(mnt, "c1.pt")
    a = Daemon(ctx, store, mnt, ctx.path("cache"), {"allow_other": "true"}, name="allow_other")
    write_chunk(mnt, "c1.pt", data)
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o644), "attrs %s" % st
    ok("c1.pt: uid 0, gid 0, mode 0644 (umask 022)")
    expect_as_nobody("print(hashlib.sha256(open(%r, 'rb').read()).hexdigest())" % path, sha(data),
                     "read c1.pt")
    expect_as_nobody("open(%r, 'wb').close()\nprint('created')" % os.path.join(mnt, "n.pt"),
                     "EACCES", "create n.pt")
    expect_as_nobody("os.unlink(%r)\nprint('deleted')" % path, "EACCES", "unlink c1.pt")
    expect_as_nobody("os.rename(%r, %r)\nprint('renamed')" % (path, path + ".x"), "EACCES",
                     "rename c1.pt")
    expect_as_nobody("open(%r, 'r+b').close()\nprint('opened')" % path, "EACCES",
                     "open c1.pt for writing")
    assert os.path.exists(path), "c1.pt is gone"
    a.unmount()

    a = Daemon(ctx, store, mnt, ctx.path("cache"), {"allow_other": "true", "umask": "077"},
               name="umask 077")
    assert os.stat(path).st_mode & 0o7777 == 0o600
    expect_as_nobody("open(%r, 'rb').read(1)\nprint('read')" % path, "EACCES", "read c1.pt (0600)")
    a.unmount()

    a = Daemon(ctx, store, mnt, ctx.path("cache"),
               {"allow_other": "true", "uid": NOBODY, "gid": NOBODY}, name="uid nobody")
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY), "attrs %s" % st
    mine = chunk("written-by-nobody", 32 * 1024)  # its hex must fit one argv string
    expect_as_nobody("open(%r, 'wb').write(bytes.fromhex(%r))\nprint('written')" %
                     (os.path.join(mnt, "n.pt"), mine.hex()), "written",
                     "write n.pt in a mount it owns (uid=gid=65534)")
    a.unmount()
    daemon_test.check_store(store, {"c1.pt": sha(data), "n.pt": sha(mine)})

    a = Daemon(ctx, store, mnt, ctx.path("cache"), name="no allow_other")
    expect_as_nobody("os.listdir(%r)\nprint('listed')" % mnt, "EACCES", "list the mount")
    expect_as_nobody("open(%r, 'rb').read(1)\nprint('read')" % path, "EACCES",
                     "read c1.pt without allow_other")
    a.unmount()


def case_warnings(ctx):
    """Warnings for secrets on the command line or in a readable config file, plain http and
    verify_tls=false: once each, naming the setting, never the secret; --dump-config redacts."""
    store = ctx.store()
    mnt = ctx.path("mnt")
    s3 = ctx.backend == "s3"
    # S3 needs the real keys for the mount to work; the warnings are what is checked.
    access, secret = (store.access, store.secret) if s3 else ("AKIDEXAMPLE", SECRET)
    cfg = ctx.path("kvfs.yaml")
    with open(cfg, "w") as f:
        f.write("access_key_id: %s\nsecret_access_key: %s\n" % (access, secret))
    os.chmod(cfg, 0o644)
    extra = {"verify_tls": "false"} if s3 else {}
    cmd = mount_args(ctx, store, mnt, ctx.path("cache"), secret_access_key=secret, **extra)
    a = Started(ctx, cmd + ["--config", cfg], mnt, store.env)
    err = a.stderr
    want = ["secret_access_key is given on the command line",
            "config file %s holds secret_access_key" % cfg]
    if s3:
        want += ["is plain http://", "verify_tls is false"]
    for what in want:
        assert err.count(what) == 1, "warning %r not exactly once in: %s" % (what, err)
        ok("warned once: " + what)
    assert secret not in err, "the secret was printed: %s" % err
    a.unmount()

    r = subprocess.run([ctx.kvfs, "--dump-config", "--config", cfg, "-o",
                        "secret_access_key=" + secret + ",session_token=" + SECRET],
                       capture_output=True, text=True, timeout=STEP_TIMEOUT)
    assert r.returncode == 0, "--dump-config: %s" % r.stderr
    out = r.stdout + r.stderr
    assert secret not in out and SECRET not in out, "--dump-config printed a secret: %s" % out
    for what in ["secret_access_key: <redacted>", "session_token: <redacted>",
                 "# warning: secret_access_key is given on the command line",
                 "# warning: session_token is given on the command line",
                 "# warning: config file %s holds secret_access_key" % cfg]:
        assert what in r.stdout, "%r not in --dump-config output: %s" % (what, r.stdout)
    ok("--dump-config redacts and lists the warnings")


CASES = [("cache_dir", case_cache_dir), ("other_user", case_other_user),
         ("warnings", case_warnings)]

if __name__ == "__main__":
    if os.geteuid() != 0:
        print("SKIP: needs root (chown, setpriv)")
        sys.exit(77)
    daemon_test.CASES = CASES  # the same runner: temp dir per case, cleanup, exit 77 rules
    sys.exit(daemon_test.main())
