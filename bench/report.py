#!/usr/bin/env python3
"""Turns the benchmark's JSON lines into bench/RESULTS.md and a PNG chart.

usage: report.py --results DIR/results.jsonl [--meta DIR/meta.json] [--fleet DIR/fleet.jsonl]
                 [--md RESULTS.md] [--png chart.png]

Every cell is the median over the repetitions with (min-max). Ratios compare medians. The report
names its run directory (DIR) and links bench/ANALYSIS.md.
"""
import argparse
import json
import os
import re
import statistics
import sys
from collections import defaultdict

BENCH = os.path.dirname(os.path.abspath(__file__))
ORDER = ["kvfs", "kvfs-tier", "s3fs", "rclone-off", "rclone-full", "raw-s3", "tmpfs"]
LIMITS = {"raw-s3", "tmpfs"}
THROUGHPUT = [("write", "write"), ("write_odirect", "write O_DIRECT"),
              ("read_cold", "cold read"), ("read_cold_odirect", "cold read O_DIRECT"),
              ("read_warm", "warm read"), ("read_warm_odirect", "warm read O_DIRECT"),
              ("read_hit", "hit read, page cache dropped")]
CPU_PHASES = [("write", "write"), ("read_cold", "cold read"), ("read_hit", "hit read")]
# kvfs row -> (limit system, limit phase, goal): issue 24's goals (the hit row keeps issue 5's).
GOALS = [("read_cold", "raw-s3", "read_cold", 0.9, "cold read vs parallel ranged GETs"),
         ("read_warm", "tmpfs", "read_warm", 0.95, "warm read vs tmpfs"),
         ("read_hit", "tmpfs", "read_hit", 0.8, "hit read (page cache dropped) vs tmpfs"),
         ("write", "raw-s3", "write", 0.9, "write vs one PUT per chunk")]


def load(path):
    recs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except json.JSONDecodeError:
                    print(f"report: {path}:{n}: not JSON, skipped", file=sys.stderr)
    return recs


class Table:
    """Values per (system, phase, size, threads, field) across repetitions."""

    def __init__(self, recs):
        self.v = defaultdict(list)
        self.systems = []
        self.notes = []
        self.sizes, self.threads = set(), set()
        self.engines = {}  # engine pattern -> page MiB (engines_bench.py rows)
        rss = defaultdict(float)
        for r in recs:
            s, ph = r.get("system"), r.get("phase")
            if s and s not in self.systems and ph not in ("note",):
                self.systems.append(s)
            if ph == "note" or (r.get("skipped") and r.get("note")):
                what = f"{s}: {r['note'].strip()}"
                if ph != "note":
                    what = f"{s}: {ph} {r.get('size_mib')} MiB skipped ({r['note']})"
                what = re.sub(r"-r\d+\.log", "-r<rep>.log", what)  # one note for all reps
                if what not in self.notes:
                    self.notes.append(what)
                continue
            if r.get("errors") and r.get("note"):
                what = f"{s}: {ph} errors, e.g. {r['note']}"
                if what not in self.notes:
                    self.notes.append(what)
            if ph == "info" and r.get("client"):
                what = (f"{s}: measured with the {r['client']} client, "
                        f"{r.get('part_mib')} MiB ranged-GET parts")
                if what not in self.notes:
                    self.notes.append(what)
                continue
            if ph == "rss":
                key = (s, r.get("rep"))
                rss[key] = max(rss[key], r.get("peak_rss_mib") or 0)
                continue
            if "size_mib" in r:
                self.sizes.add(r["size_mib"])
            if r.get("engine"):
                self.engines[r["engine"]] = r.get("page_mib")
            if "threads" in r:
                self.threads.add(r["threads"])
            for field in ("mib_s", "close_p50_ms", "close_p99_ms", "put_p50_ms", "put_p99_ms",
                          "store_p50_ms", "store_p99_ms", "load_p50_ms", "load_p99_ms",
                          "ttfb_p50_ms", "cpu_ms_per_mib", "daemon_cpu_ms_per_mib",
                          "ops_s", "errors", "verify_errors", "seconds"):
                if field in r and r[field] is not None:
                    self.v[(s, ph, r.get("size_mib"), r.get("threads"), field)].append(r[field])
        for (s, _), peak in rss.items():
            self.v[(s, "rss", None, None, "peak_rss_mib")].append(peak)
        self.systems.sort(key=lambda s: (ORDER.index(s) if s in ORDER else 99, s))
        self.sizes, self.threads = sorted(self.sizes), sorted(self.threads)

    def get(self, s, ph, size, thr, field):
        return self.v.get((s, ph, size, thr, field), [])

    def median(self, *key):
        vals = self.get(*key)
        return statistics.median(vals) if vals else None

    def cell(self, *key, digits=None):
        vals = self.get(*key)
        if not vals:
            return "-"
        med, lo, hi = statistics.median(vals), min(vals), max(vals)
        f = fmt if digits is None else (lambda x: f"{x:.{digits}f}")
        return f(med) if len(vals) == 1 or lo == hi else f"{f(med)} ({f(lo)}-{f(hi)})"

    def total(self, s, field):
        return sum(sum(vals) for k, vals in self.v.items() if k[0] == s and k[4] == field)


