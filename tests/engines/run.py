#!/usr/bin/env python3
"""The inference engines' own code through two kvfs mounts of one bucket (run by run.sh, in the
venv venv.sh builds). Node A and node B are two daemons, each with its own cache directory, on a
fresh bucket of KVFS_TEST_S3_ENDPOINT. On them:

  1. LMCache 0.5.6's own tests (its sdist's files, GROUPS below), each group with TMPDIR and
     pytest's --basetemp on a mount and pytest's default output capture (its capture files are
     TemporaryFiles under TMPDIR, so they live on kvfs too);
  2. two_node_checks.py: the engines' storage classes, node A against node B, byte for byte;
  3. kvfs's own invariants after all that: no object under a temporary name, both daemons
     unmount and exit 0.

Every test id is collected first on local disk, so a pytest that dies on kvfs (or is killed at
its time limit) counts each test it did not report as failed. Prints one line per failure with
its message, then exactly one summary line `engines: N passed, N failed, N skipped`; exit 1 when
anything failed.
"""
import argparse
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import daemon_test as dt  # noqa: E402 - the suite's mount and bucket helpers
import kvfs_census  # noqa: E402 - run.py --census

# Every node runs at kvfs's defaults (the engines' tests meet what a user gets), but for the cache
# size. The two-node checks' nodes A and B add unlink_policy remote (named so): those checks test
# that one node's delete (vLLM's cleaner, SGLang's LRU and clear()) reaches the other; node C
# keeps the default, local, which keeps the object for the other nodes.
MOUNT_OPTS = {"cache_size": "8GiB"}
REMOTE_UNLINK_OPTS = dict(MOUNT_OPTS, unlink_policy="remote")
# Node W: the defaults but write_back false (tuned: close and rename return once the object is in
# the store), for the disk tiers' own tests of storing and loading through the mount in that mode
# too; every other node runs write-back, the default.
WRITE_THROUGH_OPTS = dict(MOUNT_OPTS, write_back="false")
NODE_OPTS = {"A": MOUNT_OPTS, "B": MOUNT_OPTS, "W": WRITE_THROUGH_OPTS}
TEMP_PATTERNS = ["*.tmp", "*.tmp.*", "*.tmp[0-9a-f]*"]  # kvfs's default temp_patterns
DAEMON_PIDS = []  # the kvfs daemons: children of this subreaper that kill_orphans keeps
TWO_NODE_CHECKS = 27  # two_node_checks.py's PASS/FAIL lines: fewer means a check did not run

