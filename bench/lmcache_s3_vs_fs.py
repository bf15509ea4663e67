#!/usr/bin/env python3
"""LMCache 0.5.6's multiprocess `s3` L2 adapter straight to RGW beside its `fs` L2 adapter on a
kvfs mount of the same RGW (issue 27 point 3; the request flow: issue 43 item 1). One command; it
starts and stops everything itself.

usage: bench/lmcache_s3_vs_fs.py [--flow tasks|request] [--chunks 16] [--chunk-mib 32]
                                 [--threads 16] [--reps 5] [--miss-keys 256] [--miss-rounds 4]
                                 [--out FILE] [--json FILE]
                                 [--kvfs-variant NAME=OPT=V[:OPT=V...]]...

--kvfs-variant mounts kvfs with extra options as a system of its own, measured in the same run
(e.g. `kvfs-wbf=write_back=false`); default: one variant, `kvfs`, at the defaults.

What runs (the engine's own classes, installed by tests/engines/venv.sh, nothing of theirs copied):
  - a private RGW (tests/s3server/rgw.sh on its own ports and dir) whose rgw_dns_name makes
    `<bucket>.<dns name>` virtual-hosted style, which the s3 adapter needs; an /etc/hosts line
    (marked, removed at the end) points that host name at 127.0.0.1;
  - `S3L2Adapter` on bucket lmcb-s3 and `FSL2Adapter` on a kvfs mount of bucket lmcb-fs;
  - every measurement in a fresh engine process (a worker: this file with --worker under the
    venv's python) that waits on the adapter's event fds, as LMCache's own `lmcache bench l2`
    does. The s3 adapter gets `--threads` CRT I/O threads in both flows.

--flow tasks (the default; the rows of bench/RESULTS-lmcache-s3-vs-fs.md and RESULTS-write-back.md)
  submits the chunks as `--threads` tasks in flight (chunk i in task i mod threads), loads without
  a lookup first. Rows, per repetition (each repetition stores new keys):
  store            the chunks stored (kvfs: until the last close; the daemon's flush after that
                   is recorded as flush_s in the JSON lines)
  store, durable   kvfs: until the last close and then until the daemon holds no upload
                   accepted at a close (write_back; its kvfs_write_back_pending statistic): the
                   same point as the s3 adapter's store; CPU: the daemon's to that point
  cold load        s3: GETs; kvfs: remounted with an empty cache dir, page cache dropped
  load after kvfs restart (hits)
                   kvfs: remounted keeping its cache dir, page cache dropped: served from the
                   local cache; s3: the same GETs again (it has nothing to keep)
  second process   another process loads the same chunks at once, no restart: kvfs serves
                   them from its cache and the page cache; s3 GETs again
  negative lookups lookup_and_lock of --miss-keys never-stored keys, --miss-rounds times in one
                   process (lookups/s; CPU in ms per 1000 lookups)

--flow request: what LMCache's MP server does with one request's chunks (read in the venv:
  lmcache/v1/distributed/storage_controllers/store_controller.py, _process_new_keys and
  _submit_store_for_single_shape: the keys whose L1 write finished together, grouped by shape,
  go to each L2 adapter as ONE submit_store_task; prefetch_controller.py, _start_lookup_phase:
  ONE submit_lookup_and_lock_task of the request's keys per adapter, then _submit_load_tasks:
  ONE submit_load_task of the keys found, then submit_unlock of them). Both adapters run one
  task's keys their own way: the s3 one puts them all in flight, the fs one writes (and reads)
  them one file after another. Rows, per repetition (new keys each; cells are per request):
  store            one store task of all --chunks keys, to its end as the engine sees it
  store, durable   to the point where every chunk is an object in the bucket: ListObjectsV2 of
                   the keys' prefix polled every 20 ms from the task's end until all N names
                   are listed (s3: the task's end means stored, the listing checks it); CPU:
                   the engine's to the task's end plus the daemon's to that point. kvfs: the
                   time its write-back queue emptied (kvfs_write_back_pending 0) is in the JSON
                   lines beside it (pending_zero_seconds)
  lookup_and_lock  on a "fresh node": a new adapter in a new worker process; kvfs: a new mount
                   with an empty cache dir; page cache dropped: one lookup_and_lock task of the
                   N keys (s3: a HEAD each; fs: an exists() each)
  lookup + load    the same window on to the end of the one load task of the keys found
  Ratios kvfs/s3: per repetition (kvfs and s3 of the same repetition), median (min-max) over
  the repetitions; speed is s3's time / kvfs's time (the MiB/s ratio), CPU kvfs / s3.
CPU: utime+stime from /proc/PID/stat over the timed window, of the engine process plus (kvfs
side) the kvfs daemon. RGW's own CPU is not counted on either side.
"""
import argparse
import json
import os
import platform
import signal
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# The venv tests/engines/venv.sh builds (KVFS_ENGINE_VENV, as there).
VENV_PY = os.path.join(os.environ.get("KVFS_ENGINE_VENV", "/var/cache/kvfs/engines-venv"),
                       "bin", "python")