def fmt(x):
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def rows_by_size(t, phases, field):
    for ph, label in phases:
        for size in t.sizes:
            for thr in t.threads:
                if any(t.get(s, ph, size, thr, field) for s in t.systems):
                    yield ph, label, size, thr


ENGINE_WORKLOADS = [("write", "write"), ("read_cold", "cold read"), ("read_warm", "warm read"),
                    ("lookup_miss", "missed lookups/s")]


def engine_rows(t):
    """(engine, workload, label, page MiB, threads) of the engine-pattern rows that have data."""
    rows = []
    for engine, page in sorted(t.engines.items()):
        for wl, label in ENGINE_WORKLOADS:
            for thr in t.threads:
                field = "ops_s" if wl == "lookup_miss" else "mib_s"
                if any(t.get(s, f"engine_{engine}_{wl}", None, thr, field) for s in t.systems):
                    rows.append((engine, wl, label, page, thr))
    return rows


def markdown(t, meta, fleet=(), run_dir=None):
    out = ["# kvfs benchmark results", ""]
    if meta:
        out += [f"- Date: {meta.get('date')}",
                f"- Machine: {meta.get('nproc')} cores, {meta.get('ram_mib')} MiB RAM, "
                f"kernel {meta.get('kernel')}, CPU {meta.get('cpu')}",
                f"- Load average at start: {' '.join(meta.get('loadavg_start', []))}",
                f"- Server: {meta.get('server')} at {meta.get('endpoint')}"
                + (" (started by run.sh)" if meta.get("started_server") else " (already running)"),
                f"- Peers: {meta.get('s3fs')}; {meta.get('rclone')}; kvfs {meta.get('kvfs') or '-'}"
                f" (rev {meta.get('kvfs_rev')})",
                *([f"- Network: loopback capped at {meta['loopback_gbit']} Gbit/s (tc tbf), shared "
                   "by client<->RGW and RGW<->OSD traffic"] if meta.get("loopback_gbit") else []),
                f"- Workload: sizes {meta.get('sizes_mib')} MiB, {meta.get('chunks')} chunks per size "
                f"and thread count ({meta.get('odirect_chunks')} O_DIRECT, "
                f"{meta.get('ttfb_chunks')} for TTFB), threads {meta.get('threads')}, "
                f"{meta.get('reps')} repetitions, lookups {meta.get('lookup_seconds')} s each"]
    if run_dir:
        # The rows this report was made from: it can be checked and regenerated (bench/README.md).
        out.append(f"- Run directory: `{run_dir}`")
    if meta:
        out += ["", "Command:", "", "```", meta.get("command", ""), "```", ""]
    elif run_dir:
        out.append("")
    partial = []
    # run.sh records its default sizes (8,32,64 before they were in meta.json): anything else is
    # not a full run.
    full_sizes = meta.get("default_sizes_mib", "8,32,64") if meta else None
    if meta and meta.get("sizes_mib") != full_sizes:
        partial.append(f"sizes {meta.get('sizes_mib')} MiB instead of {full_sizes}")
    if meta and int(meta.get("reps", 3)) < 3:
        partial.append(f"{meta.get('reps')} repetition(s)")
    if "kvfs" not in t.systems:
        partial.append("no kvfs")
    if meta and float(meta.get("loadavg_start", ["0"])[0]) > 0.5 * (meta.get("nproc") or 1):
        partial.append(f"a busy machine (load {meta['loadavg_start'][0]} on "
                       f"{meta.get('nproc')} cores): absolute numbers are noisy")
    if partial:
        out += ["**Not a full benchmark run:** " + "; ".join(partial) + ". Regenerate with "
                "`bench/run.sh` on an idle machine.", ""]
    out += ["Cells: median over the repetitions (min-max). Systems: kvfs and its peers s3fs and "
            "rclone mount (`--vfs-cache-mode off` / `full`); limits: `raw-s3` (native client, "
            "ranged GETs in parallel and one PUT per chunk, no filesystem) and `tmpfs` (the same "
            "reader on /dev/shm). See bench/README.md for what each number means.", ""]
    heads = t.systems
    sep = "| " + " | ".join(["---"] * (3 + len(heads))) + " |"

    out += ["## Throughput (MiB/s)", "",
            "| metric | size MiB | threads | " + " | ".join(heads) + " |", sep]
    for ph, label, size, thr in rows_by_size(t, THROUGHPUT, "mib_s"):
        out.append(f"| {label} | {size} | {thr} | " +
                   " | ".join(t.cell(s, ph, size, thr, "mib_s") for s in heads) + " |")

    out += ["", "## Latency (ms)", "",
            "`close` is the time close() takes after the whole chunk was written (for raw-s3: "
            "the PUT). `store`: one chunk from open to close returned (raw-s3: its PUT). `cold "
            "load`: one chunk never read on this mount, from open to its last byte (raw-s3: its "
            "GETs). TTFB: open + read of 1 byte of a chunk never read on this mount.", "",
            "| metric | size MiB | threads | " + " | ".join(heads) + " |", sep]
    lat = [("write", "close p50", "close_p50_ms"), ("write", "close p99", "close_p99_ms"),
           ("write", "store p50", "store_p50_ms"), ("write", "store p99", "store_p99_ms"),
           ("read_cold", "cold load p50", "load_p50_ms"),
           ("read_cold", "cold load p99", "load_p99_ms"),
           ("ttfb", "TTFB p50", "ttfb_p50_ms")]
    for ph, label, field in lat:
        for size in t.sizes:
            for thr in t.threads:
                cells = []
                for s in heads:
                    f = {"close_p50_ms": "put_p50_ms", "close_p99_ms": "put_p99_ms",
                         "store_p50_ms": "put_p50_ms", "store_p99_ms": "put_p99_ms"}.get(
                        field, field) if s == "raw-s3" else field
                    cells.append(t.cell(s, ph, size, thr, f))
                if any(c != "-" for c in cells):
                    out.append(f"| {label} | {size} | {thr} | " + " | ".join(cells) + " |")

    cpu_rows = [(ph, label, size, thr) for ph, label, size, thr in
                rows_by_size(t, CPU_PHASES, "cpu_ms_per_mib")]
    if cpu_rows:
        out += ["", "## Client CPU per MiB (ms)", "",
                "CPU time (user + system) per MiB moved, on the client side: the process serving "
                "the mount plus the reader/writer (kvbench.py; for raw-s3 its own process). The S3 "
                "server's CPU is not counted (it shares the same cores). "
                "rclone-full uploads after close(), outside the write phase, so its write row "
                "leaves most of the upload out.", "",
                "| metric | size MiB | threads | " + " | ".join(heads) + " | kvfs / raw-s3 |",
                "| " + " | ".join(["---"] * (4 + len(heads))) + " |"]
        for ph, label, size, thr in cpu_rows:
            lim = "read_cold" if ph.startswith("read_cold") else "write"
            out.append(f"| {label} | {size} | {thr} | " + " | ".join(
                t.cell(s, ph, size, thr, "cpu_ms_per_mib", digits=2) for s in heads) + " | " +
                (ratio(t.median("kvfs", ph, size, thr, "cpu_ms_per_mib"),
                       t.median("raw-s3", lim, size, thr, "cpu_ms_per_mib"))
                 if ph in ("write", "read_cold") else "-") + " |")

    out += ["", "## Lookups (os.path.exists per second)", "",
            "| lookup | threads | " + " | ".join(heads) + " |",
            "| " + " | ".join(["---"] * (2 + len(heads))) + " |"]
    for kind in ("positive", "negative"):
        for thr in t.threads:
            out.append(f"| {kind} | {thr} | " +
                       " | ".join(t.cell(s, f"lookup_{kind}", None, thr, "ops_s") for s in heads)
                       + " |")

    eng = engine_rows(t)
    if eng:
        out += ["", "## Engine patterns (MiB/s; missed lookups per second)", "",
                "Each engine's own disk-tier I/O (bench/engines_bench.py, docs/engines.md): "
                "writes with its temp names, renames and directory trees; cold reads on a fresh "
                "mount; warm reads; exists() of pages that are not there.", "",
                "| engine | workload | page MiB | threads | " + " | ".join(heads) + " |",
                "| " + " | ".join(["---"] * (4 + len(heads))) + " |"]
        for engine, wl, label, page, thr in eng:
            field = "ops_s" if wl == "lookup_miss" else "mib_s"
            out.append(f"| {engine} | {label} | {page} | {thr} | " + " | ".join(
                t.cell(s, f"engine_{engine}_{wl}", None, thr, field) for s in heads) + " |")

    out += scale_section(fleet)

    out += ["", "## Memory, correctness, durability", "",
            "| | " + " | ".join(heads) + " |", "| " + " | ".join(["---"] * (1 + len(heads))) + " |",
            "| daemon peak RSS MiB (VmHWM) | " +
            " | ".join(t.cell(s, "rss", None, None, "peak_rss_mib") for s in heads) + " |",
            "| verification errors (total) | " +
            " | ".join(str(int(t.total(s, "verify_errors"))) for s in heads) + " |",
            "| I/O errors (total) | " +
            " | ".join(str(int(t.total(s, "errors"))) for s in heads) + " |",
            "| wait after the last close until all chunks are in S3, s | " +
            " | ".join(t.cell(s, "flush", None, None, "seconds") for s in heads) + " |"]

    out += ["", "## Ratios", ""]
    limits = [s for s in heads if s in LIMITS]
    others = [s for s in heads if s not in LIMITS]
    if "kvfs" in heads:
        out += ["### kvfs against the goals (issue 24)", "",
                "| goal | size MiB | threads | kvfs / limit | goal | met |",
                "| --- | --- | --- | --- | --- | --- |"]
        for ph, lim, lph, goal, label in GOALS:
            for size in t.sizes:
                for thr in t.threads:
                    a = t.median("kvfs", ph, size, thr, "mib_s")
                    b = t.median(lim, lph, size, thr, "mib_s")
                    if a is None or not b:
                        continue
                    out.append(f"| {label} | {size} | {thr} | {a / b:.2f}x | {goal}x | "
                               f"{'yes' if a / b >= goal else 'no'} |")
        peers = [s for s in others if s != "kvfs"]
        if peers:
            out += ["", "### kvfs / each peer (goal for cold reads: at least 2x)", "",
                    "| metric | size MiB | threads | " + " | ".join(f"kvfs / {p}" for p in peers)
                    + " |", "| " + " | ".join(["---"] * (3 + len(peers))) + " |"]
            for ph, label, size, thr in rows_by_size(t, THROUGHPUT, "mib_s"):
                a = t.median("kvfs", ph, size, thr, "mib_s")
                out.append(f"| {label} | {size} | {thr} | " + " | ".join(
                    ratio(a, t.median(p, ph, size, thr, "mib_s")) for p in peers) + " |")
            for kind in ("positive", "negative"):
                for thr in t.threads:
                    a = t.median("kvfs", f"lookup_{kind}", None, thr, "ops_s")
                    out.append(f"| {kind} lookups | - | {thr} | " + " | ".join(
                        ratio(a, t.median(p, f"lookup_{kind}", None, thr, "ops_s"))
                        for p in peers) + " |")
    else:
        out += ["kvfs was not measured in this run (see Notes), so there are no kvfs ratios yet.",
                ""]
    if limits and others:
        out += ["", "### Each filesystem / its limit", "",
                "Cold reads and writes against raw-s3, warm and hit reads against tmpfs.", "",
                "| metric | size MiB | threads | " + " | ".join(others) + " |",
                "| " + " | ".join(["---"] * (3 + len(others))) + " |"]
        for ph, lim in (("write", "raw-s3"), ("read_cold", "raw-s3"), ("read_warm", "tmpfs"),
                        ("read_hit", "tmpfs")):
            if lim not in limits:
                continue
            for size in t.sizes:
                for thr in t.threads:
                    b = t.median(lim, "read_cold" if ph == "read_cold" else ph, size, thr, "mib_s")
                    out.append(f"| {dict(THROUGHPUT)[ph]} / {lim} | {size} | {thr} | " + " | ".join(
                        ratio(t.median(s, ph, size, thr, "mib_s"), b) for s in others) + " |")
    if "rclone-full" in heads:
        t.notes.append("rclone-full: close() returns before the chunk is uploaded (see the wait "
                       "row), so its write MiB/s and close latency are not durable-write numbers")
    if t.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in t.notes]
    return "\n".join(out) + "\n"