# (name, node, time limit in s, extra env, test files of LMCache's sdist, tests expected to pass
# at least: fewer fails the group - a file that skips at module level, e.g. pytest.importorskip
# of a package the venv lost, or a release that collects fewer tests, must not shrink the run in
# silence). Left out, and why:
#  tests/v1/distributed/test_nixl_native_integration.py: every test skips, "optional lmcache_nixl
#    extension is not built" (the 0.5.6 wheel does not ship it);
#  tests/v1/test_nixl_storage.py: its collection does not end (> 60 s at full CPU, on local disk
#    too) on a machine without a GPU;
#  tests/v1/distributed/test_hf3fs_l2_adapter.py, storage_backend/test_hf3fs_connector.py: 3FS's
#    own client (mocked), not POSIX file I/O;
#  tests/v1/gpu_connector/gds_backends/ but test_file.py: the cuFile, hipFile, muFile, PHX and
#    uGDS drivers' bindings, mocked, with no file I/O; test_base.py and test_discovery.py only
#    write a Python module into tmp_path to test plugin discovery (an import, not the tier);
#  tests/v1/test_connector.py but test_fs_connector: Redis, Redis Sentinel and Redis Cluster
#    connectors (a Redis server, no file I/O);
#  tests/v1/mp_coordinator/: the rest of it (but persistence/, test_events_replay.py, the trace
#    tests of test_cache_events.py and test_mp_server_e2e.py) is the coordinator's HTTP API,
#    event bus and bookkeeping in memory, no file I/O; test_discovery.py and
#    test_pluggable_controllers.py write Python modules into tmp_path to test plugin discovery.
# What each test does on the mount (stores files, only makes directories, nothing): --census,
# counted in docs/engines.md.
# Skips inside the files run (CUDA-only cases) are listed with their reason by each run.
GROUPS = [
    ("disk-tiers", "A", 420, {}, [
        "tests/v1/distributed/test_fs_l2_adapter_delete.py",
        "tests/v1/distributed/test_fs_l2_adapter_keys.py",
        "tests/v1/distributed/test_fs_native_l2_adapter_config.py",
        "tests/v1/storage_backend/test_fs_connector.py",
        "tests/v1/storage_backend/test_fs_native_connector.py",
        "tests/v1/storage_backend/test_local_disk_backend.py",
        "tests/v1/storage_backend/test_local_disk_put_admission.py",
        "tests/v1/distributed/serde/test_serde_fs_e2e.py",
        "tests/v1/distributed/test_storage_manager_l2_keys.py",
        "tests/v1/internal_api_server/test_load_fs_chunks.py",
        "tests/v1/distributed/test_memory_capacity.py",
        "tests/v1/distributed/test_native_connector_l2_adapter.py",
        "tests/v1/test_connector.py::test_fs_connector",
        "tests/v1/storage_backend/test_path_sharder.py",
        "tests/v1/gpu_connector/gds_backends/test_file.py",
    ], 260),
    ("disk-tiers-write-back-false", "W", 300, {}, [
        "tests/v1/distributed/test_fs_l2_adapter_delete.py",
        "tests/v1/distributed/test_fs_l2_adapter_keys.py",
        "tests/v1/storage_backend/test_fs_connector.py",
        "tests/v1/storage_backend/test_local_disk_backend.py",
        "tests/v1/distributed/serde/test_serde_fs_e2e.py",
        "tests/v1/internal_api_server/test_load_fs_chunks.py",
    ], 96),
    ("nixl", "B", 300, {}, [
        "tests/v1/storage_backend/test_nixl_shared_pool.py",
        "tests/v1/distributed/test_nixl_store_l2_adapter.py",
        "tests/v1/distributed/test_nixl_store_dynamic_l2_adapter.py",
        "tests/v1/distributed/test_nixl_native_l2_adapter.py",
        "tests/disagg/test_nixl_storage_backend.py",
        "tests/v1/test_nixl_put_refcount.py",
    ], 167),
    # Real `lmcache server` processes and a coordinator sharing an `fs` L2 pool on the mount.
    ("mp-e2e", "A", 600, {"RUN_MP_E2E": "1"}, [
        "tests/v1/mp_coordinator/test_mp_server_e2e.py",
    ], 7),
    # DAX L2 and DEVDAX L1 map a file on the mount MAP_SHARED and write through the mapping.
    ("dax-mmap", "B", 300, {}, [
        "tests/v1/distributed/test_dax_l2_adapter.py",
        "tests/v1/distributed/test_devdax_l1_allocator.py",
        "tests/v1/storage_backend/test_dax_backend.py",
    ], 103),
    # The MP coordinator's files: its checkpoint and metadata (a .tmp written, fsynced, then
    # os.replace'd over the last one) and its cache-event traces (written, read back, replayed).
    ("coordinator-files", "A", 120, {}, [
        "tests/v1/mp_coordinator/persistence/",
        "tests/v1/mp_coordinator/test_events_replay.py",
        "tests/v1/mp_coordinator/test_cache_events.py::"
        "test_events_trace_alone_builds_a_subscriber_with_a_trace_sink",
        "tests/v1/mp_coordinator/test_cache_events.py::test_coordinator_and_trace_together_fan_out",
        "tests/v1/mp_coordinator/test_cache_events.py::"
        "test_reporting_without_http_frontend_records_only_the_trace",
    ], 58),
]

# Tests left out by id, with the reason (counted as skipped, the reason printed): they need what
# an object store cannot give, and kvfs documents so (docs/engines.md).
NO_SYMLINKS = ("kvfs has no symbolic links (symlink(2) is EPERM: an object store has no link "
               "object)")
LINKED_READ_ONLY = ("a hard link on kvfs is the same inode on this node, but each name is an "
                    "object of its own in the store, so a chunk with two names is not opened "
                    "for writing (EPERM); these tests open the linked file O_RDWR as a DAX "
                    "device and map it read-write")