NO_VENV = 3  # exit status when the venv is missing: bench/run.sh then skips this step
KVFS_BIN = os.path.join(REPO, "build-release", "kvfs")
ACCESS_KEY = "TESTACCESSKEY0000001"
SECRET_KEY = "testsecretkey0000000000000000000000000001"
REGION = "us-east-1"
S3_BUCKET, FS_BUCKET, FS_PREFIX = "lmcb-s3", "lmcb-fs", "kv"
DNS_NAME = "kvfs-lmcbench.test"
HOSTS_MARK = "# kvfs bench/lmcache_s3_vs_fs.py"
MIB = 1 << 20
ROWS = [("store", "store"), ("store_durable", "store, durable"), ("load_cold", "cold load"),
        ("load_restart", "load after kvfs restart (hits)"),
        ("load_second", "second process"), ("lookup_miss", "negative lookups")]
REQUEST_ROWS = [("store", "store: the task's end"),
                ("store_durable", "store, durable: all N listed"),
                ("lookup", "lookup_and_lock (fresh node)"),
                ("lookup_load", "lookup + load (fresh node)")]
# The listing's poll period in the request flow: the durable point is known to this plus one
# LIST's latency; each LIST costs RGW CPU the uploads still in flight share.
LIST_POLL_S = 0.02


# ----------------------------------------------------------------------------------------------
# Worker: one engine process, one measurement. Runs under the LMCache venv's python.
# ----------------------------------------------------------------------------------------------

def proc_cpu(pid):
    """utime+stime of PID in seconds (all its threads), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def make_adapter(a):
    if a["adapter"] == "s3":
        from lmcache.v1.distributed.l2_adapters.s3_l2_adapter import (
            S3L2Adapter, S3L2AdapterConfig)
        return S3L2Adapter(S3L2AdapterConfig.from_dict({
            "s3_endpoint": a["s3_endpoint"], "s3_region": REGION, "disable_tls": True,
            "s3_prefer_http2": False, "s3_num_io_threads": a["threads"],
            "aws_access_key_id": ACCESS_KEY, "aws_secret_access_key": SECRET_KEY}))
    from lmcache.v1.distributed.l2_adapters.fs_l2_adapter import FSL2Adapter, FSL2AdapterConfig
    return FSL2Adapter(FSL2AdapterConfig.from_dict({"base_path": a["base_path"]}))


def run_tasks(adapter, mode, batches, timeout=600.0):
    """Submits every batch at once and waits for all; returns how many keys succeeded."""
    from lmcache.cli.commands.bench.l2_adapter_bench.data import wait_eventfd
    from lmcache.v1.distributed.api import MemoryLayoutDesc
    if mode == "store":
        ids = {adapter.submit_store_task(k, o): len(k) for k, o in batches}
        done, efd = {}, adapter.get_store_event_fd()
        while len(done) < len(ids):
            if not wait_eventfd(efd, timeout):
                raise TimeoutError(f"store: {len(done)}/{len(ids)} tasks after {timeout} s")
            done.update(adapter.pop_completed_store_tasks())
        return sum(ids[t] for t, r in done.items() if r.is_successful())
    if mode == "load":
        ids = [adapter.submit_load_task(k, o) for k, o in batches]
        efd, query = adapter.get_load_event_fd(), adapter.query_load_result
    else:
        layout = {0: MemoryLayoutDesc(shapes=[], dtypes=[])}
        ids = [adapter.submit_lookup_and_lock_task(k, layout) for k, _ in batches]
        efd, query = adapter.get_lookup_and_lock_event_fd(), adapter.query_lookup_and_lock_result
    pending, found = set(ids), 0
    while pending:
        if not wait_eventfd(efd, timeout):
            raise TimeoutError(f"{mode}: {len(pending)} of {len(ids)} tasks pending")
        for t in list(pending):
            bm = query(t)
            if bm is not None:
                found += bm.popcount()
                pending.discard(t)
    return found


def worker(a):
    if a.get("flow") == "request":
        return request_worker(a)
    from lmcache.cli.commands.bench.l2_adapter_bench.data import (
        make_aligned_tensor, make_memory_objects, make_object_keys)
    n, size, thr, mode = a["chunks"], a["chunk_bytes"], a["threads"], a["mode"]
    adapter = make_adapter(a)
    try:
        if mode == "lookup_miss":
            n = a["miss_keys"]
            keys = make_object_keys(n, a["model"])
            objs = [None] * n
        else:
            buf = make_aligned_tensor(n * size, align_bytes=4096)
            keys = make_object_keys(n, a["model"])
            objs = make_memory_objects(buf, n, size, 0)  # chunk i filled with i & 0xff
            if mode == "load":
                buf.zero_()
        batches = [(keys[i::thr], objs[i::thr]) for i in range(min(thr, n))]
        rounds = a["miss_rounds"] if mode == "lookup_miss" else 1
        daemon = a.get("daemon_pid")
        c0, d0, t0 = proc_cpu(os.getpid()), daemon and proc_cpu(daemon), time.perf_counter()
        ok = sum(run_tasks(adapter, "store" if mode == "store" else
                           "lookup" if mode == "lookup_miss" else "load", batches)
                 for _ in range(rounds))
        t1, c1, d1 = time.perf_counter(), proc_cpu(os.getpid()), daemon and proc_cpu(daemon)
        t2, d2 = t1, d1
        if mode == "store" and daemon:
            # Until the daemon holds no upload accepted at a close (write_back): the point where
            # the s3 adapter's store ends. The daemon's statistics are an xattr of the mount root.
            while True:
                stats = dict(ln.split() for ln in os.getxattr(
                    a["base_path"], "user.kvfs.stats").decode().splitlines() if ln.strip())
                if int(stats.get("kvfs_write_back_pending", 0)) == 0:
                    break
                time.sleep(0.002)
            t2, d2 = time.perf_counter(), proc_cpu(daemon)
        bad = 0
        if mode == "load":
            for i, o in enumerate(objs):
                if not bool((o.raw_data == (i & 0xFF)).all()):
                    bad += 1
        out = {"ok": ok, "expected": 0 if mode == "lookup_miss" else n, "verify_errors": bad,
               "seconds": t1 - t0, "engine_cpu_s": c1 - c0,
               "daemon_cpu_s": (d1 - d0) if daemon and d0 is not None and d1 is not None
               else 0.0, "ops": n * rounds, "bytes": 0 if mode == "lookup_miss" else n * size,
               "durable_seconds": t2 - t0,
               "durable_daemon_cpu_s": (d2 - d0) if daemon and d0 is not None and d2 is not None
               else 0.0}
    finally:
        adapter.close()
    print("RESULT " + json.dumps(out), flush=True)


def write_back_pending(base_path):
    """The daemon's kvfs_write_back_pending: its statistics are an xattr of the mount root."""
    stats = dict(ln.split() for ln in os.getxattr(
        base_path, "user.kvfs.stats").decode().splitlines() if ln.strip())
    return int(stats.get("kvfs_write_back_pending", 0))


