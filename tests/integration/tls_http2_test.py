#!/usr/bin/env python3
"""TLS with a private CA, and HTTP/2, through the real daemon: Debian's nghttpx terminates TLS (ALPN
h2 and http/1.1) in front of the S3 test server, with a CA and a server certificate for 127.0.0.1
this test generates.

- `ca_bundle` = the generated CA: mounts, writes and reads (multipart included) byte-exact.
- Without it (the system's store) or with a different CA: the mount fails, naming the endpoint
  and the certificate problem - TLS verification is on by default.
- `prefer_http2: true`: every request is h2 (nghttpx's access log records the ALPN), carried on
  fewer connections than the same work over HTTP/1.1; the same bytes come back.

    tls_http2_test.py --kvfs PATH/kvfs

Exit 77 = skipped (no FUSE, no S3 endpoint, or no nghttpx/openssl), unless KVFS_REQUIRE_FUSE=1 /
KVFS_REQUIRE_S3=1.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import daemon_test
from daemon_test import Ctx, Daemon, S3Store, chunk, ok, run_fail, write_chunk
from mount_util import read_direct, skip_or_fail

MIB = daemon_test.MIB


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


def make_certs(work, name):
    """A CA and a server certificate for 127.0.0.1 signed by it; returns (ca, key, cert)."""
    ca_key, ca = os.path.join(work, name + "-ca.key"), os.path.join(work, name + "-ca.pem")
    key, csr, cert = (os.path.join(work, name + s) for s in ("-srv.key", "-srv.csr", "-srv.pem"))
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
       "-days", "2", "-subj", "/CN=kvfs test CA " + name)
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj",
       "/CN=127.0.0.1")
    ext = os.path.join(work, name + "-ext.cnf")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    sh("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
       "-out", cert, "-days", "2", "-extfile", ext)
    return ca, key, cert


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proxy:
    """nghttpx: TLS + ALPN (h2, http/1.1) on 127.0.0.1:port -> the S3 test server."""

    def __init__(self, work, key, cert, backend):
        host, port = backend.split("//", 1)[1].split(":")
        self.port = free_port()
        self.log = os.path.join(work, "access.log")
        self.proc = subprocess.Popen(
            ["nghttpx", "--frontend=127.0.0.1,%d" % self.port,
             "--backend=%s,%s;;proto=http/1.1" % (host, port), "--workers=1", "--no-ocsp",
             "--accesslog-file=" + self.log,
             "--accesslog-format=$alpn $remote_port $method $status",
             "--errorlog-file=" + os.path.join(work, "nghttpx.err"), key, cert],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("nghttpx did not start")
        self.endpoint = "https://127.0.0.1:%d" % self.port

    def lines(self):
        with open(self.log) as f:
            return [ln.split() for ln in f if ln.strip()]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def workload(ctx, store, opts, tag):
    """Node w writes, node r (fresh cache) reads; both with `opts`. Returns the chunks."""
    w = Daemon(ctx, store, ctx.path("mnt-w-" + tag), ctx.path("cache-w-" + tag), opts, name="w")
    want = {"%s-%d.pt" % (tag, i): chunk("%s-%d" % (tag, i), size)
            for i, size in enumerate([3 * MIB + 1, 8 * MIB, 40 * MIB + 7])}
    for name, data in want.items():
        write_chunk(w.mnt, name, data)
    w.sync()  # another node reads them once their uploads ended (write_back, the default)
    r = Daemon(ctx, store, ctx.path("mnt-r-" + tag), ctx.path("cache-r-" + tag), opts, name="r")
    for name, data in want.items():
        assert read_direct(os.path.join(r.mnt, name)) == data, "%s read back differs" % name
    w.unmount()
    r.unmount()
    return want


def run(ctx):
    store = S3Store()
    ctx.stores.append(store)
    ca, key, cert = make_certs(ctx.work, "a")
    other_ca, _, _ = make_certs(ctx.work, "b")
    proxy = Proxy(ctx.work, key, cert, store.endpoint)
    try:
        tls = {"endpoint": proxy.endpoint, "ca_bundle": ca}

        t0 = time.time()
        workload(ctx, store, dict(tls, prefer_http2="false"), "h1")
        t_h1 = time.time() - t0
        h1 = proxy.lines()
        assert h1 and all(ln[0] == "http/1.1" for ln in h1), "HTTP/1.1 run: %s" % h1[:3]
        ok("private CA (ca_bundle): 3 chunks (one multipart) written and read back over TLS, "
           "HTTP/1.1: %d requests on %d connections" % (len(h1), len({ln[1] for ln in h1})))

        t0 = time.time()
        workload(ctx, store, dict(tls, prefer_http2="true"), "h2")
        t_h2 = time.time() - t0
        h2 = proxy.lines()[len(h1):]
        assert h2 and all(ln[0] == "h2" for ln in h2), "prefer_http2 run not h2: %s" % h2[:3]
        c1, c2 = len({ln[1] for ln in h1}), len({ln[1] for ln in h2})
        assert c2 < c1, "h2 used %d connections, HTTP/1.1 %d" % (c2, c1)
        ok("prefer_http2: all %d requests h2 (ALPN), on %d connections instead of %d; same bytes "
           "(%.1fs vs %.1fs for the same work, not asserted)" % (len(h2), c2, c1, t_h2, t_h1))

        for bundle, why in (("", "the system's CA store"), (other_ca, "another CA")):
            mnt = ctx.path("mnt-bad")
            os.makedirs(mnt, exist_ok=True)
            o = dict(store.opts, endpoint=proxy.endpoint, cache_dir=ctx.path("cache-bad"))
            if bundle:
                o["ca_bundle"] = bundle
            cmd = [ctx.kvfs, store.source, mnt, "-o", ",".join("%s=%s" % kv for kv in o.items())]
            msg = run_fail(ctx, cmd, [proxy.endpoint], mnt, env=store.env)
            assert "certificate" in msg.lower() or "ssl" in msg.lower(), msg
            ok("with %s the mount is refused (TLS verification on by default)" % why)
    finally:
        proxy.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    args = ap.parse_args()
    daemon_test.require()
    if not shutil.which("nghttpx") or not shutil.which("openssl"):
        skip_or_fail("nghttpx or openssl missing (apt-get install nghttp2-proxy openssl)",
                     "KVFS_REQUIRE_S3")
    ctx = Ctx(os.path.abspath(args.kvfs), "s3", tempfile.mkdtemp(prefix="kvfs-tls-"))
    try:
        run(ctx)
    finally:
        ctx.cleanup()
        shutil.rmtree(ctx.work, ignore_errors=True)
    print("tls_http2_test: PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
