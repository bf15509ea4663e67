#!/usr/bin/env python3
"""A tiny fake S3 server on 127.0.0.1 whose answers can be scripted per request, for the S3
client's fault tests (tests/objstore/fault_test.cc). Standard library only.

It is a self-contained fake, not a proxy: it does not check signatures (a proxy would have to
keep the Host header the client signed), so any credentials work. Path-style only. It serves:
PUT/HEAD/GET/DELETE object (Range, If-Match, If-None-Match: *), PUT/HEAD bucket, ListObjectsV2,
and multipart (create, upload part, complete, abort). User metadata (x-amz-meta-*) of a PUT is
kept and returned by HEAD and GET, and copied by a copy, as S3 does.

usage: fault_server.py [--bucket NAME ...] [--express-session-seconds N] [--bucket-region R]
With --bucket-region, a HEAD of a bucket answers with x-amz-bucket-region: R, as AWS does.
prints "PORT <n>" on stdout once listening.

With --express-session-seconds it acts as an S3 Express One Zone directory bucket's zonal endpoint
(documented protocol, no signature check): GET /BUCKET?session (CreateSession, signed for the
service s3express, x-amz-create-session-mode) hands out session credentials valid N seconds;
every other request must carry a live x-amz-s3session-token and be signed by that session's
access key for s3express, except CopyObject, signed with the IAM credentials and no session
token. Anything else is refused (403 AccessDenied, or 400 ExpiredToken) and counted.
  GET /__fault/sessions  {"created": n, "rejected": n, "last_reject": "..."}

Control API (plain HTTP, outside any bucket):
  POST /__fault/rules   JSON list of rules, appended; each rule:
        {"method": "GET", "key": "substring", "query": "substring", "count": 1,   (count -1: always)
         "action": "status" | "reset" | "truncate" | "stall" | "ignore_range" | "canned" |
                   "repeat_token" | "never_end" |  (LIST: the listing never advances / never
                                                    ends: same token back / a new one each page)
                   "flip_byte",                    (GET: the body's byte at object offset "at"
                                                    is inverted when the range covers it; the
                                                    reply is otherwise normal)
         "at": 0,                                    (for "flip_byte")
         "status": 503, "code": "SlowDown",          (for "status")
         "after": false,                             (status after applying the request)
         "after_bytes": 0,                           (reset/truncate/stall: body bytes sent first)
         "seconds": 30,                              (stall duration)
         "replace_with": "hex",                      (after the fault, replace the object's bytes)
         "body": "text", "pad_bytes": 0,             ("canned": this reply instead of the real
         "headers": {}, "content_length": "-1"}       one - status, body plus pad_bytes spaces,
                                                      extra headers, a Content-Length override)
  POST /__fault/reset   drop rules, request log and objects (buckets stay)
  POST /__fault/clear_rules   drop the rules only (an outage ends; objects stay)
  GET  /__fault/log     JSON list of requests: {"method", "path", "query", "range", "if_match",
                        "action"}; with ?format=lines one tab-separated line per request
  PUT  /__fault/object?bucket=B&key=K   store an object directly (body = content)
"""
import argparse
import hashlib
import json
import socket
import struct
import sys
import threading
import time
import urllib.parse
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.etree import ElementTree
from xml.sax.saxutils import escape


class State:
    def __init__(self, buckets):
        self.lock = threading.Lock()
        self.buckets = {b: {} for b in buckets}  # bucket -> key -> (bytes, etag, mtime)
        self.uploads = {}  # id -> (bucket, key, {part: (bytes, etag)})
        self.meta = {}  # (bucket, key) -> {"x-amz-meta-...": value}
        self.rules = []
        self.express_seconds = 0
        self.bucket_region = ""
        self.sessions = {}  # token -> (access key, expiry)
        self.express_stats = {"created": 0, "rejected": 0, "last_reject": ""}
        self.log = []
        self.next_id = 1

    def take_rule(self, method, key, query):
        with self.lock:
            for rule in self.rules:
                if rule.get("method", method) != method:
                    continue
                if rule.get("key", "") not in key or rule.get("query", "") not in query:
                    continue
                if rule.get("count", 1) == 0:
                    continue
                if rule.get("count", 1) > 0:
                    rule["count"] = rule.get("count", 1) - 1
                return dict(rule)
        return None