def bucket_lister(a, keys):
    """(list(), names): list() returns the object names under the keys' prefix, names the ones
    the N keys become in the bucket - the adapters' own key-to-name functions, so a change of
    naming in LMCache cannot make the listing look complete or never complete."""
    import xml.etree.ElementTree as ET
    import s3util  # bench/, beside this file (sys.path[0])
    os.environ.update(S3_ENDPOINT=a["list_endpoint"], AWS_ACCESS_KEY_ID=ACCESS_KEY,
                      AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION=REGION)
    s3 = s3util.S3()
    if a["adapter"] == "s3":
        from lmcache.v1.distributed.l2_adapters.s3_l2_adapter import _object_key_to_string
        bucket, names = S3_BUCKET, {_object_key_to_string(k) for k in keys}
    else:
        from lmcache.v1.distributed.l2_adapters.fs_l2_adapter import _object_key_to_filename
        bucket = FS_BUCKET
        names = {f"{FS_PREFIX}/{_object_key_to_filename(k)}" for k in keys}
    # Every repetition's keys share the model name up to its "@": one prefix lists only this
    # one's (the bucket keeps every repetition's chunks).
    prefix = os.path.commonprefix(sorted(names))
    prefix = prefix[:prefix.index("@") + 1] if "@" in prefix else prefix

    def listing():
        return s3.list_keys(bucket, prefix)
    return listing, names


def lookup_task(adapter, keys, timeout=600.0):
    """One lookup_and_lock task of KEYS; the indices of the keys found (and locked)."""
    from lmcache.cli.commands.bench.l2_adapter_bench.data import wait_eventfd
    from lmcache.v1.distributed.api import MemoryLayoutDesc
    tid = adapter.submit_lookup_and_lock_task(keys, {0: MemoryLayoutDesc(shapes=[], dtypes=[])})
    efd = adapter.get_lookup_and_lock_event_fd()
    while True:
        if not wait_eventfd(efd, timeout):
            raise TimeoutError(f"lookup of {len(keys)} keys pending after {timeout} s")
        bm = adapter.query_lookup_and_lock_result(tid)
        if bm is not None:
            return bm.get_indices_list()


