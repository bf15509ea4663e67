#!/usr/bin/env python3
"""Hugging Face Storage Buckets through the real daemon, against a loopback emulator of the
gateway's addressing (tests/objstore/hf_gateway.py: one endpoint path per namespace, SigV4 verified
over the path as sent, forwarded to the S3 test server).

- `kvfs hf://buckets/<ns>/<bucket>/<prefix>` with the gateway endpoint: chunks written (one PUT
  and multipart) land under <prefix>/ in the bucket and read back byte-exact on a second node;
  every request was signed over the endpoint's path component (0 rejected by the emulator).
- LMCache's hfbucket plugin file (bucket_handle, download_tmp_dir, metadata_cache_ttl_secs) mounts
  the same bucket.
- `--dump-config` shows the resolved endpoint, bucket and prefix.

    hf_bucket_test.py --kvfs PATH/kvfs --gateway PATH/hf_gateway.py
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import daemon_test
from daemon_test import Ctx, Daemon, S3Store, chunk, ok, write_chunk
from mount_util import read_direct

MIB = daemon_test.MIB
NS = "my-org"


class Gateway:
    def __init__(self, script, backend, access, secret):
        self.proc = subprocess.Popen([sys.executable, script, "--backend", backend, "--namespace",
                                      NS, "--access", access, "--secret", secret],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        assert line and line[0] == "port", "hf_gateway did not start"
        self.url = "http://127.0.0.1:%s" % line[1]

    def stats(self):
        with urllib.request.urlopen(self.url + "/__stats", timeout=10) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def run(ctx, gw):
    store = S3Store()
    ctx.stores.append(store)
    handle = "hf://buckets/%s/%s/prod" % (NS, store.bucket)
    store.source = handle
    store.opts = {"endpoint": gw.url + "/" + NS}  # the emulator instead of https://s3.hf.co/NS

    r = subprocess.run([ctx.kvfs, "--dump-config", handle, ctx.path("mnt")], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    for line in ("endpoint: https://s3.hf.co/" + NS, "bucket: " + store.bucket,
                 "key_prefix: prod/", "region: us-east-1", "addressing: path"):
        assert line in r.stdout.splitlines(), "--dump-config lacks %r:\n%s" % (line, r.stdout)
    ok("--dump-config %s: endpoint https://s3.hf.co/%s, bucket, prefix prod/" % (handle, NS))

    a = Daemon(ctx, store, ctx.path("mnt-a"), ctx.path("cache-a"), name="a")
    want = {"small.pt": chunk("hf-small", 3 * MIB + 5), "big.pt": chunk("hf-big", 40 * MIB + 1)}
    for name, data in want.items():
        write_chunk(a.mnt, name, data)
    a.sync()  # in the bucket once their uploads ended (write_back, the default)
    keys = store.keys()
    assert keys.get("prod/small.pt") == len(want["small.pt"]) and \
        keys.get("prod/big.pt") == len(want["big.pt"]), keys
    ok("written through %s/%s: objects prod/small.pt and prod/big.pt (multipart) in the bucket" %
       (gw.url, NS))

    cfg = ctx.path("lmcache-hf.yaml")
    with open(cfg, "w") as f:
        f.write("remote_storage_plugins: [\"hfbucket\"]\nextra_config:\n"
                "  remote_storage_plugin.hfbucket.bucket_handle: \"%s\"\n"
                "  remote_storage_plugin.hfbucket.download_tmp_dir: \"%s\"\n"
                "  remote_storage_plugin.hfbucket.metadata_cache_ttl_secs: 5\n"
                "endpoint: %s/%s\n" % (handle, ctx.path("cache-b"), gw.url, NS))
    mnt_b = ctx.path("mnt-b")
    os.makedirs(mnt_b)
    r = subprocess.run([ctx.kvfs, "--config", cfg, mnt_b], env=dict(os.environ, **store.env),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, "mount with the LMCache file: %s" % r.stderr
    try:
        for name, data in want.items():
            assert read_direct(os.path.join(mnt_b, name)) == data, name + " read back differs"
        assert os.path.isdir(ctx.path("cache-b")), "download_tmp_dir was not used as cache_dir"
        ok("LMCache hfbucket plugin file: both chunks read back on a second node")
    finally:
        subprocess.run(["fusermount3", "-u", mnt_b], timeout=60)

    s = gw.stats()
    assert s["verified"] > 0 and s["rejected"] == 0, s
    ok("the emulator verified %d request signatures over /%s/..., rejected 0" %
       (s["verified"], NS))
    a.unmount()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--gateway", required=True)
    args = ap.parse_args()
    daemon_test.require()
    e = os.environ
    gw = Gateway(os.path.abspath(args.gateway), e["KVFS_TEST_S3_ENDPOINT"],
                 e.get("KVFS_TEST_S3_ACCESS_KEY", ""), e.get("KVFS_TEST_S3_SECRET_KEY", ""))
    ctx = Ctx(os.path.abspath(args.kvfs), "s3", tempfile.mkdtemp(prefix="kvfs-hf-"))
    try:
        run(ctx, gw)
    finally:
        ctx.cleanup()
        gw.stop()
        shutil.rmtree(ctx.work, ignore_errors=True)
    print("hf_bucket_test: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