LOG_FIELDS = ("method", "path", "query", "range", "if_match", "action")


def etag_of(data):
    return hashlib.md5(data).hexdigest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kvfs-fault-server"

    def log_message(self, fmt, *args):  # quiet: the request log is the record
        pass

    def finish(self):  # a connection killed on purpose has nothing left to flush
        try:
            super().finish()
        except OSError:
            pass

    # ---- helpers ----
    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n else b""

    def reply(self, status, body=b"", headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amz-request-id", "fault-%d" % id(self))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def error(self, status, code, message=""):
        xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code><Message>%s"
               "</Message><RequestId>fault-req</RequestId></Error>" % (code, escape(message)))
        self.reply(status, xml.encode(), {"Content-Type": "application/xml"})

    def split(self):
        u = urllib.parse.urlsplit(self.path)
        parts = u.path.lstrip("/").split("/", 1)
        bucket = urllib.parse.unquote(parts[0])
        key = urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
        return bucket, key, urllib.parse.parse_qs(u.query, keep_blank_values=True), u.query

    def record(self, action):
        st = self.server.state
        with st.lock:
            st.log.append({"method": self.command, "path": urllib.parse.urlsplit(self.path).path,
                           "query": urllib.parse.urlsplit(self.path).query,
                           "range": self.headers.get("Range", ""),
                           "if_match": self.headers.get("If-Match", ""), "action": action})

    def kill_connection(self, rst):
        self.wfile.flush()
        if rst:  # SO_LINGER 0: close sends a TCP RST instead of a FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RD) if not rst else None
        except OSError:
            pass
        self.connection.close()

    # ---- dispatch ----
    def handle_any(self):
        if self.path.startswith("/__fault/"):
            return self.control()
        bucket, key, q, raw_query = self.split()
        if self.server.state.express_seconds and not self.express_ok(bucket, key, q):
            return
        if self.server.state.bucket_region and self.command == "HEAD" and not key:
            return self.reply(200, b"", {"x-amz-bucket-region": self.server.state.bucket_region})
        rule = self.server.state.take_rule(self.command, key, raw_query)
        action = rule["action"] if rule else ""
        self.record(action)
        data = self.body() if self.command in ("PUT", "POST") else b""
        if action == "canned":
            return self.canned(rule)
        if action == "status" and not rule.get("after"):
            return self.error(rule.get("status", 503), rule.get("code", "SlowDown"), "injected")
        if action == "reset" and self.command != "GET":
            return self.kill_connection(rst=True)
        # Object GETs stall in get_object (after their headers, if asked); everything else - LISTs
        # (a bucket GET) included - here.
        if action == "stall" and (self.command != "GET" or not key):
            time.sleep(rule.get("seconds", 30))
            return self.kill_connection(rst=False)
        if self.command == "GET" and key:
            return self.get_object(bucket, key, rule)
        if action in ("repeat_token", "never_end") and self.command == "GET" and not key:
            return self.endless_list(q, action)
        self.s3(bucket, key, q, data, rule if action == "status" else None)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    def express_ok(self, bucket, key, q):
        """S3 Express session auth; answers and returns False when the request is refused."""
        st = self.server.state
        auth = self.headers.get("Authorization", "")
        cred = auth.split("Credential=", 1)[1].split(",", 1)[0] if "Credential=" in auth else ""
        ak, service = (cred.split("/") + [""] * 5)[0], (cred.split("/") + [""] * 5)[3]
        token = self.headers.get("x-amz-s3session-token")

        def refuse(status, code, why):
            if self.command in ("PUT", "POST"):
                self.body()  # the connection stays usable
            with st.lock:
                st.express_stats["rejected"] += 1
                st.express_stats["last_reject"] = "%s %s: %s" % (self.command, self.path, why)
            self.error(status, code, why)
            return False

        if service != "s3express":
            return refuse(403, "AccessDenied", "not signed for the service s3express")
        if self.command == "GET" and not key and "session" in q:
            if token or not self.headers.get("x-amz-create-session-mode"):
                return refuse(400, "InvalidRequest", "CreateSession without session mode")
            with st.lock:
                st.express_stats["created"] += 1
                n = st.express_stats["created"]
                tok, sak = "express-session-token-%d" % n, "SESSIONAK%d" % n
                st.sessions[tok] = (sak, time.time() + st.express_seconds)
            exp = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                time.gmtime(time.time() + st.express_seconds))
            body = ("<CreateSessionResult><Credentials><SessionToken>%s</SessionToken>"
                    "<SecretAccessKey>session-secret-%d</SecretAccessKey><AccessKeyId>%s"
                    "</AccessKeyId><Expiration>%s</Expiration></Credentials>"
                    "</CreateSessionResult>") % (tok, n, sak, exp)
            self.reply(200, body.encode(), {"Content-Type": "application/xml"})
            return False  # answered
        if self.headers.get("x-amz-copy-source"):
            if token:
                return refuse(400, "InvalidRequest", "CopyObject takes IAM credentials")
            return True
        with st.lock:
            sess = st.sessions.get(token or "")
        if sess is None:
            return refuse(403, "AccessDenied", "no valid x-amz-s3session-token")
        if sess[0] != ak:
            return refuse(403, "AccessDenied", "signed with another access key than the session's")
        if time.time() > sess[1]:
            return refuse(400, "ExpiredToken", "the session token has expired")
        return True

    def control(self):
        st = self.server.state
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/__fault/rules":
            rules = json.loads(self.body() or b"[]")
            with st.lock:
                st.rules.extend(rules)
            return self.reply(200)
        if u.path == "/__fault/sessions":
            with st.lock:
                return self.reply(200, json.dumps(st.express_stats).encode())
        if u.path == "/__fault/clear_rules":  # the store comes back: objects stay
            self.body()
            with st.lock:
                st.rules = []
            return self.reply(200)
        if u.path == "/__fault/reset":
            self.body()
            with st.lock:
                st.rules, st.log, st.uploads, st.meta = [], [], {}, {}
                for b in st.buckets:
                    st.buckets[b] = {}
            return self.reply(200)
        if u.path == "/__fault/log":
            with st.lock:
                if "format=lines" in u.query:  # tab-separated, for clients without JSON
                    out = "".join("\t".join(e[f] for f in LOG_FIELDS) + "\n" for e in st.log)
                    out = out.encode()
                else:
                    out = json.dumps(st.log).encode()
            return self.reply(200, out)
        if u.path == "/__fault/object":
            q = urllib.parse.parse_qs(u.query)
            data = self.body()
            with st.lock:
                st.buckets.setdefault(q["bucket"][0], {})[q["key"][0]] = (
                    data, etag_of(data), time.time())
                st.meta.pop((q["bucket"][0], q["key"][0]), None)
            return self.reply(200)
        return self.reply(404)

    def canned(self, rule):
        """A scripted reply: huge bodies (streamed, never held) and bogus sizes."""
        body, pad = rule.get("body", "").encode(), rule.get("pad_bytes", 0)
        self.send_response(rule.get("status", 200))
        for k, v in rule.get("headers", {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", rule.get("content_length", str(len(body) + pad)))
        self.end_headers()
        if self.command != "HEAD":
            try:
                self.wfile.write(body)
                filler = b" " * 65536
                while pad > 0:
                    self.wfile.write(filler[:min(pad, len(filler))])
                    pad -= len(filler)
            except (ConnectionError, BrokenPipeError):
                self.close_connection = True  # the client gave up on the body, as it should
        if "content_length" in rule:  # the length was a lie: the connection cannot be reused
            self.kill_connection(rst=False)

    def get_object(self, bucket, key, rule):
        st = self.server.state
        with st.lock:
            objs = st.buckets.get(bucket)
            obj = objs.get(key) if objs is not None else None
        if objs is None:
            return self.error(404, "NoSuchBucket", bucket)
        if obj is None:
            return self.error(404, "NoSuchKey", key)
        data, etag, mtime = obj
        im = self.headers.get("If-Match")
        if im and im.strip('"') != etag:
            return self.error(412, "PreconditionFailed", "If-Match")
        status, first, last = 200, 0, len(data) - 1
        rng = self.headers.get("Range")
        if rng and not (rule and rule["action"] == "ignore_range"):
            a, b = rng.split("=", 1)[1].split("-", 1)
            first = int(a)
            last = min(int(b), len(data) - 1) if b else len(data) - 1
            if first >= len(data):
                return self.error(416, "InvalidRange", rng)
            status = 206
        body = data[first:last + 1]
        action = rule["action"] if rule else ""
        if action == "flip_byte" and first <= rule.get("at", 0) <= last:
            i = rule.get("at", 0) - first
            body = body[:i] + bytes([body[i] ^ 0xFF]) + body[i + 1:]
        headers = {"ETag": '"%s"' % etag, "Last-Modified": formatdate(mtime, usegmt=True),
                   "Content-Type": "application/octet-stream"}
        with st.lock:
            headers.update(st.meta.get((bucket, key), {}))
        if status == 206:
            headers["Content-Range"] = "bytes %d-%d/%d" % (first, last, len(data))
        if action == "status":  # "after" on a GET: same as before
            return self.error(rule.get("status", 503), rule.get("code", "SlowDown"), "injected")
        if action not in ("reset", "truncate", "stall"):
            return self.reply(status, body, headers)
        # Promise the whole body, send only the first after_bytes.
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:rule.get("after_bytes", 0)])
        self.wfile.flush()
        if rule.get("replace_with") is not None:
            new = bytes.fromhex(rule["replace_with"])
            with st.lock:
                st.buckets[bucket][key] = (new, etag_of(new), time.time())
        if action == "stall":
            time.sleep(rule.get("seconds", 30))
            return self.kill_connection(rst=False)
        if action == "reset":
            time.sleep(0.2)  # let the client take the bytes before the RST discards them
        return self.kill_connection(rst=(action == "reset"))

    def s3(self, bucket, key, q, data, after_rule):
        st = self.server.state
        m = self.command
        with st.lock:
            if not key and m == "PUT":
                st.buckets.setdefault(bucket, {})
                return self.reply(200)
            objs = st.buckets.get(bucket)
            if objs is None:
                return self.error(404, "NoSuchBucket", bucket)
            if not key and m == "HEAD":
                return self.reply(200)
            if not key and m == "GET":
                return self.list(objs, q)
            if m == "POST" and "uploads" in q:
                uid = "upload%d" % st.next_id
                st.next_id += 1
                st.uploads[uid] = (bucket, key, {})
                xml = ("<InitiateMultipartUploadResult><Bucket>%s</Bucket><Key>%s</Key>"
                       "<UploadId>%s</UploadId></InitiateMultipartUploadResult>"
                       % (escape(bucket), escape(key), uid))
                return self.reply(200, xml.encode())
            if "uploadId" in q:
                uid = q["uploadId"][0]
                if uid not in st.uploads:
                    return self.error(404, "NoSuchUpload", uid)
                parts = st.uploads[uid][2]
                if m == "PUT":
                    parts[int(q["partNumber"][0])] = (data, etag_of(data))
                    return self.reply(200, b"", {"ETag": '"%s"' % etag_of(data)})
                if m == "DELETE":
                    del st.uploads[uid]
                    return self.reply(204)
                if m == "POST":
                    root = ElementTree.fromstring(data)
                    nums = [int(e.text) for e in root.iter() if e.tag.endswith("PartNumber")]
                    whole = b"".join(parts[n][0] for n in nums)
                    if self.headers.get("If-None-Match") == "*" and key in objs:
                        return self.error(412, "PreconditionFailed", key)
                    # S3's multipart ETag: MD5 of the parts' binary MD5s, then "-<part count>".
                    digests = b"".join(hashlib.md5(parts[n][0]).digest() for n in nums)
                    objs[key] = (whole, etag_of(digests) + "-%d" % len(nums), time.time())
                    st.meta.pop((bucket, key), None)
                    del st.uploads[uid]
                    if after_rule:
                        return self.error(after_rule.get("status", 500),
                                          after_rule.get("code", "InternalError"), "injected")
                    xml = ("<CompleteMultipartUploadResult><Key>%s</Key><ETag></ETag>"
                           "</CompleteMultipartUploadResult>" % escape(key))
                    return self.reply(200, xml.encode())
            if m == "PUT":
                src = self.headers.get("x-amz-copy-source")
                if self.headers.get("If-None-Match") == "*" and key in objs:
                    return self.error(412, "PreconditionFailed", key)
                if src:
                    sb, sk = urllib.parse.unquote(src).lstrip("/").split("/", 1)
                    if sk not in st.buckets.get(sb, {}):
                        return self.error(404, "NoSuchKey", sk)
                    data = st.buckets[sb][sk][0]
                    st.meta[(bucket, key)] = dict(st.meta.get((sb, sk), {}))
                else:
                    st.meta[(bucket, key)] = {k.lower(): v for k, v in self.headers.items()
                                              if k.lower().startswith("x-amz-meta-")}
                objs[key] = (data, etag_of(data), time.time())
                if after_rule:
                    return self.error(after_rule.get("status", 500),
                                      after_rule.get("code", "InternalError"), "injected")
                if src:
                    xml = "<CopyObjectResult><ETag>\"%s\"</ETag></CopyObjectResult>" % etag_of(data)
                    return self.reply(200, xml.encode())
                return self.reply(200, b"", {"ETag": '"%s"' % etag_of(data)})
            if m == "HEAD":
                if key not in objs:
                    return self.reply(404)
                d, etag, mtime = objs[key]
                self.send_response(200)
                self.send_header("Content-Length", str(len(d)))
                self.send_header("ETag", '"%s"' % etag)
                self.send_header("Last-Modified", formatdate(mtime, usegmt=True))
                for k, v in st.meta.get((bucket, key), {}).items():
                    self.send_header(k, v)
                self.end_headers()
                return None
            if m == "DELETE":
                objs.pop(key, None)
                st.meta.pop((bucket, key), None)
                return self.reply(204)
        return self.error(400, "NotImplemented", m + " " + self.path)

    def list(self, objs, q):
        prefix = q.get("prefix", [""])[0]
        start = q.get("continuation-token", [""])[0] or q.get("start-after", [""])[0]
        max_keys = int(q.get("max-keys", ["1000"])[0])
        keys = sorted(k for k in objs if k.startswith(prefix) and k.encode() > start.encode())
        page, truncated = keys[:max_keys], len(keys) > max_keys
        items = "".join("<Contents><Key>%s</Key><Size>%d</Size><ETag>\"%s\"</ETag>"
                        "<LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>"
                        % (escape(k), len(objs[k][0]), objs[k][1]) for k in page)
        token = ("<NextContinuationToken>%s</NextContinuationToken>" % escape(page[-1])
                 if truncated else "")
        xml = ("<ListBucketResult><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>%d</MaxKeys>"
               "<IsTruncated>%s</IsTruncated>%s%s</ListBucketResult>"
               % (escape(prefix), len(page), max_keys, "true" if truncated else "false", token,
                  items))
        return self.reply(200, xml.encode(), {"Content-Type": "application/xml"})


    def endless_list(self, q, action):
        """A truncated page of one key whose continuation token never lets the listing end."""
        sent = q.get("continuation-token", [""])[0]
        token = (sent or "loop") if action == "repeat_token" else sent + "n"
        xml = ("<ListBucketResult><Prefix>%s</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>"
               "<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken>"
               "<Contents><Key>%sloop</Key><Size>1</Size><ETag>\"x\"</ETag>"
               "<LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>"
               "</ListBucketResult>" % (escape(q.get("prefix", [""])[0]), escape(token),
                                        escape(q.get("prefix", [""])[0])))
        return self.reply(200, xml.encode(), {"Content-Type": "application/xml"})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Clients that hang up (after a stall, or a reset we provoked) are expected.
        if isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bucket", action="append", default=[])
    ap.add_argument("--express-session-seconds", type=int, default=0)
    ap.add_argument("--bucket-region", default="")
    args = ap.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(args.bucket or ["bucket"])
    server.state.express_seconds = args.express_session_seconds
    server.state.bucket_region = args.bucket_region
    print("PORT %d" % server.server_address[1], flush=True)
    # Exit when the parent (the test) goes away: it holds our stdin open.
    threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
