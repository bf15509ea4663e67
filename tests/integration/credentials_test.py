#!/usr/bin/env python3
"""Temporary credentials through the real daemon on the S3 test server: the credential endpoints are
emulated on loopback (tests/objstore/cred_server.py: IMDSv2, container credentials, STS
AssumeRoleWithWebIdentity) and hand out the test server's keys with a lifetime of a few seconds, so
kvfs must refresh them while it works.

- instance metadata (IMDSv2): two nodes write and read chunks for ~12 s while the credentials
  expire every 4 s: 0 errors, refreshes counted by the emulator;
- web identity (IRSA) wins over instance metadata when both are configured (chain order);
- container credentials (EKS Pod Identity, with a token file);
- profiles: role_arn + source_profile (STS AssumeRole, its SigV4 signature verified by the
  emulator) and credential_process, both refreshed;
- a wrong web identity token stops the mount with a message naming the source and STS's error;
- revoked credentials: once they expire, requests fail with EPERM (never a hang), and the
  cached chunks are still served.

    credentials_test.py --kvfs PATH/kvfs --cred-server PATH/cred_server.py

Exit 77 = skipped (no FUSE or no S3 endpoint), unless KVFS_REQUIRE_FUSE=1 / KVFS_REQUIRE_S3=1.
"""
import argparse
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import daemon_test
from daemon_test import Ctx, Daemon, S3Store, chunk, ok, run_fail, write_chunk
from mount_util import read_direct

MIB = daemon_test.MIB
LIFETIME = 4  # seconds: kvfs refreshes halfway, every ~2 s

# No static keys anywhere: whatever kvfs signs with must come from the emulated source.
NO_STATIC = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
             "AWS_PROFILE": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
             "AWS_CONFIG_FILE": "/nonexistent/config", "AWS_EC2_METADATA_DISABLED": "true"}


class CredServer:
    def __init__(self, script, access, secret, extra=()):
        self.proc = subprocess.Popen([sys.executable, script, "--access", access, "--secret",
                                      secret, "--lifetime", str(LIFETIME)] + list(extra),
                                     stdout=subprocess.PIPE, text=True)
        self.script = script
        line = self.proc.stdout.readline().split()
        assert line and line[0] == "port", "cred_server did not start"
        self.url = "http://127.0.0.1:%s" % line[1]

    def stats(self):
        with urllib.request.urlopen(self.url + "/__stats", timeout=10) as r:
            return json.loads(r.read())

    def revoke(self):
        urllib.request.urlopen(urllib.request.Request(self.url + "/__revoke", data=b"",
                                                      method="POST"), timeout=10).read()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def source_store(ctx, env):
    store = S3Store()
    ctx.stores.append(store)
    store.env = dict(NO_STATIC, **env)
    return store


def case_imds_refresh_under_load(ctx, cs):
    imds = {"AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": cs.url}
    store = source_store(ctx, imds)
    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
    b = Daemon(ctx, store, ctx.path("mnt-b"), ctx.path("cache-b"), name="b")
    s0 = cs.stats()
    t_end = time.time() + 3 * LIFETIME
    n = 0
    while time.time() < t_end:
        data = chunk("imds-%d" % n, MIB + n)
        write_chunk(a.mnt, "c%d.pt" % n, data)
        a.sync()  # its PUT, signed with the current credentials, has ended
        assert read_direct(os.path.join(b.mnt, "c%d.pt" % n)) == data, "c%d.pt on b" % n
        n += 1
        time.sleep(0.2)
    s1 = cs.stats()
    refreshed = s1["imds"] - s0["imds"]
    assert refreshed >= 4, "credentials fetched only %d times in %ds" % (refreshed, 3 * LIFETIME)
    for d in (a, b):
        st = d.stats()
        assert st["kvfs_read_errors"] == 0 and st["kvfs_store_errors"] == 0, st
    ok("instance metadata: %d chunks written on a and read on b over %ds while the credentials "
       "expired every %ds: %d refreshes, 0 errors" % (n, 3 * LIFETIME, LIFETIME, refreshed))
    a.unmount()
    b.unmount()