def request_worker(a):
    """--flow request: one request's chunks as the MP server hands them to one L2 adapter."""
    from lmcache.cli.commands.bench.l2_adapter_bench.data import (
        make_aligned_tensor, make_memory_objects, make_object_keys)
    n, size, mode, daemon = a["chunks"], a["chunk_bytes"], a["mode"], a.get("daemon_pid")
    adapter = make_adapter(a)

    def cpu():
        return proc_cpu(os.getpid()), daemon and proc_cpu(daemon)

    def diff(x1, x0):
        return (x1 - x0) if x0 is not None and x1 is not None else 0.0
    try:
        buf = make_aligned_tensor(n * size, align_bytes=4096)
        keys = make_object_keys(n, a["model"])
        objs = make_memory_objects(buf, n, size, 0)  # chunk i filled with i & 0xff
        out = {"ok": 0, "expected": n, "verify_errors": 0, "ops": n, "bytes": n * size}
        if mode == "store":
            listing, names = bucket_lister(a, keys)
            (c0, d0), t0 = cpu(), time.perf_counter()
            ok = run_tasks(adapter, "store", [(keys, objs)])
            t1, (c1, d1) = time.perf_counter(), cpu()
            # The durable point: every chunk an object in the bucket, by the bucket's listing,
            # whatever the adapter or the daemon says. kvfs: its write-back queue's end too, to
            # compare with (write_back accepts a close before the upload).
            listed, first, t2, d2, tp, queued = set(), None, None, None, None, None
            deadline = t1 + 600.0
            while time.perf_counter() < deadline:
                if daemon and tp is None:
                    pending = write_back_pending(a["base_path"])
                    queued = pending if queued is None else queued
                    if pending == 0:
                        tp = time.perf_counter()
                if t2 is None:
                    listed |= names.intersection(listing())
                    first = len(listed) if first is None else first
                    if len(listed) == n:
                        t2, d2 = time.perf_counter(), daemon and proc_cpu(daemon)
                if t2 is not None and (tp is not None or not daemon):
                    break
                time.sleep(LIST_POLL_S)
            out.update(ok=ok, seconds=t1 - t0, engine_cpu_s=c1 - c0, daemon_cpu_s=diff(d1, d0),
                       listed=len(listed), listed_first_poll=first,
                       durable_seconds=(t2 - t0) if t2 is not None else None,
                       durable_daemon_cpu_s=diff(d2, d0) if t2 is not None else None,
                       pending_at_task_end=queued,
                       pending_zero_seconds=(tp - t0) if tp is not None else None)
        else:
            buf.zero_()
            (c0, d0), t0 = cpu(), time.perf_counter()
            hit = lookup_task(adapter, keys)
            tl, (cl, dl) = time.perf_counter(), cpu()
            hk, ho = [keys[i] for i in hit], [objs[i] for i in hit]
            ok = run_tasks(adapter, "load", [(hk, ho)]) if hit else 0
            adapter.submit_unlock(hk)  # as the prefetch controller does once the load is done
            t1, (c1, d1) = time.perf_counter(), cpu()
            out.update(ok=ok, found=len(hit), seconds=t1 - t0, engine_cpu_s=c1 - c0,
                       daemon_cpu_s=diff(d1, d0), lookup_seconds=tl - t0,
                       lookup_engine_cpu_s=cl - c0, lookup_daemon_cpu_s=diff(dl, d0),
                       verify_errors=sum(not bool((objs[i].raw_data == (i & 0xFF)).all())
                                         for i in hit))
    finally:
        adapter.close()
    print("RESULT " + json.dumps(out), flush=True)


# ----------------------------------------------------------------------------------------------
# Orchestrator: RGW, hosts line, kvfs mounts, workers, table. python3 stdlib only.
# ----------------------------------------------------------------------------------------------

