#!/usr/bin/env python3
"""A loopback emulator of the AWS credential endpoints kvfs can take temporary credentials from,
following their documented protocols (AWS itself is not reachable from the test machines):

- EC2 instance metadata, IMDSv2: PUT /latest/api/token (X-aws-ec2-metadata-token-ttl-seconds),
  then GET /latest/meta-data/iam/security-credentials/[ROLE] with X-aws-ec2-metadata-token;
  a request without the token is 401 (IMDSv1 is refused, as on instances that require v2);
  with --imds-v1-only the token PUT is refused and plain GETs are answered (an IMDSv1 service).
- Container credentials (ECS, EKS Pod Identity): GET /container/creds with
  Authorization: CONTAINER_TOKEN.
- STS AssumeRoleWithWebIdentity (EKS IRSA): POST / with the form fields Action, Version, RoleArn,
  RoleSessionName, WebIdentityToken; XML answer or an ErrorResponse.
- STS AssumeRole (profiles with role_arn): POST / with Action=AssumeRole, RoleArn,
  RoleSessionName, signed with SigV4 (service sts) by the source credentials, which must be
  --access/--secret: the signature is verified here, so a wrong one is SignatureDoesNotMatch.

Every answer carries the same access key and secret (the test S3 server's: RGW only accepts its
own users) with an Expiration LIFETIME seconds ahead, so clients must refresh often; the session
token is empty unless --session-token is given (RGW rejects tokens it did not issue).

Control: GET /__stats -> {"imds": n, "container": n, "sts": n, "refused": n};
POST /__revoke -> every later credential request is refused (403), as after a role is detached.

    cred_server.py --access KEY --secret SECRET [--lifetime 4] [--role-arn ARN]
                   [--web-token T] [--container-token T]
Prints "port N" once listening on 127.0.0.1.
"""
import argparse
import datetime
import hashlib
import hmac
import http.server
import json
import sys
import threading
import urllib.parse