DESELECT = {
    "tests/v1/distributed/test_dax_l2_adapter.py::test_dax_hotplug_add_duplicate_device":
        LINKED_READ_ONLY,
    "tests/v1/distributed/test_dax_l2_adapter.py::test_dax_duplicate_config_rejected":
        LINKED_READ_ONLY,
    "tests/v1/distributed/test_devdax_l1_allocator.py::"
    "test_storage_manager_rejects_l1_add_of_l2_dax_device_alias": LINKED_READ_ONLY,
    "tests/v1/distributed/test_devdax_l1_allocator.py::"
    "test_storage_manager_rejects_l2_add_of_other_l2_device[hotplug]": LINKED_READ_ONLY,
    "tests/v1/distributed/test_devdax_l1_allocator.py::"
    "test_storage_manager_rejects_l2_add_of_other_l2_device[registration]": LINKED_READ_ONLY,
    "tests/v1/distributed/test_devdax_l1_allocator.py::"
    "test_add_duplicate_device_rejected[hardlink]": LINKED_READ_ONLY,
    "tests/v1/distributed/test_devdax_l1_allocator.py::"
    "test_add_duplicate_device_rejected[symlink]": NO_SYMLINKS,
}


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []  # (what, message)
        self.skips = {}  # reason -> count

    def add(self, what, outcome, msg=""):
        if outcome == "passed":
            self.passed += 1
        elif outcome == "skipped":
            self.skipped += 1
            self.skips[msg] = self.skips.get(msg, 0) + 1
        else:
            self.failed += 1
            self.failures.append((what, "%s %s" % (outcome.upper(), msg)))


def say(msg):
    print("== engines [%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def collect(py, sdist, files, work):
    """Test ids of `files`, collected on local disk (TMPDIR=work)."""
    r = subprocess.run([py, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
                       + files, cwd=sdist, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TMPDIR=work))
    ids = [ln.strip() for ln in r.stdout.splitlines() if "::" in ln and not ln.startswith(" ")]
    assert ids, "collecting %s found nothing (rc %d): %s" % (files, r.returncode,
                                                             (r.stdout + r.stderr)[-2000:])
    return ids


RETRY_ON = ["address already in use"]  # failures of LMCache's harness, not of the file system


def run_pytest(cmd, sdist, env, outcomes, log, limit):
    """Runs one pytest; returns ({test id: (outcome, message)}, exit code, how it ended)."""
    env = dict(env, KVFS_OUTCOMES=outcomes)
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, cwd=sdist, env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=limit)
            how = "exit %d" % rc if rc >= 0 else "killed by %s" % signal.Signals(-rc).name
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc, how = -9, "killed at its %d s limit" % limit
        except BaseException:  # interrupted (SIGINT, SIGTERM): take the tests down with us
            os.killpg(p.pid, signal.SIGKILL)
            raise
    # pytest's own children (MP servers) are in its session: end whatever is left, and any
    # process that left the session (we are the subreaper: orphans become our children).
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    kill_orphans()
    got = {}
    if os.path.exists(outcomes):
        with open(outcomes) as f:
            for line in f:
                rec = json.loads(line)
                prev = got.get(rec["id"])
                # A failed setup or teardown makes the test failed even when its call passed.
                if prev is None or prev[0] in ("passed", "skipped"):
                    got[rec["id"]] = (rec["outcome"], rec["msg"])
    return got, rc, how