def case_imds_v1_only_when_allowed(ctx, cs):
    v1 = CredServer(cs.script, os.environ.get("KVFS_TEST_S3_ACCESS_KEY", ""),
                    os.environ.get("KVFS_TEST_S3_SECRET_KEY", ""), ["--imds-v1-only"])
    try:
        env = {"AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": v1.url}
        store = source_store(ctx, env)
        os.makedirs(ctx.path("mnt-v1"), exist_ok=True)
        cmd = [ctx.kvfs, store.source, ctx.path("mnt-v1"), "-o",
               ",".join("%s=%s" % kv for kv in dict(store.opts,
                                                     cache_dir=ctx.path("cache-v1")).items())]
        run_fail(ctx, cmd, ["IMDSv1 is off", "KVFS_IMDS_V1=1"], ctx.path("mnt-v1"),
                 env=dict(NO_STATIC, **env))
        store.env = dict(NO_STATIC, **dict(env, KVFS_IMDS_V1="1"))
        a = Daemon(ctx, store, ctx.path("mnt-v1"), ctx.path("cache-v1"), name="imdsv1")
        write_chunk(a.mnt, "v1.pt", chunk("v1", MIB))
        a.sync()
        assert v1.stats()["imds"] >= 1
        ok("an IMDSv1-only service: refused by default, used with KVFS_IMDS_V1=1")
        a.unmount()
    finally:
        v1.stop()


def web_identity_env(ctx, cs, token):
    path = ctx.path("web-token")
    with open(path, "w") as f:
        f.write(token + "\n")
    return {"AWS_WEB_IDENTITY_TOKEN_FILE": path,
            "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/kvfs-test",
            "AWS_ROLE_SESSION_NAME": "kvfs-credentials-test", "AWS_ENDPOINT_URL_STS": cs.url}


def case_web_identity_first(ctx, cs):
    env = web_identity_env(ctx, cs, "web-identity-token-1")
    env.update({"AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": cs.url})
    store = source_store(ctx, env)
    s0 = cs.stats()
    a = Daemon(ctx, store, ctx.path("mnt-w"), ctx.path("cache-w"), name="irsa")
    data = chunk("web", 2 * MIB)
    write_chunk(a.mnt, "w.pt", data)
    time.sleep(LIFETIME)  # at least one refresh
    write_chunk(a.mnt, "w2.pt", data)
    a.sync()  # both uploads ended (write_back, the default)
    s1 = cs.stats()
    assert s1["sts"] - s0["sts"] >= 2 and s1["imds"] == s0["imds"], (s0, s1)
    assert set(store.keys()) >= {"kv/w.pt", "kv/w2.pt"}, store.keys()
    ok("web identity (STS AssumeRoleWithWebIdentity) used before instance metadata; "
       "%d STS calls, 0 IMDS calls" % (s1["sts"] - s0["sts"]))
    a.unmount()

    bad = web_identity_env(ctx, cs, "not-the-token")
    os.makedirs(ctx.path("mnt-x"), exist_ok=True)
    cmd = [ctx.kvfs, store.source, ctx.path("mnt-x"), "-o",
           ",".join("%s=%s" % kv for kv in dict(store.opts, cache_dir=ctx.path("cache-x")).items())]
    run_fail(ctx, cmd, ["web identity", "InvalidIdentityToken"], ctx.path("mnt-x"),
             env=dict(NO_STATIC, **bad))


def case_container_and_revocation(ctx, cs):
    token_file = ctx.path("container-token")
    with open(token_file, "w") as f:
        f.write("container-token-1")
    store = source_store(ctx, {"AWS_CONTAINER_CREDENTIALS_FULL_URI": cs.url + "/container/creds",
                               "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": token_file})
    s0 = cs.stats()
    a = Daemon(ctx, store, ctx.path("mnt-c"), ctx.path("cache-c"), name="pod")
    data = chunk("container", 3 * MIB)
    write_chunk(a.mnt, "p.pt", data)
    assert read_direct(os.path.join(a.mnt, "p.pt")) == data
    assert cs.stats()["container"] > s0["container"]
    ok("container credentials (token file) used")

    cs.revoke()
    time.sleep(LIFETIME + 1)  # the last good credentials have expired now
    t0 = time.time()
    try:
        write_chunk(a.mnt, "after-revoke.pt", data)
        raise AssertionError("a write with revoked, expired credentials succeeded")
    except OSError as e:
        assert e.errno == errno.EPERM, "write after revocation: %s" % e
        ok("after revocation and expiry: write fails with %s in %.1fs" %
           (errno.errorcode[e.errno], time.time() - t0))
    assert read_direct(os.path.join(a.mnt, "p.pt")) == data, "cached chunk after revocation"
    ok("the cached chunk is still served")
    assert cs.stats()["refused"] >= 1
    a.unmount()


PROCESS = r"""#!/usr/bin/env python3
import datetime, json, sys
with open(sys.argv[1], "a") as f:
    f.write("x")
exp = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=%d)
print(json.dumps({"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s",
                  "Expiration": exp.strftime("%%Y-%%m-%%dT%%H:%%M:%%SZ")}))
"""


