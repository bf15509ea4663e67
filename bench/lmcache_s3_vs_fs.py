#!/usr/bin/env python3
"""LMCache 0.5.6's multiprocess `s3` L2 adapter straight to RGW beside its `fs` L2 adapter on a
kvfs mount of the same RGW (issue 27 point 3). One command; it starts and stops everything itself.

usage: bench/lmcache_s3_vs_fs.py [--chunks 16] [--chunk-mib 32] [--threads 16] [--reps 5]
                                 [--miss-keys 256] [--miss-rounds 4] [--out FILE] [--json FILE]
                                 [--kvfs-variant NAME=OPT=V[:OPT=V...]]...

--kvfs-variant mounts kvfs with extra options as a system of its own, measured in the same run
(e.g. `kvfs-wb=write_back=true`); default: one variant, `kvfs`, at the defaults.

What runs (the engine's own classes, installed by tests/engines/venv.sh, nothing of theirs copied):
  - a private RGW (tests/s3server/rgw.sh on its own ports and dir) whose rgw_dns_name makes
    `<bucket>.<dns name>` virtual-hosted style, which the s3 adapter needs; an /etc/hosts line
    (marked, removed at the end) points that host name at 127.0.0.1;
  - `S3L2Adapter` on bucket lmcb-s3 and `FSL2Adapter` on a kvfs mount of bucket lmcb-fs;
  - every measurement in a fresh engine process (a worker: this file with --worker under the
    venv's python) that submits the chunks as `--threads` tasks in flight (chunk i in task
    i mod threads; the s3 adapter also gets `--threads` CRT I/O threads) and waits on the
    adapter's event fds, as LMCache's own `lmcache bench l2` does.
Rows, per repetition (each repetition stores new keys):
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
        need = 2 * o.reps * o.chunks * o.chunk_mib * MIB + (2 << 30)
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
    def run(self, system, rep, phase, mode, model):
        o = self.o
        a = {"mode": mode, "chunks": o.chunks, "chunk_bytes": o.chunk_mib * MIB,
             "threads": o.threads, "model": model, "miss_keys": o.miss_keys,
             "miss_rounds": o.miss_rounds}
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
        rec = dict(json.loads(res[-1][7:]), system=system, rep=rep, phase=phase)
        if rec["ok"] != rec["expected"] or rec["verify_errors"]:
            rec["note"] = (f"{rec['ok']} of {rec['expected']} keys succeeded, "
                           f"{rec['verify_errors']} wrong")
            log(f"{system} {phase} rep {rep}: {rec['note']}")
        self.records.append(rec)
        if self.o.json:
            with open(self.o.json, "a") as f:
                f.write(json.dumps(rec) + "\n")
        return rec

    def rep(self, r):
        """One repetition; odd ones run kvfs first, so neither side always meets RGW first."""
        model = f"lmcb-{os.getpid()}-r{r}"
        miss = f"lmcb-miss-{os.getpid()}-r{r}"
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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
    md = markdown(b.records, meta, o, command)
    print(md)
    if o.out:
        with open(o.out, "w") as f:
            f.write(md)


if __name__ == "__main__":
    sys.exit(main())
