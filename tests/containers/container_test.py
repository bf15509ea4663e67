#!/usr/bin/python3
"""kvfs in containers, with Debian's podman: the Kubernetes recipe's pod run for real.

    container_test.py --kvfs-image IMG --engine-image IMG [--only case,...] [--keep]

Against KVFS_TEST_S3_ENDPOINT (the suite's RGW). A directory of the test stands for the node: it is
bind-mounted on itself and made rshared, as a systemd host's / is, and the hostPath volumes point
into it (NODE/mnt/kvfs, NODE/var/cache/kvfs) instead of the machine's own /mnt and /var. Cases:

  two_containers  kvfs in a privileged container mounts the bucket on a host directory with shared
                  propagation; an engine container with no privileges (all capabilities dropped,
                  no network, that directory its only volume) runs the engine replay through it,
                  byte-exact; the chunks are in the bucket; SIGTERM (podman stop) leaves no mount.
  kube_play       `podman kube play` of the Pod that docs/kubernetes.md's DaemonSet template
                  makes (read from the document: its volumes, mountPropagation, securityContext,
                  command and probes), /healthz and /readyz, then faults: kvfs killed -9 (the
                  engine container gets ENOTCONN at once, not a hang; kvfs restarted mounts again
                  on the same directory and the running engine container reads its chunks
                  through it), the engine container restarted (its chunks still there), and
                  `podman kube down` while chunks are being written (every acknowledged chunk is
                  in the bucket, no mount is left on the node).
  cache_dirs      the cache on the container's overlay root, on a host directory and on tmpfs:
                  which give FUSE passthrough hits, and what the log says when one cannot.

Exit status 0 when every case passed; a missing tool or server fails (a skip counts as a failure:
run by tests/containers/run.sh, a leg of its own in tests/run_all.sh).
"""
import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import daemon_test as dt  # noqa: E402  (S3Store: a fresh bucket on the test RGW)
import yaml  # noqa: E402  (Debian's python3-yaml)

MIB = 1 << 20
DOC = os.path.join(ROOT, "docs", "kubernetes.md")
METRICS_PORT = 9464  # docs/kubernetes.md's metrics_listen port
DOC_IMAGE = "registry.example.com/kvfs:0.1"  # the DaemonSet's image, tagged onto ours
ENOTCONN = 107


def ok(msg):
    print("  ok: " + msg, flush=True)


