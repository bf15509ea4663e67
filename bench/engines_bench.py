#!/usr/bin/env python3
"""Each inference engine's disk-tier pattern as a benchmark workload (python3 stdlib only).

The engines' I/O is tests/integration/engine_patterns.py (llm-d nested hash trees with temp +
rename-before-close, SGLang HiCacheFile flat pages with temp + os.replace, LMCache GDS header +
data + metadata files in two-level hash directories, LMCache MP fs_native/fs:// flat temp +
rename over two base paths) and engine_patterns_vllm_sglang_dynamo.py (vLLM 0.33.0's fs tier
with O_DIRECT temp + rename and access() lookups, SGLang HiCacheFile direct_io O_DIRECT pages under their final names,
SGLang fast_file O_EXCL temps + writev/readv of 64 buffers, Dynamo KVBM's unlinked scratch file
read and written O_DIRECT at offsets, Dynamo new_at_path named files); see docs/engines.md. Prints one JSON object per measurement, with
the fields kvbench.py uses (mib_s, ops_s, seconds, errors, verify_errors) and phase
"engine_<engine>_<workload>"; the page size is `page_mib` (not size_mib, so these rows stay out
of the chunk-size tables).

Workloads (--phases, in this order, for every engine and thread count):
  write        the engine's store of --pages pages (lookup, mkdir -p, temp, write, rename)
  read_cold    the engine's load of each page, first read since the mount (another node's view)
  read_warm    the same loads again
  lookup_miss  the engine's existence check of pages that do not exist, for --lookup-seconds
Names are deterministic in (--tag, engine, threads, index): write and read phases may run in
separate invocations with a remount in between (run.sh does). Dynamo KVBM's scratch tier lives
only in its process (an unlinked file and an in-memory block map), so an invocation without the
write phase first stores its pages, untimed, and its read rows read the node's own spool file,
never the store (its rows carry scope "process-local").
"""
import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import engine_patterns as ep  # noqa: E402
import kvbench  # noqa: E402

PHASES = ["write", "read_cold", "read_warm", "lookup_miss"]
MIB = 1 << 20


def page_ids(tag, engine, threads, n, base=0):
    salt = int(hashlib.sha256(f"{tag}/{engine}/{threads}".encode()).hexdigest()[:8], 16)
    return [salt * 1_000_000 + base + i for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--system", default="local")
    ap.add_argument("--rep", type=int, default=0)
    ap.add_argument("--tag", default="r0")
    ap.add_argument("--label", default="")
    ap.add_argument("--engines", default=",".join(ep.ENGINES))
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--pages", type=int, default=16, help="pages per engine and thread count")
    ap.add_argument("--page-mib", default="", help="engine=MiB,... (default: engine_patterns)")
    ap.add_argument("--threads", type=kvbench.int_list, default=[1, 4])
    ap.add_argument("--lookup-seconds", type=float, default=2.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    phases = a.phases.split(",")
    for p in phases:
        if p not in PHASES:
            sys.exit(f"engines_bench: unknown phase {p!r} (known: {', '.join(PHASES)})")
    sizes = dict(ep.DEFAULT_MIB)
    for kv in filter(None, a.page_mib.split(",")):
        k, v = kv.split("=")
        sizes[k] = float(v)
    out = open(a.out, "a") if a.out else sys.stdout

    def emit(rec):
        base = {"ts": round(time.time(), 3), "system": a.system, "rep": a.rep, "label": a.label}
        base.update({k: v for k, v in rec.items() if v is not None})
        out.write(json.dumps(base) + "\n")
        out.flush()

    for name in filter(None, a.engines.split(",")):
        if name not in ep.ENGINES:
            sys.exit(f"engines_bench: unknown engine {name!r} (known: {', '.join(ep.ENGINES)})")
        eng = ep.ENGINES[name](a.dir)
        n = int(sizes[name] * MIB)
        for threads in a.threads:
            ids = page_ids(a.tag, name, threads, a.pages)
            datas = {h: ep.payload(h, n) for h in ids} if "write" in phases else {}
            rec = {"engine": name, "page_mib": sizes[name], "threads": threads}
            if getattr(eng, "PROCESS_LOCAL", False):
                rec["scope"] = "process-local"
                if "write" not in phases:  # its tier died with the writing process: refill
                    for h in ids:
                        eng.store(h, ep.payload(h, n))
            for ph in phases:
                key = f"engine_{name}_{ph}"
                if ph == "write":
                    res, wall, errs = kvbench.run_parallel(
                        len(ids), threads, lambda i: eng.store(ids[i], datas[ids[i]]))
                    done = sum(1 for r in res if r is not None)
                    emit(dict(rec, phase=key, pages=len(ids), seconds=round(wall, 6),
                              mib_s=round(done * n / MIB / wall, 2) if wall > 0 else None,
                              errors=len(errs), note=errs[0] if errs else None))
                elif ph.startswith("read"):
                    res, wall, errs = kvbench.run_parallel(
                        len(ids), threads, lambda i: eng.load(ids[i], n))
                    bad = sum(1 for i, r in enumerate(res)
                              if r is not None and r != ep.payload(ids[i], n))
                    done = sum(1 for r in res if r is not None)
                    emit(dict(rec, phase=key, pages=len(ids), seconds=round(wall, 6),
                              mib_s=round(done * n / MIB / wall, 2) if wall > 0 else None,
                              errors=len(errs), verify_errors=bad,
                              note=errs[0] if errs else None))
                else:
                    counts, wrong = [0] * threads, [0] * threads
                    deadline = time.perf_counter() + a.lookup_seconds
                    base = int.from_bytes(os.urandom(3), "little") * 100_000

                    def worker(w):
                        i = 0
                        while time.perf_counter() < deadline:
                            wrong[w] += eng.lookup(base + w * 10_000_000 + i)
                            i += 1
                        counts[w] = i
                        return i
                    _, wall, errs = kvbench.run_parallel(threads, threads, worker)
                    total = sum(counts)
                    emit(dict(rec, phase=key, lookups=total, seconds=round(wall, 6),
                              ops_s=round(total / wall, 1) if wall > 0 else None,
                              errors=len(errs) + sum(wrong), note=errs[0] if errs else None))


if __name__ == "__main__":
    main()