def log(msg):
    print(f"[lmcache_s3_vs_fs {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, o):
        self.o = o
        self.work = o.work or f"/tmp/kvfs-lmcbench-{os.getpid()}"
        self.mnt = os.path.join(self.work, "mnt")
        self.cache = os.path.join(self.work, "cache")
        self.rgw_env = dict(os.environ, KVFS_CEPH_DIR=os.path.join(self.work, "ceph"),
                            KVFS_RGW_PORT=str(o.rgw_port), KVFS_MON_PORT_V2=str(o.mon_port_v2),
                            KVFS_MON_PORT_V1=str(o.mon_port_v1), KVFS_RGW_DNS_NAME=DNS_NAME,
                            KVFS_RGW_ACCESS_KEY=ACCESS_KEY, KVFS_RGW_SECRET_KEY=SECRET_KEY,
                            KVFS_MEMSTORE_BYTES=str(self.memstore_bytes()))
        self.endpoint = f"http://127.0.0.1:{o.rgw_port}"
        self.s3_env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY,
                           AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_REGION=REGION,
                           S3_ENDPOINT=self.endpoint)
        self.daemon = None
        self.rgw_started = self.hosts_added = False
        self.records = []

    def memstore_bytes(self):
        o = self.o
        # Each system (s3, each kvfs variant) keeps every repetition's chunks.
        need = (1 + len(o.variants)) * o.reps * o.chunks * o.chunk_mib * MIB + (2 << 30)
        return max(8 << 30, need)

    # --- setup and teardown ---
    def start(self):
        os.makedirs(self.mnt, exist_ok=True)
        log(f"starting a private RGW on 127.0.0.1:{self.o.rgw_port} (dns name {DNS_NAME})")
        self.rgw_started = True
        r = subprocess.run([os.path.join(REPO, "tests/s3server/rgw.sh"), "start"],
                           env=self.rgw_env, capture_output=True, text=True)
        sys.stderr.write(r.stdout + r.stderr)
        if r.returncode != 0:
            raise RuntimeError("rgw.sh start failed")
        with open("/etc/hosts", "rb") as f:
            text = f.read()
        with open("/etc/hosts", "a") as f:
            sep = "" if not text or text.endswith(b"\n") else "\n"
            f.write(f"{sep}127.0.0.1 {S3_BUCKET}.{DNS_NAME} {HOSTS_MARK} {os.getpid()}\n")
        self.hosts_added = True
        # A fresh RGW is slow on its first writes (pools come up): not for the first row to pay.
        subprocess.run([sys.executable, os.path.join(HERE, "s3util.py"), "warmup", "lmcb-warmup"],
                       env=self.s3_env, check=True)
        for b in (S3_BUCKET, FS_BUCKET):
            subprocess.run([sys.executable, os.path.join(HERE, "s3util.py"), "mb", b],
                           env=self.s3_env, check=True)

    def cleanup(self):
        try:
            self.unmount()
        except Exception as e:  # keep going: the RGW and the hosts line must go too
            log(f"unmount: {e}")
        if self.hosts_added:
            mark = f"{HOSTS_MARK} {os.getpid()}"
            with open("/etc/hosts") as f:
                lines = f.readlines()
            with open("/etc/hosts", "w") as f:
                f.writelines(ln for ln in lines if not ln.rstrip("\n").endswith(mark))
            self.hosts_added = False
        if self.rgw_started:
            subprocess.run([os.path.join(REPO, "tests/s3server/rgw.sh"), "stop"],
                           env=self.rgw_env, capture_output=True)
            self.rgw_started = False
        if not self.o.keep:
            shutil.rmtree(self.work, ignore_errors=True)

    # --- kvfs ---
    def mount(self, wipe_cache, extra=""):
        if wipe_cache:
            shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.cache, exist_ok=True)
        opts = (f"endpoint={self.endpoint},region={REGION},addressing=path,"
                f"cache_dir={self.cache}" + (f",{extra}" if extra else ""))
        logf = open(os.path.join(self.work, "kvfs.log"), "a")
        self.daemon = subprocess.Popen(
            [self.o.kvfs, "-f", f"s3://{FS_BUCKET}/{FS_PREFIX}", self.mnt, "-o", opts],
            env=self.s3_env, stdout=logf, stderr=logf)
        logf.close()
        for _ in range(240):
            if os.path.ismount(self.mnt):
                return
            if self.daemon.poll() is not None:
                break
            time.sleep(0.25)
        raise RuntimeError(f"kvfs did not mount (log: {self.work}/kvfs.log)")

    def unmount(self):
        """Unmounts and waits for the daemon to exit (it may still be uploading); seconds."""
        if self.daemon is None:
            return 0.0
        t0 = time.perf_counter()
        if os.path.ismount(self.mnt):
            subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True)
        try:
            self.daemon.wait(timeout=300)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()
        if os.path.ismount(self.mnt):
            subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        self.daemon = None
        return time.perf_counter() - t0

    def drop_caches(self):
        if self.o.no_drop_caches:
            return
        try:
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        except OSError as e:
            log(f"cannot drop the page cache ({e}); hit rows may be served from RAM")
            self.o.no_drop_caches = True

    # --- one measurement ---
    def run(self, system, rep, phase, mode, model, json_line=True):
        o = self.o
        a = {"mode": mode, "chunks": o.chunks, "chunk_bytes": o.chunk_mib * MIB,
             "threads": o.threads, "model": model, "miss_keys": o.miss_keys,
             "miss_rounds": o.miss_rounds, "flow": o.flow, "list_endpoint": self.endpoint}
        if system == "s3":
            a.update(adapter="s3", s3_endpoint=f"{S3_BUCKET}.{DNS_NAME}:{o.rgw_port}")
        else:
            a.update(adapter="fs", base_path=self.mnt, daemon_pid=self.daemon.pid)
        r = subprocess.run([o.python, os.path.abspath(__file__), "--worker", json.dumps(a)],
                           capture_output=True, text=True, timeout=1800)
        res = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
        if r.returncode != 0 or not res:
            sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
            raise RuntimeError(f"{system} {phase} rep {rep}: worker failed ({r.returncode})")
        rec = dict(json.loads(res[-1][7:]), system=system, rep=rep, phase=phase, flow=o.flow)
        if rec["ok"] != rec["expected"] or rec["verify_errors"]:
            rec["note"] = (f"{rec['ok']} of {rec['expected']} keys succeeded, "
                           f"{rec['verify_errors']} wrong")
            log(f"{system} {phase} rep {rep}: {rec['note']}")
        self.records.append(rec)
        if json_line:
            self.json_line(rec)
        return rec

    def json_line(self, rec):
        if self.o.json:
            with open(self.o.json, "a") as f:
                f.write(json.dumps(rec) + "\n")

    def rep(self, r):
        """One repetition; odd ones run kvfs first, so neither side always meets RGW first."""
        model = f"lmcb-{os.getpid()}-r{r}"
        miss = f"lmcb-miss-{os.getpid()}-r{r}"
        if self.o.flow == "request":
            sides = [lambda: self.request_s3(r, model)]
            for name, extra in self.o.variants:
                sides.append(lambda name=name, extra=extra:
                             self.request_kvfs(r, model + "-" + name, name, extra))
        else:
            sides = [lambda: self.rep_s3(r, model, miss)]
            for name, extra in self.o.variants:
                sides.append(lambda name=name, extra=extra:
                             self.rep_kvfs(r, model + "-" + name, miss + "-" + name, name, extra))
        for side in sides if r % 2 == 0 else reversed(sides):
            side()

    def rep_s3(self, r, model, miss):
        log(f"rep {r}: s3 adapter")
        self.run("s3", r, "store", "store", model)
        self.drop_caches()
        self.run("s3", r, "load_cold", "load", model)
        self.drop_caches()
        self.run("s3", r, "load_restart", "load", model)
        self.run("s3", r, "load_second", "load", model)
        self.run("s3", r, "lookup_miss", "lookup_miss", miss)

    def rep_kvfs(self, r, model, miss, name="kvfs", extra=""):
        log(f"rep {r}: fs adapter on kvfs ({name}: {extra or 'defaults'})")
        self.mount(wipe_cache=True, extra=extra)
        rec = self.run(name, r, "store", "store", model)
        rec["flush_s"] = self.unmount()
        durable = dict(rec, phase="store_durable", seconds=rec["durable_seconds"],
                       daemon_cpu_s=rec["durable_daemon_cpu_s"])
        self.records.append(durable)
        self.drop_caches()
        self.mount(wipe_cache=True, extra=extra)
        self.run(name, r, "load_cold", "load", model)
        self.unmount()
        self.drop_caches()
        self.mount(wipe_cache=False, extra=extra)
        self.run(name, r, "load_restart", "load", model)
        self.run(name, r, "load_second", "load", model)
        self.run(name, r, "lookup_miss", "lookup_miss", miss)
        self.unmount()

    # --- --flow request: one store task, then lookup_and_lock + one load task on a fresh node ---
    def request_rows(self, store, load):
        """The rows the request's two records give beside their own (not in the JSON lines:
        their fields are there), and the two records' JSON lines, once flush_s is known."""
        if store["durable_seconds"] is None:
            store["note"] = (store.get("note", "") + f" only {store['listed']} of "
                             f"{store['expected']} listed 600 s after the task's end").strip()
            log(f"{store['system']} store rep {store['rep']}: {store['note']}")
        self.json_line(store)
        self.json_line(load)
        if store["durable_seconds"] is not None:
            self.records.append(dict(store, phase="store_durable",
                                     seconds=store["durable_seconds"],
                                     daemon_cpu_s=store["durable_daemon_cpu_s"]))
        self.records.append(dict(load, phase="lookup", seconds=load["lookup_seconds"],
                                 engine_cpu_s=load["lookup_engine_cpu_s"],
                                 daemon_cpu_s=load["lookup_daemon_cpu_s"]))

    def request_s3(self, r, model):
        log(f"rep {r}: s3 adapter, one request")
        store = self.run("s3", r, "store", "store", model, json_line=False)
        self.drop_caches()  # nothing of s3's is in it; both sides load from the same state
        self.request_rows(store, self.run("s3", r, "lookup_load", "load", model, json_line=False))

    def request_kvfs(self, r, model, name, extra):
        log(f"rep {r}: fs adapter on kvfs ({name}: {extra or 'defaults'}), one request")
        self.mount(wipe_cache=True, extra=extra)
        store = self.run(name, r, "store", "store", model, json_line=False)
        store["flush_s"] = self.unmount()  # after the durable point: what is left at unmount
        self.drop_caches()
        self.mount(wipe_cache=True, extra=extra)  # the fresh node: empty cache, new daemon
        load = self.run(name, r, "lookup_load", "load", model, json_line=False)
        self.unmount()
        self.request_rows(store, load)


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------