def case_profiles(ctx, cs):
    access = os.environ.get("KVFS_TEST_S3_ACCESS_KEY", "")
    secret = os.environ.get("KVFS_TEST_S3_SECRET_KEY", "")
    script, calls = ctx.path("cred-process.py"), ctx.path("cred-process.calls")
    with open(script, "w") as f:
        f.write(PROCESS % (LIFETIME, access, secret))
    config = ctx.path("aws-config")
    with open(config, "w") as f:
        f.write("[profile assumer]\nrole_arn = arn:aws:iam::123456789012:role/kvfs-test\n"
                "source_profile = base\nrole_session_name = kvfs-profile-test\n\n"
                "[profile base]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n"
                "[profile wrong]\nrole_arn = arn:aws:iam::123456789012:role/kvfs-test\n"
                "source_profile = badbase\n\n"
                "[profile badbase]\naws_access_key_id = %s\naws_secret_access_key = nope\n\n"
                "[profile proc]\ncredential_process = %s %s %s\n"
                % (access, secret, access, sys.executable, script, calls))
    env = {"AWS_CONFIG_FILE": config, "AWS_ENDPOINT_URL_STS": cs.url, "AWS_PROFILE": "assumer"}
    store = source_store(ctx, env)
    s0 = cs.stats()
    a = Daemon(ctx, store, ctx.path("mnt-r"), ctx.path("cache-r"), name="role")
    data = chunk("role", 2 * MIB)
    write_chunk(a.mnt, "r.pt", data)
    time.sleep(LIFETIME)
    write_chunk(a.mnt, "r2.pt", data)
    a.sync()
    n = cs.stats()["assume_role"] - s0["assume_role"]
    assert n >= 2, "AssumeRole called %d times" % n
    assert set(store.keys()) >= {"kv/r.pt", "kv/r2.pt"}, store.keys()
    ok("profile role_arn + source_profile: STS AssumeRole (SigV4 checked by the emulator), "
       "%d calls, writes work across a refresh" % n)
    a.unmount()

    store.env = dict(NO_STATIC, **dict(env, AWS_PROFILE="proc"))
    p = Daemon(ctx, store, ctx.path("mnt-p"), ctx.path("cache-p"), name="process")
    write_chunk(p.mnt, "p.pt", data)
    time.sleep(LIFETIME)
    write_chunk(p.mnt, "p2.pt", data)
    p.sync()
    runs = len(open(calls).read())
    assert runs >= 2, "credential_process ran %d times" % runs
    assert read_direct(os.path.join(p.mnt, "p2.pt")) == data
    ok("profile credential_process: ran %d times (refreshed), writes work" % runs)
    p.unmount()

    os.makedirs(ctx.path("mnt-bad"), exist_ok=True)
    cmd = [ctx.kvfs, store.source, ctx.path("mnt-bad"), "-o",
           ",".join("%s=%s" % kv for kv in dict(store.opts, cache_dir=ctx.path("cache-b")).items())]
    run_fail(ctx, cmd, ["AssumeRole", "SignatureDoesNotMatch"], ctx.path("mnt-bad"),
             env=dict(NO_STATIC, **dict(env, AWS_PROFILE="wrong")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--cred-server", required=True)
    args = ap.parse_args()
    daemon_test.require()
    cs = CredServer(os.path.abspath(args.cred_server), os.environ.get("KVFS_TEST_S3_ACCESS_KEY", ""),
                    os.environ.get("KVFS_TEST_S3_SECRET_KEY", ""))
    failed = []
    try:
        for fn in (case_imds_refresh_under_load, case_imds_v1_only_when_allowed,
                   case_web_identity_first, case_profiles, case_container_and_revocation):
            print("[%s]" % fn.__name__, flush=True)
            ctx = Ctx(os.path.abspath(args.kvfs), "s3", tempfile.mkdtemp(prefix="kvfs-cred-"))
            try:
                fn(ctx, cs)
                print("[%s] PASSED" % fn.__name__, flush=True)
            except Exception as e:  # noqa: BLE001 - report and go on
                import traceback
                traceback.print_exc(limit=3)
                print("[%s] FAILED: %s" % (fn.__name__, e), flush=True)
                failed.append(fn.__name__)
            finally:
                ctx.cleanup()
                shutil.rmtree(ctx.work, ignore_errors=True)
    finally:
        cs.stop()
    if failed:
        print("credentials_test: FAILED: " + ", ".join(failed))
        return 1
    print("credentials_test: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