def run_group(py, sdist, work, name, node, mnt, limit, env_extra, files, expect, tally,
              census=None):
    ids = collect(py, sdist, files, work)
    base = os.path.join(mnt, "engines-" + name)
    tmp = os.path.join(base, "tmp")
    os.makedirs(tmp, exist_ok=True)
    outcomes = os.path.join(work, name + ".outcomes.jsonl")
    log = os.path.join(work, name + ".log")
    env = dict(os.environ, TMPDIR=tmp, KVFS_OUTCOMES=outcomes,
               PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""), **env_extra)
    # Default capture (no -s, no --capture=...). log_cli off only keeps the log file small.
    cmd = [py, "-m", "pytest", "-p", "kvfs_outcomes", "-p", "no:cacheprovider", "-rfEs",
           "-o", "log_cli=false", "--basetemp", os.path.join(base, "basetemp")] + files
    for tid in [t for t in ids if t in DESELECT]:
        cmd += ["--deselect", tid]
        ids.remove(tid)
        tally.add(tid, "skipped", "left out: " + DESELECT[tid])
    say("%s: %d tests on node %s (TMPDIR and --basetemp under %s), limit %d s"
        % (name, len(ids), node, base, limit))
    t0 = time.time()
    if census is not None:  # --census: every process's file calls, the tests marked (slower)
        trace = os.path.join(work, name + ".strace")
        got, rc, how = run_pytest(
            ["strace", "-f", "--seccomp-bpf", "-qq", "-y", "-s", "4096", "-e", "trace=%file",
             "-e", "signal=none", "-o", trace] + cmd + ["-p", "kvfs_census"],
            sdist, env, outcomes, log, limit * 4)
        census_report(name, kvfs_census.classify(trace, base), files, got, census)
    else:
        got, rc, how = run_pytest(cmd, sdist, env, outcomes, log, limit)
    # A test that lost a race for a loopback port in LMCache's own harness (it picks a free
    # port, then its server binds it later) runs once more, alone; said in the output.
    again = [t for t in ids if got.get(t, ("", ""))[0] == "failed"
             and any(r in got[t][1] for r in RETRY_ON)]
    if again:
        say("%s: %d test(s) lost a port race in LMCache's harness (%s): run once more"
            % (name, len(again), ", ".join(RETRY_ON)))
        base_cmd = [a for a in cmd if a not in files]
        retried, _, _ = run_pytest(base_cmd + again, sdist, env, outcomes + ".retry",
                                   log + ".retry", limit)
        for t in again:
            if t in retried:
                got[t] = retried[t]
    before = (tally.passed, tally.failed, tally.skipped)
    for tid in ids:
        outcome, msg = got.pop(tid, ("failed", "no result: pytest %s before reporting it" % how))
        tally.add(tid, outcome, msg)
    for tid, (outcome, msg) in got.items():  # a collection error, or an id collected only here
        tally.add(tid, outcome, msg)
    p_, f_, s_ = (a - b for a, b in zip((tally.passed, tally.failed, tally.skipped), before))
    say("%s: %d pass, %d fail, %d skip; pytest %s (%.0f s; log %s)"
        % (name, p_, f_, s_, how, time.time() - t0, log))
    if p_ < expect:
        tally.add("group " + name, "failed", "%d tests passed, at least %d expected: the run "
                  "shrank (a test file skipped at module level, a missing import, fewer tests "
                  "collected); see the skips below" % (p_, expect))
    if rc not in (0, 1):  # not a normal "tests failed" exit: show how it ended
        with open(log, errors="replace") as f:
            tail = f.read()[-3000:]
        print("---- tail of %s\n%s\n----" % (log, tail), flush=True)


def census_report(name, kinds, files, got, census):
    """Per test file of the group: how many passing tests stored or loaded files through the
    mount, how many only made directories or looked names up there, how many never touched it."""
    for f in files:
        row = {"files": 0, "dirs": 0, "none": 0}
        for tid, (kind, _) in kinds.items():
            mine = tid == f or tid.startswith(f) and (f.endswith("/") or tid[len(f)] in ":[")
            if mine and got.get(tid, ("",))[0] == "passed":
                row[kind] += 1
                census.append({"group": name, "id": tid, "kind": kind,
                               "why": kinds[tid][1]})
        say("census %s %s: %d files, %d dirs/lookups only, %d none (passed tests)"
            % (name, f, row["files"], row["dirs"], row["none"]))


def kill_orphans():
    """SIGKILLs our children other than the kvfs daemons (orphans a test left behind, adopted
    by this subreaper), so no process keeps a mount busy."""
    me, keep = os.getpid(), set(DAEMON_PIDS)
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) in keep:
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            try:
                os.kill(int(p), signal.SIGKILL)
                os.waitpid(int(p), 0)
            except (OSError, ChildProcessError):
                pass


