#!/usr/bin/env python3
"""A loopback emulator of the Hugging Face Storage Buckets S3 gateway's addressing, in front of
the S3 test server (the Hub is not reachable from the test machines).

The gateway serves each namespace (user or organisation) under its own endpoint path,
https://s3.hf.co/<namespace>, path-style, region us-east-1. This emulator:

- accepts only requests under /<namespace>/ (others: 404 NoSuchBucket);
- verifies each request's AWS Signature V4 against --access/--secret with the path exactly as
  sent, namespace included - so a client that signs the path without the endpoint's path
  component fails with 403 SignatureDoesNotMatch, as it would on the real gateway;
- forwards the request without the namespace to the S3 test server, signed again for it.

    hf_gateway.py --backend http://127.0.0.1:7480 --namespace my-org --access K --secret S
Prints "port N" once listening. GET /__stats -> {"verified": n, "rejected": n, "last": "..."}.
"""
import argparse
import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import sys
import threading
import urllib.parse

REGION = "us-east-1"


def canonical_query(raw):
    pairs = urllib.parse.parse_qsl(raw, keep_blank_values=True)
    enc = [(urllib.parse.quote(k, safe="-_.~"), urllib.parse.quote(v, safe="-_.~"))
           for k, v in pairs]
    return "&".join("%s=%s" % kv for kv in sorted(enc))


def signature(secret, method, path, raw_query, headers, signed, payload_hash, amz_date):
    canon_headers = "".join("%s:%s\n" % (h, " ".join(headers.get(h, "").split()))
                            for h in signed)
    creq = "\n".join([method, path, canonical_query(raw_query), canon_headers, ";".join(signed),
                      payload_hash])
    date = amz_date[:8]
    scope = "%s/%s/s3/aws4_request" % (date, REGION)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (date, REGION, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return scope, hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error(self, code, err, msg):
        with self.server.lock:
            self.server.stats["rejected"] += 1
            self.server.stats["last"] = "%s %s: %s" % (self.command, self.path, err)
        self.reply(code, ("<Error><Code>%s</Code><Message>%s</Message></Error>" %
                          (err, msg)).encode(), [("Content-Type", "application/xml")])

    def handle_any(self):
        a = self.server.args
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path == "/__stats":
            with self.server.lock:
                return self.reply(200, json.dumps(self.server.stats).encode())
        path, _, raw_query = self.path.partition("?")
        prefix = "/" + a.namespace
        if not (path == prefix or path.startswith(prefix + "/")):
            return self.error(404, "NoSuchBucket", "not under this gateway's namespace")
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        auth = hdrs.get("authorization", "")
        try:
            fields = dict(p.strip().split("=", 1)
                          for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
            signed = fields["SignedHeaders"].split(";")
            ak = fields["Credential"].split("/")[0]
            scope, want = signature(a.secret, self.command, path, raw_query, hdrs, signed,
                                    hdrs.get("x-amz-content-sha256", ""),
                                    hdrs.get("x-amz-date", ""))
            good = (ak == a.access and fields["Credential"].endswith(scope) and
                    hmac.compare_digest(want, fields["Signature"]))
        except (KeyError, ValueError):
            good = False
        if not good:
            return self.error(403, "SignatureDoesNotMatch",
                              "the signature does not match the request as sent")
        with self.server.lock:
            self.server.stats["verified"] += 1
        self.forward(path[len(prefix):] or "/", raw_query, hdrs, body)

    def forward(self, path, raw_query, hdrs, body):
        a = self.server.args
        u = urllib.parse.urlsplit(a.backend)
        out = {k: v for k, v in hdrs.items()
               if k not in ("authorization", "host", "connection", "content-length",
                            "transfer-encoding", "expect")}
        out["host"] = u.netloc
        out["x-amz-date"] = datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y%m%dT%H%M%SZ")
        out.setdefault("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
        signed = sorted(k for k in out if k == "host" or k.startswith("x-amz-") or
                        k == "content-type")
        scope, sig = signature(a.secret, self.command, path, raw_query, out, signed,
                               out["x-amz-content-sha256"], out["x-amz-date"])
        out["authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                "Signature=%s" % (a.access, scope, ";".join(signed), sig))
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        try:
            conn.request(self.command, path + ("?" + raw_query if raw_query else ""),
                         body=body if body else None,
                         headers=dict(out, **({"content-length": str(len(body))}
                                              if self.command in ("PUT", "POST") else {})))
            r = conn.getresponse()
            data = r.read()
            keep = [(k, v) for k, v in r.getheaders()
                    if k.lower() not in ("content-length", "transfer-encoding", "connection")]
            if self.command == "HEAD":
                cl = r.getheader("Content-Length") or "0"
                self.send_response(r.status)
                for k, v in keep:
                    self.send_header(k, v)
                self.send_header("Content-Length", cl)
                self.end_headers()
                return
            self.reply(r.status, data, keep)
        finally:
            conn.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", required=True)
    ap.add_argument("--namespace", required=True)
    ap.add_argument("--access", required=True)
    ap.add_argument("--secret", required=True)
    args = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.args = args
    srv.lock = threading.Lock()
    srv.stats = {"verified": 0, "rejected": 0, "last": ""}
    print("port %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