def scale_section(rows):
    """kvfs at scale (bench/fleet_bench.py): many readers on one mount, many names, a fleet."""
    if not rows:
        return []
    out = ["", "## Scale (kvfs, bench/fleet_bench.py)", "",
           "Chunks are named by the SHA-256 of their bytes and every read is checked against its "
           "name. Latency: one whole chunk (open, read, close).", ""]
    rd = [r for r in rows if r.get("test") == "readers"]
    if rd:
        out += ["| readers on one mount | chunk MiB | chunks | MiB/s | p50 ms | p99 ms | "
                "daemon CPU s/GiB | errors | verification failures |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['readers']} {r['phase']} | {r['chunk_mib']} | {r['chunks']} | {r['mib_s']} "
                f"| {r['p50_ms']} | {r['p99_ms']} | {r['daemon_cpu_s_per_gib']} | {r['errors']} "
                f"| {r['verification_failures']} |" for r in rd]
        out.append("")
    nm = [r for r in rows if r.get("test") == "names"]
    if nm:
        out += ["| names in one flat prefix | first listing entries/s | missed lookups/s | "
                "existing-name lookups/s | errors |", "| --- | --- | --- | --- | --- |"]
        for r in nm:
            how = (f" (extrapolated from {r['extrapolated_from'][0]:,} and "
                   f"{r['extrapolated_from'][1]:,})") if r.get("extrapolated_from") else ""
            miss = r["miss_lookups_per_s"]
            miss = "- (one LIST per miss past 100k entries)" if miss is None else f"{miss:,}"
            out.append(f"| {r['names']:,}{how} | {r['list_entries_per_s']:,} | {miss} | "
                       f"{r['hit_lookups_per_s']:,} | {r['errors']} |")
        out.append("")
    fl = [r for r in rows if r.get("test") == "fleet" and r.get("phase") != "lookups"]
    lk = [r for r in rows if r.get("test") == "fleet" and r.get("phase") == "lookups"]
    if fl:
        out += ["| fleet: mounts of one bucket | operation | ops | MiB/s | p50 ms | p99 ms | "
                "misses (not yet seen) | errors | verification failures | daemons CPU s/GiB |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['mounts']} ({r['writers_per_mount']} writer, {r['readers_per_mount']} "
                f"readers each) | {r['phase']} | {r['ops']} | {r['mib_s']} | {r['p50_ms']} | "
                f"{r['p99_ms']} | {r.get('misses', 0)} | {r['errors']} | "
                f"{r['verification_failures']} | {r['daemons_cpu_s_per_gib']} |" for r in fl]
    if lk:
        out += ["", "| fleet: lookups | per mount /s | visibility p50 / p99 / max s | loads "
                "that missed a chunk stored > 1 s before | store requests per lookup (kvfs) | "
                "$ per 1M lookups (kvfs) | requests per lookup, $ per 1M (LMCache S3 adapter) |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['lookups']:,} in {r['seconds']} s on {r['mounts']} mounts | "
                f"{r['lookups_per_s_per_mount']} lookups, {r['requests_per_s_per_mount']} requests"
                f" | {r['visibility_p50_s']} / {r['visibility_p99_s']} / {r['visibility_max_s']}"
                f" | {r['late_misses']} | {r['requests_per_lookup']} | "
                f"{r['usd_per_million_lookups']} | {r['lmcache_s3_requests_per_lookup']}, "
                f"{r['lmcache_s3_usd_per_million_lookups']} |" for r in lk]
    return out