def holders(mnt):
    """Processes with a cwd or an open file under mnt (why an unmount is busy)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            links = [os.readlink("/proc/%s/cwd" % p)] + [
                os.readlink("/proc/%s/fd/%s" % (p, fd)) for fd in os.listdir("/proc/%s/fd" % p)]
            if any(link.startswith(mnt) for link in links):
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    out.append("%s %s" % (p, f.read().replace(b"\0", b" ")[:120].decode()))
        except OSError:
            continue
    return out


def unmount(d):
    """Like dt.Daemon.unmount (fusermount3 -u, then the daemon must exit 0), retried while the
    mount is busy (a test's process still exiting); a daemon that will not go is killed."""
    d.ctx.daemons.remove(d)
    deadline = time.time() + 15
    while True:
        r = subprocess.run(["fusermount3", "-u", d.mnt], capture_output=True, text=True)
        if r.returncode == 0 or time.time() > deadline:
            break
        time.sleep(0.5)
    if r.returncode != 0:
        who = holders(d.mnt)
        d.kill()
        raise AssertionError("fusermount3 -u: %s; held by %s" % (r.stderr.strip(),
                                                                  who or "nobody now"))
    deadline = time.time() + 60
    while True:
        pid, st = os.waitpid(d.pid, os.WNOHANG)
        if pid == d.pid:
            break
        if time.time() > deadline:
            d.kill()
            raise AssertionError("daemon %d did not exit after fusermount3 -u" % d.pid)
        time.sleep(0.05)
    assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "daemon exit status %#x" % st


def run_two_node(py, a, b, c, work, tally):
    say("two-node checks (two_node_checks.py), node A %s, node B %s, node C %s" % (
        a.mnt, b.mnt, c.mnt))
    log = os.path.join(work, "two_node.log")
    with open(log, "w") as out:
        r = subprocess.run([py, os.path.join(HERE, "two_node_checks.py"), "--a", a.mnt, "--b",
                            b.mnt, "--c", c.mnt], stdout=subprocess.PIPE, stderr=out, text=True,
                           timeout=600, env=dict(os.environ, TMPDIR=work))
    seen = 0
    for line in r.stdout.splitlines():
        print("   " + line, flush=True)
        if line.startswith("PASS "):
            tally.add("two-node: " + line[5:], "passed")
            seen += 1
        elif line.startswith("FAIL "):
            tally.add("two-node: " + line[5:].split(": ", 1)[0], "failed",
                      line[5:].split(": ", 1)[-1])
            seen += 1
    if r.returncode not in (0, 1) or seen == 0:
        tally.add("two-node checks", "failed", "two_node_checks.py exit %d (stderr in %s)"
                  % (r.returncode, log))
    elif seen < TWO_NODE_CHECKS:
        tally.add("two-node checks", "failed", "%d checks reported, %d expected" % (
            seen, TWO_NODE_CHECKS))


def check(tally, what, fn):
    try:
        fn()
        tally.add(what, "passed")
        say("PASS " + what)
    except Exception as e:  # noqa: BLE001 - counted and reported
        tally.add(what, "failed", repr(e))
        say("FAIL %s: %r" % (what, e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvfs", required=True)
    ap.add_argument("--sdist", required=True, help="LMCache's extracted sdist (tests/ only)")
    ap.add_argument("--only", default="", help="comma-separated group names (two-node: 2node)")
    ap.add_argument("--census", metavar="JSON", help="run each group under strace and write "
                    "what each passing test did on the mount (kvfs_census.py) to JSON")
    args = ap.parse_args()
    # SIGTERM (CI's stop) unwinds like SIGINT, so the mounts and the bucket are cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    dt.require(s3=True)  # FUSE and the S3 endpoint, else skip (77) or fail under KVFS_REQUIRE_*
    only = set(filter(None, args.only.split(",")))
    py = sys.executable
    t_start = time.time()
    work = tempfile.mkdtemp(prefix="kvfs-engines-", dir="/var/tmp")
    ctx = dt.Ctx(os.path.abspath(args.kvfs), "s3", work)
    tally = Tally()
    try:
        census = [] if args.census else None
        run_all(py, args, only, ctx, work, tally, census)
        if census is not None:
            with open(args.census, "w") as f:
                json.dump(census, f, indent=0)
    except Exception as e:  # noqa: BLE001 - a mount or bucket that fails is a failure, counted
        import traceback
        traceback.print_exc()
        tally.add("setup", "failed", repr(e))
    finally:
        for n in ("cache-A", "cache-B"):
            shutil.rmtree(ctx.path(n), ignore_errors=True)
        if not tally.failed:  # else the logs stay for a look
            shutil.rmtree(work, ignore_errors=True)
    for reason, n in sorted(tally.skips.items()):
        print("skipped %3d x %s" % (n, reason[:200]))
    for what, msg in tally.failures:
        print("FAILED %s: %s" % (what, " ".join(msg.split())[:400]))
    if tally.failed:
        print("logs kept in %s" % work)
    print("(%.0f s)" % (time.time() - t_start))
    print("engines: %d passed, %d failed, %d skipped" % (tally.passed, tally.failed,
                                                         tally.skipped), flush=True)
    return 1 if tally.failed else 0


def run_all(py, args, only, ctx, work, tally, census):
    try:
        store = ctx.store()  # a fresh bucket, removed at the end
        say("bucket %s on %s, kvfs %s" % (store.bucket, store.endpoint, args.kvfs))
        nodes = {n: dt.Daemon(ctx, store, ctx.path("mnt-" + n), ctx.path("cache-" + n),
                              o, name=n) for n, o in NODE_OPTS.items()}
        DAEMON_PIDS.extend(d.pid for d in nodes.values())
        for name, node, limit, env, files, expect in GROUPS:
            if not only or name in only:
                run_group(py, args.sdist, work, name, node, nodes[node].mnt, limit, env, files,
                          expect, tally, census)
        if not only or "disk-tiers-write-back-false" in only:
            def wrote_through(w=nodes["W"]):
                s = w.stats()
                assert s["kvfs_write_back_queued"] == 0 and s["kvfs_write_opens"] > 0, (
                    "node W (write_back false): %d chunks queued, %d write opens" % (
                        s["kvfs_write_back_queued"], s["kvfs_write_opens"]))
            check(tally, "kvfs: node W (write_back false) stored its group's chunks at their "
                  "closes, none through write-back", wrote_through)
        if not only or "disk-tiers" in only:
            def wrote_back(a=nodes["A"]):
                s = a.stats()
                assert s["kvfs_write_back_queued"] > 0 and s["kvfs_write_back_failed"] == 0, (
                    "node A: %d chunks queued, %d failed" % (s["kvfs_write_back_queued"],
                                                             s["kvfs_write_back_failed"]))
            check(tally, "kvfs: node A (the defaults) stored the chunks of its group through "
                  "write-back", wrote_back)
        if not only or "2node" in only:
            # Two more nodes with unlink_policy remote; node C keeps every default (local: an
            # engine's delete there stays there).
            for n, o in (("A-remote-unlink", REMOTE_UNLINK_OPTS),
                         ("B-remote-unlink", REMOTE_UNLINK_OPTS), ("C", MOUNT_OPTS)):
                nodes[n] = dt.Daemon(ctx, store, ctx.path("mnt-" + n), ctx.path("cache-" + n), o,
                                     name=n)
                DAEMON_PIDS.append(nodes[n].pid)
            run_two_node(py, nodes["A-remote-unlink"], nodes["B-remote-unlink"], nodes["C"], work,
                         tally)

        def no_temp_objects():
            keys = [k for k in store.keys() if not dt.kvfs_own(k)]
            bad = [k for k in keys for p in TEMP_PATTERNS
                   if fnmatch.fnmatch(k.rsplit("/", 1)[-1], p)]
            assert not bad, "%d of %d objects under a temporary name: %s" % (
                len(bad), len(keys), bad[:3])
        check(tally, "kvfs: no object under a temporary name in the bucket", no_temp_objects)
        for n, d in nodes.items():
            check(tally, "kvfs: node %s unmounts, its daemon exits 0" % n,
                  lambda d=d: unmount(d))
    finally:
        ctx.cleanup()  # kills daemons still mounted, empties and deletes the bucket


if __name__ == "__main__":
    sys.exit(main())
