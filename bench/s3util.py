#!/usr/bin/env python3
"""Bucket housekeeping for the benchmark (python3 stdlib only): SigV4-signed path-style requests.

usage: s3util.py mb BUCKET | rb BUCKET | empty BUCKET | ls BUCKET | warmup BUCKET
env:   S3_ENDPOINT (http://127.0.0.1:7480), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
       AWS_REGION (us-east-1)

Not a benchmark client: the raw store limit is measured by raw_s3 (native, libcurl).
"""
import datetime
import hashlib
import hmac
import http.client
import os
import sys
import urllib.parse
import xml.etree.ElementTree as ET

EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def _sign(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


class S3:
    def __init__(self):
        self.endpoint = os.environ.get("S3_ENDPOINT", "http://127.0.0.1:7480")
        u = urllib.parse.urlsplit(self.endpoint)
        self.host = u.netloc
        self.https = u.scheme == "https"
        self.ak = os.environ["AWS_ACCESS_KEY_ID"]
        self.sk = os.environ["AWS_SECRET_ACCESS_KEY"]
        self.region = os.environ.get("AWS_REGION", "us-east-1")

    def request(self, method, path, query=None, body=b""):
        """Returns (status, body bytes). `path` is unencoded ("/bucket/key")."""
        query = query or {}
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        date = amz_date[:8]
        uri = urllib.parse.quote(path, safe="/-_.~")
        cq = "&".join(
            f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
            for k, v in sorted(query.items()))
        payload = hashlib.sha256(body).hexdigest() if body else EMPTY_SHA
        headers = {"host": self.host, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
        signed = ";".join(sorted(headers))
        canon = "\n".join([method, uri, cq] + [f"{k}:{headers[k]}" for k in sorted(headers)] +
                          ["", signed, payload])
        scope = f"{date}/{self.region}/s3/aws4_request"
        sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canon.encode()).hexdigest()])
        k = _sign(("AWS4" + self.sk).encode(), date)
        for part in (self.region, "s3", "aws4_request"):
            k = _sign(k, part)
        sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
        headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.ak}/{scope}, "
                                    f"SignedHeaders={signed}, Signature={sig}")
        conn_cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = conn_cls(self.host, timeout=60)
        try:
            conn.request(method, uri + ("?" + cq if cq else ""), body=body or None,
                         headers=headers)
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def make_bucket(self, bucket):
        st, body = self.request("PUT", f"/{bucket}")
        if st not in (200, 409):
            raise RuntimeError(f"create bucket {bucket}: HTTP {st} {body[:200]!r}")

    def list_keys(self, bucket, prefix=""):
        keys, token = [], None
        while True:
            q = {"list-type": "2"}
            if prefix:
                q["prefix"] = prefix
            if token:
                q["continuation-token"] = token
            st, body = self.request("GET", f"/{bucket}", q)
            if st == 404:
                return keys
            if st != 200:
                raise RuntimeError(f"list {bucket}: HTTP {st} {body[:200]!r}")
            root = ET.fromstring(body)
            ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
            keys += [c.findtext(f"{ns}Key") for c in root.findall(f"{ns}Contents")]
            token = root.findtext(f"{ns}NextContinuationToken")
            if root.findtext(f"{ns}IsTruncated") != "true" or not token:
                return keys

    def list_uploads(self, bucket):
        st, body = self.request("GET", f"/{bucket}", {"uploads": ""})
        if st != 200:
            return []
        root = ET.fromstring(body)
        ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
        return [(u.findtext(f"{ns}Key"), u.findtext(f"{ns}UploadId"))
                for u in root.findall(f"{ns}Upload")]

    def empty(self, bucket):
        n = 0
        for key in self.list_keys(bucket):
            self.request("DELETE", f"/{bucket}/{key}")
            n += 1
        for key, upload_id in self.list_uploads(bucket):
            self.request("DELETE", f"/{bucket}/{key}", {"uploadId": upload_id})
        return n

    def warmup(self, bucket, n=8, size=8 << 20):
        """A fresh RGW is slow on its first writes (pools and placement groups come up): move
        some data through it before anything is measured."""
        self.make_bucket(bucket)
        body = os.urandom(size)
        for i in range(n):
            for method in ("PUT", "GET"):
                st, _ = self.request(method, f"/{bucket}/warmup-{i}",
                                     body=body if method == "PUT" else b"")
                if st != 200:
                    raise RuntimeError(f"warmup {method} {bucket}/warmup-{i}: HTTP {st}")
        self.remove_bucket(bucket)

    def remove_bucket(self, bucket):
        self.empty(bucket)
        st, body = self.request("DELETE", f"/{bucket}")
        if st not in (204, 404):
            raise RuntimeError(f"delete bucket {bucket}: HTTP {st} {body[:200]!r}")


def main(argv):
    if len(argv) != 3 or argv[1] not in ("mb", "rb", "empty", "ls", "warmup"):
        print(__doc__, file=sys.stderr)
        return 2
    s3, bucket = S3(), argv[2]
    try:
        if argv[1] == "mb":
            s3.make_bucket(bucket)
        elif argv[1] == "rb":
            s3.remove_bucket(bucket)
        elif argv[1] == "warmup":
            s3.warmup(bucket)
        elif argv[1] == "empty":
            print(f"deleted {s3.empty(bucket)} objects from {bucket}")
        else:
            for k in s3.list_keys(bucket):
                print(k)
    except (OSError, RuntimeError) as e:
        print(f"s3util {argv[1]} {bucket}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