ROLE = "kvfs-test-role"


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.stats = {"imds": 0, "container": 0, "sts": 0, "assume_role": 0, "refused": 0}
        self.revoked = False
        self.imds_tokens = set()

    def count(self, name):
        with self.lock:
            self.stats[name] += 1

    def expiration(self):
        t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
            seconds=self.args.lifetime)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    @property
    def st(self):
        return self.server.state

    def reply(self, code, body, ctype="text/plain"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def creds_json(self):
        a = self.st.args
        return json.dumps({"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": a.access,
                           "SecretAccessKey": a.secret, "Token": a.session_token,
                           "Expiration": self.st.expiration()})

    def refused(self):
        if self.st.revoked:
            self.st.count("refused")
            return True
        return False

    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/latest/api/token" and self.st.args.imds_v1_only:
            return self.reply(403, "tokens are not offered here")
        if self.path == "/latest/api/token":
            if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                return self.reply(400, "missing X-aws-ec2-metadata-token-ttl-seconds")
            tok = "imds-token-%d" % len(self.st.imds_tokens)
            with self.st.lock:
                self.st.imds_tokens.add(tok)
            return self.reply(200, tok)
        self.reply(404, "not found")

    def do_GET(self):
        if self.path == "/__stats":
            with self.st.lock:
                return self.reply(200, json.dumps(self.st.stats), "application/json")
        base = "/latest/meta-data/iam/security-credentials/"
        if self.path.startswith(base):
            if (not self.st.args.imds_v1_only and
                    self.headers.get("X-aws-ec2-metadata-token") not in self.st.imds_tokens):
                return self.reply(401, "IMDSv2 token required")
            role = self.path[len(base):]
            if role == "":
                return self.reply(200, ROLE)
            if role != ROLE:
                return self.reply(404, "no such role")
            if self.refused():
                return self.reply(404, "no such role")
            self.st.count("imds")
            return self.reply(200, self.creds_json(), "application/json")
        if self.path == "/container/creds":
            if self.headers.get("Authorization") != self.st.args.container_token:
                return self.reply(403, json.dumps({"code": "AccessDenied",
                                                   "message": "bad authorization token"}))
            if self.refused():
                return self.reply(403, json.dumps({"code": "AccessDenied"}))
            self.st.count("container")
            return self.reply(200, self.creds_json(), "application/json")
        self.reply(404, "not found")

    def sts_error(self, code, err, msg):
        self.reply(code, "<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code>"
                   "<Message>%s</Message></Error></ErrorResponse>" % (err, msg), "text/xml")

    def sigv4_ok(self, body):
        """Verifies the request's SigV4 signature (service sts) against --access/--secret."""
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return False
        parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
        ak, date, region, service, term = parts["Credential"].split("/")
        if ak != self.st.args.access or service != "sts" or term != "aws4_request":
            return False
        signed = parts["SignedHeaders"].split(";")
        canon_headers = "".join("%s:%s\n" % (h, " ".join(self.headers.get(h, "").split()))
                                for h in signed)
        creq = "\n".join(["POST", "/", "", canon_headers, ";".join(signed),
                          hashlib.sha256(body).hexdigest()])
        amz_date = self.headers.get("x-amz-date", "")
        scope = "%s/%s/%s/aws4_request" % (date, region, service)
        sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(creq.encode()).hexdigest()])
        key = ("AWS4" + self.st.args.secret).encode()
        for part in (date, region, service, "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        want = hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()
        return hmac.compare_digest(want, parts["Signature"])

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = raw.decode()
        if self.path == "/__revoke":
            self.st.revoked = True
            return self.reply(200, "revoked")
        if self.path != "/":
            return self.reply(404, "not found")
        f = {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}
        a = self.st.args
        if f.get("Action") == "AssumeRole":
            return self.assume_role(f, raw)
        if f.get("Action") != "AssumeRoleWithWebIdentity" or f.get("Version") != "2011-06-15":
            return self.sts_error(400, "InvalidAction", "unsupported action")
        if f.get("RoleArn") != a.role_arn or not f.get("RoleSessionName"):
            return self.sts_error(403, "AccessDenied", "not authorized to assume the role")
        if f.get("WebIdentityToken") != a.web_token:
            return self.sts_error(400, "InvalidIdentityToken", "the token is not valid")
        if self.refused():
            return self.sts_error(403, "AccessDenied", "the role was revoked")
        self.st.count("sts")
        self.reply(200, (
            "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
            "<AssumeRoleWithWebIdentityResult><Credentials>"
            "<AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey>"
            "<SessionToken>%s</SessionToken><Expiration>%s</Expiration>"
            "</Credentials><SubjectFromWebIdentityToken>system:serviceaccount:kv:kvfs"
            "</SubjectFromWebIdentityToken></AssumeRoleWithWebIdentityResult>"
            "</AssumeRoleWithWebIdentityResponse>") % (
                a.access, a.secret, a.session_token, self.st.expiration()), "text/xml")


    def assume_role_reply(self, f):
        a = self.st.args
        self.reply(200, (
            "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
            "<AssumeRoleResult><Credentials>"
            "<AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey>"
            "<SessionToken>%s</SessionToken><Expiration>%s</Expiration>"
            "</Credentials><AssumedRoleUser><Arn>%s/%s</Arn></AssumedRoleUser>"
            "</AssumeRoleResult></AssumeRoleResponse>") % (
                a.access, a.secret, a.session_token, self.st.expiration(), f.get("RoleArn"),
                f.get("RoleSessionName")), "text/xml")


    def assume_role(self, f, raw):
        if f.get("Version") != "2011-06-15" or not f.get("RoleSessionName"):
            return self.sts_error(400, "InvalidParameterValue", "Version and RoleSessionName needed")
        if not self.sigv4_ok(raw):
            return self.sts_error(403, "SignatureDoesNotMatch", "the request signature is wrong")
        if f.get("RoleArn") != self.st.args.role_arn:
            return self.sts_error(403, "AccessDenied", "not authorized to assume the role")
        if self.refused():
            return self.sts_error(403, "AccessDenied", "the role was revoked")
        self.st.count("assume_role")
        self.assume_role_reply(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--access", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--session-token", default="")
    ap.add_argument("--lifetime", type=int, default=4)
    ap.add_argument("--role-arn", default="arn:aws:iam::123456789012:role/kvfs-test")
    ap.add_argument("--web-token", default="web-identity-token-1")
    ap.add_argument("--container-token", default="container-token-1")
    ap.add_argument("--imds-v1-only", action="store_true",
                    help="an old instance metadata service: no tokens, plain GETs")
    args = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(args)
    print("port %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