def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for ln in f:
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        ram = int(f.readline().split()[1]) // 1024
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    return {"cpu": cpu, "nproc": os.cpu_count(), "ram_mib": ram, "kernel": platform.release(),
            "loadavg_start": load, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def cell(vals, digits=2):
    if not vals:
        return "-"
    med, lo, hi = statistics.median(vals), min(vals), max(vals)
    f = (lambda x: f"{x:.0f}") if med >= 100 else (lambda x: f"{x:.{digits}f}")
    return f(med) if len(vals) == 1 or lo == hi else f"{f(med)} ({f(lo)}-{f(hi)})"


def ratio_cell(vals):
    """Per-repetition ratios: median x (min-max)."""
    if not vals:
        return "-"
    med, lo, hi = statistics.median(vals), min(vals), max(vals)
    return f"{med:.2f}x" + ("" if len(vals) == 1 or lo == hi else f" ({lo:.2f}-{hi:.2f})")


def metrics(rec):
    """(throughput, cpu) of one record: MiB/s and CPU s/GiB, or lookups/s and CPU ms/1000."""
    cpu = rec["engine_cpu_s"] + rec["daemon_cpu_s"]
    if rec["phase"] == "lookup_miss":
        return rec["ops"] / rec["seconds"], 1000.0 * cpu * 1000 / rec["ops"]
    return rec["bytes"] / MIB / rec["seconds"], cpu / (rec["bytes"] / (1 << 30))


def markdown(records, meta, o, command):
    out = ["# LMCache s3 L2 adapter vs fs L2 adapter on kvfs", "",
           f"- Date: {meta['date']}",
           f"- Machine: {meta['nproc']} cores, {meta['ram_mib']} MiB RAM, kernel "
           f"{meta['kernel']}, CPU {meta['cpu']}",
           f"- Load average at start: {' '.join(meta['loadavg_start'])}",
           f"- Workload: {o.chunks} chunks x {o.chunk_mib} MiB, {o.threads} tasks in flight "
           f"(s3: {o.threads} CRT I/O threads), {o.reps} repetition(s); negative lookups: "
           f"{o.miss_keys} keys x {o.miss_rounds} rounds",
           "- LMCache 0.5.6 `S3L2Adapter` (virtual-hosted, HTTP/1.1, no TLS) to a private RGW; "
           "`FSL2Adapter` on a kvfs mount of the same RGW "
           + ("(page cache NOT dropped)" if o.no_drop_caches
              else "(page cache dropped before loads)"),
           "", "Command:", "", "```", command, "```", ""]
    load = float(meta["loadavg_start"][0])
    if o.reps < 3 or load > 0.5 * (meta["nproc"] or 1):
        out += [f"**Not a full run:** {o.reps} repetition(s), load {load} on {meta['nproc']} "
                "cores: a smoke test, not a result.", ""]
    out += ["Cells: median over the repetitions (min-max). CPU: engine process + kvfs daemon "
            "(utime+stime); RGW not counted. Negative lookups: lookups/s and CPU ms per 1000 "
            "lookups.", "",
            "| row | system | MiB/s | ratio to s3 | CPU s/GiB | ratio to s3 |",
            "| --- | --- | --- | --- | --- | --- |"]
    names = [n for n, _ in o.variants]
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    ratio = lambda a, b: f"{a / b:.2f}x" if a is not None and b else "-"  # noqa: E731
    for ph, label in ROWS:
        if ph == "lookup_miss":
            label += " (lookups/s; CPU ms/1000)"
        base = [metrics(r) for r in records if r["system"] == "s3" and
                r["phase"] == ("store" if ph == "store_durable" else ph)]
        btp, bcpu = [x[0] for x in base], [x[1] for x in base]
        if ph != "store_durable":
            out.append(f"| {label} | s3 | {cell(btp)} | | {cell(bcpu)} | |")
        for n in names:
            v = [metrics(r) for r in records if r["system"] == n and r["phase"] == ph]
            tp, cpu = [x[0] for x in v], [x[1] for x in v]
            out.append(f"| {label} | {n} | {cell(tp)} | {ratio(med(tp), med(btp))} | "
                       f"{cell(cpu)} | {ratio(med(cpu), med(bcpu))} |")
    for n in names:
        daemon = [r["daemon_cpu_s"] / max(1e-9, r["engine_cpu_s"] + r["daemon_cpu_s"])
                  for r in records if r["system"] == n and r["phase"] != "store_durable"]
        flush = [r["flush_s"] for r in records
                 if r["system"] == n and r["phase"] == "store" and "flush_s" in r]
        out += ["", f"{n}: the daemon's share of the CPU: median {cell(daemon)}; flush after the "
                f"last close (unmount to daemon exit): {cell(flush)} s."]
    notes = sorted({f"{r['system']} {r['phase']}: {r['note']}" for r in records if r.get("note")})
    if notes:
        out += ["", "Problems:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def markdown_request(records, meta, o, command):
    """--flow request: per request, times and CPU; kvfs/s3 ratios per repetition."""
    out = ["# LMCache s3 L2 adapter vs fs L2 adapter on kvfs: one request's flow", "",
           f"- Date: {meta['date']}",
           f"- Machine: {meta['nproc']} cores, {meta['ram_mib']} MiB RAM, kernel "
           f"{meta['kernel']}, CPU {meta['cpu']}",
           f"- Load average at start: {' '.join(meta['loadavg_start'])}",
           f"- Workload: one request of {o.chunks} chunks x {o.chunk_mib} MiB, as LMCache's MP "
           "server runs it: ONE store task of all its keys; then, on a fresh node (new engine "
           "process; kvfs: new mount, empty cache dir), ONE lookup_and_lock task and ONE load "
           f"task of the keys found; s3: {o.threads} CRT I/O threads; {o.reps} repetition(s)",
           "- LMCache 0.5.6 `S3L2Adapter` (virtual-hosted, HTTP/1.1, no TLS) to a private RGW; "
           "`FSL2Adapter` on a kvfs mount of the same RGW "
           + ("(page cache NOT dropped)" if o.no_drop_caches
              else "(page cache dropped before the load)"),
           f"- Durable: ListObjectsV2 of the keys' prefix every {LIST_POLL_S * 1000:.0f} ms from "
           "the task's end until all N objects are listed",
           "", "Command:", "", "```", command, "```", ""]
    load = float(meta["loadavg_start"][0])
    if o.reps < 3 or load > 0.5 * (meta["nproc"] or 1):
        out += [f"**Not a full run:** {o.reps} repetition(s), load {load} on {meta['nproc']} "
                "cores: a smoke test, not a result.", ""]
    out += ["Cells: median over the repetitions (min-max). Time: ms per request. CPU: ms per "
            "request, engine process + kvfs daemon (utime+stime); RGW not counted; durable: the "
            "engine's to the task's end, the daemon's to the listing. Ratios: per repetition, "
            "kvfs against the s3 adapter of the same repetition; speed = s3 time / kvfs time "
            "(> 1: kvfs faster), CPU = kvfs / s3 (< 1: kvfs cheaper).", "",
            "| row | system | time ms | MiB/s | speed kvfs/s3 | CPU ms | CPU kvfs/s3 |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    names = [n for n, _ in o.variants]
    cpu = lambda r: r["engine_cpu_s"] + r["daemon_cpu_s"]  # noqa: E731
    for ph, label in REQUEST_ROWS:
        by = {(r["system"], r["rep"]): r for r in records if r["phase"] == ph}
        for n in ["s3"] + names:
            v = [r for (sy, _), r in sorted(by.items()) if sy == n]
            ms = cell([1000 * r["seconds"] for r in v])
            mibs = "-" if ph == "lookup" else cell([r["bytes"] / MIB / r["seconds"] for r in v])
            c = cell([1000 * cpu(r) for r in v])
            if n == "s3":
                out.append(f"| {label} | s3 | {ms} | {mibs} | | {c} | |")
                continue
            base = [(r, by[("s3", r["rep"])]) for r in v if ("s3", r["rep"]) in by]
            speed = [b["seconds"] / r["seconds"] for r, b in base]
            cr = [cpu(r) / cpu(b) for r, b in base if cpu(b) > 0]
            out.append(f"| {label} | {n} | {ms} | {mibs} | {ratio_cell(speed)} | {c} | "
                       f"{ratio_cell(cr)} |")
    out.append("")
    for n in ["s3"] + names:
        st = [r for r in records if r["system"] == n and r["phase"] == "store"]
        lst = [1000 * (r["durable_seconds"] - r["seconds"]) for r in st
               if r["durable_seconds"] is not None]
        first = [r["listed_first_poll"] for r in st if r["listed_first_poll"] is not None]
        line = (f"- {n}: all {o.chunks} listed {cell(lst)} ms after the task's end "
                f"(listed at the first poll: {cell(first, 0)})")
        queued = [r.get("pending_at_task_end") or 0 for r in st]
        pz = [1000 * (r["pending_zero_seconds"] - r["seconds"]) for r in st
              if r.get("pending_at_task_end") and r.get("pending_zero_seconds") is not None]
        if any(queued):
            line += (f"; at the task's end {cell(queued, 0)} uploads queued (write_back), the "
                     f"queue empty {cell(pz)} ms after it")
        elif n != "s3":
            line += "; no upload queued at the task's end"
        flush = [r["flush_s"] for r in st if "flush_s" in r]
        if flush:
            line += f"; unmount after that: {cell(flush)} s"
        daemon = [r["daemon_cpu_s"] / max(1e-9, cpu(r)) for r in records
                  if r["system"] == n and r["phase"] in ("store", "lookup_load")]
        if n != "s3":
            line += f"; the daemon's share of the CPU (store, lookup + load): {cell(daemon)}"
        out.append(line + ".")
    notes = sorted({f"{r['system']} {r['phase']}: {r['note']}" for r in records if r.get("note")})
    if notes:
        out += ["", "Problems:", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--flow", choices=("tasks", "request"), default="tasks",
                   help="tasks: --threads store/load tasks in flight, no lookup (the rows so "
                        "far); request: one store task of all chunks, then on a fresh node one "
                        "lookup_and_lock and one load task, as LMCache's MP server does")
    p.add_argument("--chunks", type=int, default=16)
    p.add_argument("--chunk-mib", type=int, default=32)
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--miss-keys", type=int, default=256)
    p.add_argument("--miss-rounds", type=int, default=4)
    p.add_argument("--out", help="write the Markdown table here too")
    p.add_argument("--json", help="append one JSON line per measurement here")
    p.add_argument("--python", default=VENV_PY, help="the LMCache venv's python (%(default)s)")
    p.add_argument("--kvfs", default=KVFS_BIN, help="the kvfs daemon (%(default)s)")
    p.add_argument("--rgw-port", type=int, default=17580)
    p.add_argument("--mon-port-v2", type=int, default=13400)
    p.add_argument("--mon-port-v1", type=int, default=16889)
    p.add_argument("--work", help="scratch dir (default /tmp/kvfs-lmcbench-PID), removed at end")
    p.add_argument("--keep", action="store_true", help="keep the scratch dir (logs)")
    p.add_argument("--no-drop-caches", action="store_true",
                   help="do not drop the page cache before the load rows (needs root)")
    p.add_argument("--kvfs-variant", action="append", default=[], metavar="NAME=OPTS",
                   help="a kvfs mount with extra options (OPT=V joined by ':'), measured as its "
                        "own system; repeatable (default: kvfs= at the defaults)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    o = p.parse_args()
    o.variants = []
    for v in o.kvfs_variant or ["kvfs="]:
        name, _, extra = v.partition("=")
        o.variants.append((name, extra.replace(":", ",")))
    if o.worker:
        return worker(json.loads(o.worker))
    if os.geteuid() != 0:
        sys.exit("needs root: it edits /etc/hosts and drops the page cache")
    if not os.access(o.python, os.X_OK):
        print(f"{o.python} not found: build the engines' venv (tests/engines/venv.sh) or pass "
              "--python", file=sys.stderr)
        return NO_VENV
    if not os.access(o.kvfs, os.X_OK):
        sys.exit(f"{o.kvfs} not found: build it or pass --kvfs")
    command = " ".join([os.path.relpath(os.path.abspath(__file__), REPO)] + sys.argv[1:])
    meta = machine()
    b = Bench(o)

    def on_signal(sig, _frame):
        raise SystemExit(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        b.start()
        for r in range(o.reps):
            b.rep(r)
    finally:
        b.cleanup()
    md = (markdown_request if o.flow == "request" else markdown)(b.records, meta, o, command)
    print(md)
    if o.out:
        with open(o.out, "w") as f:
            f.write(md)


if __name__ == "__main__":
    sys.exit(main())