def chunk(name, size):
    block = hashlib.sha256(name.encode()).digest() * 2048
    return (block * (size // len(block) + 1))[:size]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def podman(*args, check=True, timeout=120, capture=True):
    r = subprocess.run(["podman"] + list(args), capture_output=capture, text=True,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("podman %s failed (%d): %s" % (" ".join(args[:3]), r.returncode,
                                                              (r.stderr or "").strip()[-800:]))
    return r


def wait(cond, what, secs):
    deadline = time.time() + secs
    while True:
        got = cond()
        if got:
            return got
        if time.time() > deadline:
            raise AssertionError("timed out after %.0fs waiting for %s" % (secs, what))
        time.sleep(0.2)


def mounts_under(path):
    """(mount point, fs type) of every mount at or under `path`, from /proc/self/mountinfo."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            fstype = fields[fields.index("-") + 1]
            if point == path or point.startswith(path.rstrip("/") + "/"):
                out.append((point, fstype))
    return out


def fuse_mounts_under(path):
    return [p for p, t in mounts_under(path) if t.startswith("fuse")]


def live_mount(path):
    """True when `path` is a kvfs mount that answers (a dead one fails with ENOTCONN)."""
    if path not in fuse_mounts_under(path):
        return False
    try:
        os.listdir(path)
        return True
    except OSError:
        return False


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


class Node:
    """A directory standing for a node's root: hostPaths resolve under it."""

    def __init__(self, work):
        self.root = os.path.join(work, "node")
        os.makedirs(self.root)
        # A systemd host's / is shared; a Bidirectional volume needs its host path on a shared
        # mount, so the stand-in root is made one.
        subprocess.run(["mount", "--bind", self.root, self.root], check=True)
        subprocess.run(["mount", "--make-rshared", self.root], check=True)
        self.kvfs = self.path("/mnt/kvfs")  # the shared directory
        self.mnt = os.path.join(self.kvfs, "kv")  # the mount, inside it
        self.cache = self.path("/var/cache/kvfs")
        # What the DaemonSet's hostPath type DirectoryOrCreate makes; the cache private to root.
        os.makedirs(self.kvfs)
        os.makedirs(self.cache, mode=0o700)

    def path(self, host_path):
        return os.path.join(self.root, host_path.lstrip("/"))

    def cleanup(self):
        for point in sorted(fuse_mounts_under(self.root), reverse=True):
            subprocess.run(["umount", "-l", point], capture_output=True)
        subprocess.run(["umount", "-R", "-l", self.root], capture_output=True)


class Ctx:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.node = Node(work)
        self.store = dt.S3Store(prefix="kv")
        self.containers = []
        self.pods = []
        # Credentials reach the containers through a file only root reads, never argv.
        self.env_file = os.path.join(work, "credentials.env")
        fd = os.open(self.env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\n" % (
                self.store.access, self.store.secret))

    def store_opts(self):
        return "endpoint=%s,region=%s,addressing=path" % (self.store.endpoint, self.store.region)

    def run_kvfs(self, name, cache_volume, extra_opts=""):
        """kvfs in a privileged container, as docs/kubernetes.md's DaemonSet runs it, mounting
        the bucket at NODE/mnt/kvfs/kv. `cache_volume`: podman arguments placing the cache."""
        cmd = ("mkdir -p /mnt/kvfs/kv; exec kvfs -f %s /mnt/kvfs/kv -o %s,cache_dir=/var/cache/kvfs"
               "%s" % (self.store.source, self.store_opts(), extra_opts))
        podman("run", "-d", "--name", name, "--privileged", "--network", "host",
               "--env-file", self.env_file, "-v", self.node.kvfs + ":/mnt/kvfs:rshared",
               *cache_volume, "--entrypoint", "sh", self.args.kvfs_image, "-c", cmd)
        self.containers.append(name)
        wait(lambda: live_mount(self.node.mnt) or not running(name),
             "kvfs in container %s to mount" % name, 30)
        assert running(name), "container %s exited: %s" % (name, logs(name)[-1500:])
        ok("%s: kvfs mounted the bucket; the node sees %s" % (name, self.node.mnt))

    def engine(self, name, *argv, detach=False):
        """The engine container: no privileges, no network, the shared directory its only volume
        (HostToContainer: rslave, so mounts made later on the node reach it)."""
        args = ["run", "--name", name, "--cap-drop", "all", "--security-opt", "no-new-privileges",
                "--network", "none", "-v", self.node.kvfs + ":/mnt/kvfs:rslave"]
        args += ["-d"] if detach else []
        self.containers.append(name)
        return podman(*args, self.args.engine_image, *argv, check=False, timeout=300)

    def cleanup(self):
        for pod in self.pods:
            podman("kube", "down", pod, check=False, timeout=180)
        for c in self.containers:
            podman("rm", "-f", "-t", "5", c, check=False, timeout=60)
        self.node.cleanup()
        self.store.cleanup()


def running(name):
    r = podman("inspect", "-f", "{{.State.Running}}", name, check=False)
    return r.returncode == 0 and r.stdout.strip() == "true"


def logs(name):
    r = podman("logs", name, check=False)
    return (r.stdout or "") + (r.stderr or "")


def uploaded(ctx, keys):
    """The bucket's objects once every key is among them (within a minute)."""
    def have():
        objects = ctx.store.objects()
        return objects if all(k in objects for k in keys) else None
    return wait(have, "%d chunks in the bucket" % len(keys), 60) if keys else {}


def in_store(ctx, names_sizes, subdir):
    """Every (name, size) is an object with the chunk's bytes (sha-256 checked), once the uploads
    kvfs accepted them for have ended (write_back, the default: a close returns before its
    upload; a kvfs killed meanwhile uploads them when it starts again)."""
    objects = uploaded(ctx, [subdir + "/" + name for name, _ in names_sizes])
    for name, size in names_sizes:
        key = subdir + "/" + name
        assert key in objects, "%s is not in the bucket (%d objects)" % (key, len(objects))
        assert objects[key] == (size, sha(chunk(name, size))), "%s differs in the bucket" % key


# A writer in the engine container: stores 4 MiB chunks one after another and prints each name
# once its close() returned 0 (acknowledged), until the mount fails it.
WRITER = r"""
import hashlib, os, sys, time
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
def chunk(name, size):
    block = hashlib.sha256(name.encode()).digest() * 2048
    return (block * (size // len(block) + 1))[:size]
errors = 0
for i in range(100000):
    name = "c%05d.bin" % i
    try:
        with open(os.path.join(d, name), "wb") as f:
            f.write(chunk(name, 4 << 20))
        print("acked", name, flush=True)
    except OSError as e:
        print("error", name, e.errno, flush=True)
        errors += 1
        if errors >= 3:
            break
        time.sleep(0.2)
"""

# Reads chunks back in the engine container: prints "ok NAME" or "errno NAME N".
READER = r"""
import hashlib, os, sys
def chunk(name, size):
    block = hashlib.sha256(name.encode()).digest() * 2048
    return (block * (size // len(block) + 1))[:size]
d, size = sys.argv[1], int(sys.argv[2])
for name in sys.argv[3:]:
    try:
        with open(os.path.join(d, name), "rb") as f:
            got = f.read()
        print(("ok " if got == chunk(name, size) else "DIFFERENT ") + name, flush=True)
    except OSError as e:
        print("errno", name, e.errno, flush=True)
"""


def case_two_containers(ctx):
    ctx.run_kvfs("kvfs-a", ["-v", ctx.node.cache + ":/var/cache/kvfs"])
    r = ctx.engine("engine-a", "sh", "-c",
                   "python3 /opt/kvfs-test/lmcache_disk_replay.py /mnt/kvfs/kv"
                   " --manifest /tmp/m.json && echo MANIFEST && cat /tmp/m.json")
    assert r.returncode == 0, "engine replay in the engine container failed: %s" % (
        (r.stdout + r.stderr)[-2000:])
    manifest = json.loads(r.stdout.split("MANIFEST\n", 1)[1])
    ok("engine container (no capabilities, no network): engine replay passed, %d files left"
       % len(manifest["files"]))
    objects = uploaded(ctx, list(manifest["files"]))  # the uploads follow the closes
    for rel, digest in manifest["files"].items():
        assert rel in objects, "%s not in the bucket" % rel
        assert objects[rel][1] == digest, "%s differs in the bucket" % rel
    # The replay's os.remove() stays on the node (unlink_policy: local, the default): the object
    # stays in the bucket for the fleet, so `removed` is not checked here.
    ok("all %d chunks in the bucket, byte-exact (sha-256)" % len(manifest["files"]))
    engine_through_faults(ctx, "kvfs-a", restarts_itself=False)
    podman("stop", "-t", "60", "kvfs-a", timeout=120)
    assert not fuse_mounts_under(ctx.node.root), "mount left: %s" % mounts_under(ctx.node.root)
    assert "unmounted /mnt/kvfs/kv" in logs("kvfs-a")
    ok("podman stop (SIGTERM): kvfs unmounted; no mount left on the node")
    podman("rm", "kvfs-a", "engine-a")
    ctx.containers = [c for c in ctx.containers if c not in ("kvfs-a", "engine-a")]


def engine_through_faults(ctx, kvfs_ctr, restarts_itself):
    """An engine container running throughout: chunks stored, kvfs killed -9 and started again,
    the engine container restarted."""
    r = ctx.engine("engine-k", "sleep", "infinity", detach=True)
    assert r.returncode == 0, r.stderr
    names = ["before-%d.bin" % i for i in range(4)]
    script = WRITER.replace("range(100000)", "range(4)").replace('"c%05d.bin" % i',
                                                                 '"before-%d.bin" % i')
    r = podman("exec", "engine-k", "python3", "-c", script, "/mnt/kvfs/kv/k", timeout=120)
    assert r.stdout.count("acked") == 4, r.stdout + r.stderr
    in_store(ctx, [(n, 4 * MIB) for n in names], "k")
    ok("engine container stored 4 chunks through the mount; they are in the bucket")

    if restarts_itself:
        # Killed from outside (as the OOM killer does), not through podman, whose kill counts as
        # the user's stop: the pod's restartPolicy (Always, a DaemonSet's) may start it again.
        pid = int(podman("inspect", "-f", "{{.State.Pid}}", kvfs_ctr).stdout)
        os.kill(pid, 9)
        deadline = time.time() + 20
        while time.time() < deadline and not running(kvfs_ctr):
            time.sleep(0.5)
        by = "the runtime (restartPolicy Always)"
        if not running(kvfs_ctr):
            podman("start", kvfs_ctr)  # the kubelet's part; podman without systemd may not
            by = "the test (podman start)"
        ok("kvfs killed -9; started again by %s" % by)
    else:
        podman("kill", "-s", "KILL", kvfs_ctr)
        wait(lambda: not running(kvfs_ctr), "kvfs to die", 30)
        assert fuse_mounts_under(ctx.node.mnt), "the killed daemon's mount is expected dead"
        t0 = time.time()
        r = podman("exec", "engine-k", "python3", "-c", READER, "/mnt/kvfs/kv/k", str(4 * MIB),
                   names[0], timeout=60)
        assert ("errno %s %d" % (names[0], ENOTCONN)) in r.stdout, r.stdout + r.stderr
        ok("kvfs killed -9: the engine container's read failed with ENOTCONN after %.1fs, no "
           "hang" % (time.time() - t0))
        podman("start", kvfs_ctr)
    # The new kvfs detaches the dead mount and mounts on the same directory.
    wait(lambda: live_mount(ctx.node.mnt), "the restarted kvfs to mount again", 60)
    assert len(fuse_mounts_under(ctx.node.mnt)) == 1, mounts_under(ctx.node.root)
    r = podman("exec", "engine-k", "python3", "-c", READER, "/mnt/kvfs/kv/k", str(4 * MIB),
               *names, timeout=120)
    assert r.stdout.count("ok ") == len(names), r.stdout + r.stderr
    ok("kvfs started again: mounted over the dead mount; the running engine container (not "
       "restarted) reads its 4 chunks byte-exact through the new mount")
    podman("restart", "-t", "1", "engine-k", timeout=120)
    r = podman("exec", "engine-k", "python3", "-c", READER, "/mnt/kvfs/kv/k", str(4 * MIB),
               *names, timeout=120)
    assert r.stdout.count("ok ") == len(names), r.stdout + r.stderr
    ok("engine container restarted: its chunks are still there, byte-exact")
    podman("rm", "-f", "-t", "1", "engine-k", timeout=60)
    ctx.containers.remove("engine-k")


def doc_yaml_blocks():
    text = open(DOC).read()
    blocks, inside, cur = [], False, []
    for line in text.splitlines():
        if line.strip() == "```yaml":
            inside, cur = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(cur))
        elif inside:
            cur.append(line)
    return blocks


def doc_pod(ctx):
    """The Pod docs/kubernetes.md's DaemonSet makes on a node: its template, as written, with
    the hostPaths moved under the stand-in node root. What podman cannot express is listed."""
    docs = [d for b in doc_yaml_blocks() for d in yaml.safe_load_all(b) if d]
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    assert len(ds) == 1, "docs/kubernetes.md must hold one DaemonSet"
    tmpl = ds[0]["spec"]["template"]
    spec = json.loads(json.dumps(tmpl["spec"]))
    for v in spec["volumes"]:
        hp = v.get("hostPath")
        if hp and hp["path"] != "/dev/fuse":
            hp["path"] = ctx.node.path(hp["path"])
    # Not expressible here (said by the test, not hidden): nodeSelector (one node, no
    # scheduler); the pod network (the test RGW listens on the host's loopback: --network host,
    # where podman refuses port mappings, and the metrics port is the host's own).
    unsupported = sorted(k for k in ("nodeSelector",) if k in spec)
    for k in unsupported:
        del spec[k]
    for c in spec["containers"]:
        if c.pop("ports", None) is not None:
            unsupported.append("ports (host network)")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": ds[0]["metadata"]["name"], "labels": tmpl["metadata"]["labels"],
                        "annotations": tmpl["metadata"].get("annotations", {})},
           "spec": spec}
    cms = [d for d in docs if d.get("kind") == "ConfigMap"]
    return pod, cms, unsupported