def size_panels(t):
    """The size sweep's panels: (title, y label, [(x label, {system: values})])."""
    thr = max(t.threads) if t.threads else 1
    panels = []
    for ph, title in [("write", "write"), ("read_cold", "cold read"), ("read_warm", "warm read")]:
        groups = [(f"{size} MiB", {s: t.get(s, ph, size, thr, "mib_s") for s in t.systems})
                  for size in t.sizes]
        if any(v for _, g in groups for v in g.values()):
            panels.append((f"{title}, {thr} thread{'s' if thr > 1 else ''}", "MiB/s", groups))
    return panels


def engine_panels(t):
    """The engines' workloads (engines_bench.py), one panel per workload, one group per engine
    pattern at its largest thread count."""
    panels = []
    for wl, label in ENGINE_WORKLOADS:
        field = "ops_s" if wl == "lookup_miss" else "mib_s"
        groups = []
        for engine, page in sorted(t.engines.items()):
            thr = max((th for th in t.threads
                       if any(t.get(s, f"engine_{engine}_{wl}", None, th, field)
                              for s in t.systems)), default=None)
            if thr is not None:
                groups.append((f"{engine}\n{page} MiB x{thr}",
                               {s: t.get(s, f"engine_{engine}_{wl}", None, thr, field)
                                for s in t.systems}))
        if groups:
            panels.append((f"engines: {label}", "ops/s" if field == "ops_s" else "MiB/s", groups))
    return panels