def case_kube_play(ctx):
    pod, cms, unsupported = doc_pod(ctx)
    c = pod["spec"]["containers"][0]
    assert any(m.get("mountPropagation") == "Bidirectional" for m in c["volumeMounts"])
    assert c["securityContext"].get("privileged") is True
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # The ConfigMap of the document, pointed at the test bucket (its source and endpoint are
    # AWS's); every other key as written.
    cfg = yaml.safe_load(cms[0]["data"]["kvfs.yaml"])
    cfg.update({"source": ctx.store.source, "endpoint": ctx.store.endpoint,
                "region": ctx.store.region, "addressing": "path"})
    cm = json.loads(json.dumps(cms[0]))
    cm["data"]["kvfs.yaml"] = yaml.safe_dump(cfg)
    cm["metadata"].pop("namespace", None)
    pod_file = os.path.join(ctx.work, "kvfs-pod.yaml")
    with open(pod_file, "w") as f:
        yaml.safe_dump_all([pod], f)
    cm_file = os.path.join(ctx.work, "kvfs-config.yaml")
    with open(cm_file, "w") as f:
        yaml.safe_dump(cm, f)
    # The Secret of the document (envFrom secretRef kvfs-credentials), as a podman secret.
    # podman 4.3 takes a secretRef's secret as a JSON map of base64 values (a Secret's data).
    b64 = lambda v: base64.b64encode(v.encode()).decode()  # noqa: E731
    secret = {"AWS_ACCESS_KEY_ID": b64(ctx.store.access),
              "AWS_SECRET_ACCESS_KEY": b64(ctx.store.secret)}
    podman("secret", "rm", "kvfs-credentials", check=False)
    r = subprocess.run(["podman", "secret", "create", "kvfs-credentials", "-"],
                       input=json.dumps(secret), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, "podman secret create: %s" % r.stderr
    podman("tag", ctx.args.kvfs_image, DOC_IMAGE)
    ctx.pods.append(pod_file)
    podman("kube", "play", "--replace", "--network", "host", "--configmap", cm_file, pod_file,
           timeout=180)
    kvfs_ctr = "%s-%s" % (pod["metadata"]["name"], c["name"])
    ok("podman kube play of the DaemonSet's pod from docs/kubernetes.md (not expressed: %s; "
       "--network host for the loopback RGW)" % (", ".join(unsupported) or "nothing"))
    wait(lambda: live_mount(ctx.node.mnt), "the pod's kvfs to mount " + ctx.node.mnt, 60)
    base = "http://127.0.0.1:%d" % METRICS_PORT
    code, body = wait(lambda: (lambda r: r if r[0] == 200 else None)(http_get(base + "/readyz")),
                      "/readyz 200", 30)
    assert http_get(base + "/healthz")[0] == 200
    ok("mounted on the node through Bidirectional propagation; /healthz 200, /readyz 200")
    # podman turns the liveness probe into a health check run inside the container (curl).
    r = podman("healthcheck", "run", kvfs_ctr, check=False)
    assert r.returncode == 0, "liveness probe as podman runs it failed: %s %s" % (r.stdout,
                                                                                 r.stderr)
    ok("the liveness probe (httpGet /healthz), run by podman in the container: healthy")

    engine_through_faults(ctx, kvfs_ctr, restarts_itself=True)

    # The pod deleted while chunks are being written, as the kubelet deletes it: SIGTERM, then
    # SIGKILL after the grace period (podman pod stop -t). Every acknowledged chunk is stored, the
    # node keeps no mount. (podman 4.3's own `kube down` sends SIGKILL at once - a forced
    # deletion, the kill -9 above - so the pod is stopped first, then taken down.)
    r = ctx.engine("writer-k", "python3", "-c", WRITER, "/mnt/kvfs/kv/inflight", detach=True)
    assert r.returncode == 0, r.stderr
    wait(lambda: logs("writer-k").count("acked") >= 8, "the writer to store 8 chunks", 60)
    grace = str(pod["spec"].get("terminationGracePeriodSeconds", 30))
    podman("pod", "stop", "-t", grace, pod["metadata"]["name"], timeout=300)
    podman("wait", "writer-k", timeout=60)  # the writer ends (errors), it does not hang
    out = logs("writer-k")
    acked = [ln.split()[1] for ln in out.splitlines() if ln.startswith("acked")]
    errors = [ln for ln in out.splitlines() if ln.startswith("error")]
    assert errors, "the writer saw no error after the pod went: %s" % out[-500:]
    left = fuse_mounts_under(ctx.node.root)
    assert not left, "mount left on the node after the pod stopped: %s" % left
    os.listdir(ctx.node.kvfs)  # the shared directory answers (no dead mount)
    assert "detached now" in logs(kvfs_ctr), logs(kvfs_ctr)[-800:]
    in_store(ctx, [(n, 4 * MIB) for n in acked], "inflight")
    podman("kube", "down", pod_file, timeout=180)
    ctx.pods.remove(pod_file)
    ok("pod stopped (SIGTERM, grace %ss) while writing: kvfs detached the mount at once, %d "
       "acknowledged chunks all in the bucket, the writer got errors (%s), no mount left on the "
       "node" % (grace, len(acked), errors[0]))


def hit_passthrough(ctx, name):
    """Writes a chunk through the node's view of the mount, reads it twice, returns the
    daemon's passthrough opens."""
    # One name per cache place: the bucket is shared, and a chunk name is its content.
    data = chunk("hit-" + name, 8 * MIB)
    with open(os.path.join(ctx.node.mnt, name + ".bin"), "wb") as f:
        f.write(data)
    # Stored, so the reads below are hits of the cache's entry (write_back: until its upload
    # ends the chunk is read from its spool).
    podman("exec", name, "kvfs", "sync", "/mnt/kvfs/kv", timeout=120)
    for _ in range(2):
        with open(os.path.join(ctx.node.mnt, name + ".bin"), "rb") as f:
            assert f.read() == data
    r = podman("exec", name, "kvfs", "stats", "/mnt/kvfs/kv")
    stats = {k: int(v) for k, v in (ln.split() for ln in r.stdout.splitlines() if ln.strip())}
    return stats["kvfs_read_passthrough_opens"]


CACHE_PLACES = [
    # (name, podman arguments, passthrough expected)
    ("overlay-root", [], False),
    ("host-dir", ["-v", "{cache}:/var/cache/kvfs"], True),
    ("tmpfs", ["--mount", "type=tmpfs,destination=/var/cache/kvfs,tmpfs-mode=0700"], True),
]


def case_cache_dirs(ctx):
    for place, vol, expect in CACHE_PLACES:
        name = "kvfs-cache-" + place
        ctx.run_kvfs(name, [a.format(cache=ctx.node.cache) for a in vol])
        n = hit_passthrough(ctx, name)
        text = logs(name)
        if expect:
            assert n >= 1, "%s: no passthrough hit (%d): %s" % (place, n, text[-800:])
            ok("cache on %s: hits are passthrough (%d passthrough opens)" % (place, n))
        else:
            assert n == 0, "%s: passthrough opens %d" % (place, n)
            assert "stacked file system" in text, "%s: the log does not say why: %s" % (
                place, text[-800:])
            line = [ln for ln in text.splitlines() if "passthrough refused" in ln][0]
            ok("cache on %s: no passthrough; the log says: %s" % (place, line.split("] ", 1)[1]))
        podman("stop", "-t", "30", name, timeout=90)
        assert not fuse_mounts_under(ctx.node.root)
        podman("rm", name)
        ctx.containers.remove(name)


CASES = [("two_containers", case_two_containers), ("kube_play", case_kube_play),
         ("cache_dirs", case_cache_dirs)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs-image", required=True)
    ap.add_argument("--engine-image", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    for tool in ("podman", "runc", "catatonit"):
        if not shutil.which(tool) and not os.path.exists("/usr/libexec/podman/" + tool):
            print("container_test: %s is missing (packaging/install-deps.sh --test)" % tool)
            return 1
    if not os.environ.get("KVFS_TEST_S3_ENDPOINT"):
        print("container_test: KVFS_TEST_S3_ENDPOINT is not set (tests/containers/run.sh)")
        return 1
    only = set(filter(None, args.only.split(",")))
    failed = []
    for name, fn in CASES:
        if only and name not in only:
            continue
        print("[%s]" % name, flush=True)
        work = tempfile.mkdtemp(prefix="kvfs-ctr-%s-" % name)
        t0 = time.time()
        ctx = None
        try:
            ctx = Ctx(args, work)
            fn(ctx)
            print("[%s] PASSED (%.1fs)" % (name, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report, clean up, go on
            traceback.print_exc()
            print("[%s] FAILED: %s" % (name, e), flush=True)
            failed.append(name)
        finally:
            if ctx is not None:
                ctx.cleanup()
            shutil.rmtree(work, ignore_errors=True)
    print("container_test: %s" % ("FAILED: " + ", ".join(failed) if failed else "PASSED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