def chart(t, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib missing (apt-get install python3-matplotlib): no chart",
              file=sys.stderr)
        return False
    rows = [r for r in (size_panels(t), engine_panels(t)) if r]
    if not rows:
        return False
    ncols = max(len(r) for r in rows)
    fig, axes = plt.subplots(len(rows), ncols, figsize=(5 * ncols, 4.4 * len(rows)),
                             squeeze=False)
    width = 0.8 / max(1, len(t.systems))
    colors = {s: f"C{i}" for i, s in enumerate(t.systems)}  # same colour in every panel
    for r, panels in enumerate(rows):
        for c in range(ncols):
            ax = axes[r][c]
            if c >= len(panels):
                ax.axis("off")
                continue
            title, unit, groups = panels[c]
            for i, s in enumerate(t.systems):
                xs, ys, lo, hi = [], [], [], []
                for j, (_, by_system) in enumerate(groups):
                    vals = by_system.get(s)
                    if not vals:
                        continue
                    med = statistics.median(vals)
                    xs.append(j + (i - (len(t.systems) - 1) / 2) * width)
                    ys.append(med)
                    lo.append(med - min(vals))
                    hi.append(max(vals) - med)
                if xs:
                    ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=s, color=colors[s])
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels([g for g, _ in groups], fontsize=8)
            ax.set_title(title)
            ax.set_ylabel(f"{unit}, log scale (median, min-max)")
            ax.set_yscale("log")  # the tmpfs limit is 10x the network rows
            ax.grid(axis="y", alpha=0.3)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[s]) for s in t.systems]
    axes[0][0].legend(handles, t.systems, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def checkout_path(path):
    """path relative to the checkout when it is inside it, else absolute."""
    p = os.path.abspath(path)
    rel = os.path.relpath(p, os.path.dirname(BENCH))
    return p if rel.startswith("..") else rel


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True)
    ap.add_argument("--meta")
    ap.add_argument("--md", default="-")
    ap.add_argument("--png")
    ap.add_argument("--fleet", help="bench/fleet_bench.py rows (JSON lines)")
    ap.add_argument("--append", action="append", default=[],
                    help="a Markdown report of another step of the run (bench/lmcache_s3_vs_fs.py"
                    " --out), appended as a section of its own")
    a = ap.parse_args()
    t = Table(load(a.results))
    meta = json.load(open(a.meta)) if a.meta and os.path.exists(a.meta) else {}
    fleet = load(a.fleet) if a.fleet and os.path.exists(a.fleet) else []
    md = markdown(t, meta, fleet, checkout_path(os.path.dirname(os.path.abspath(a.results))))
    if a.png and chart(t, a.png):
        md += f"\n![throughput chart]({os.path.basename(a.png)})\n"
    for path in a.append:
        # Its own report, one heading level down: it keeps its header (machine, load at its
        # start, command), since it ran after the rows above, on its own server.
        with open(path) as f:
            md += "\n" + "".join("#" + l if l.startswith("#") else l for l in f)
    # The profile-based analysis (where the time goes, what would close the gaps) is kept by hand
    # in bench/ANALYSIS.md. It is linked, not copied: a copy froze in every report and went stale.
    analysis = os.path.join(BENCH, "ANALYSIS.md")
    target = analysis
    if a.md != "-" and not os.path.isabs(checkout_path(a.md)):
        target = os.path.relpath(analysis, os.path.dirname(os.path.abspath(a.md)))
    md += ("\nAnalysis (where the time goes, what would close the gaps; kept by hand): "
           f"[bench/ANALYSIS.md]({target}).\n")
    if a.md == "-":
        sys.stdout.write(md)
    else:
        with open(a.md, "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
