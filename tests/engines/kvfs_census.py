"""What each test does on the mount (run.py --census): which of LMCache's tests store and load
files through kvfs, and which never touch it (mock connectors, key encoding, config parsing).

As a pytest plugin (-p kvfs_census) it only marks where each test begins and ends in the trace:
a stat of a path that does not exist, /kvfs-census-begin/<test id> and /kvfs-census-end/<test
id>. run.py runs pytest under `strace -f -y -e trace=%file` (every process and thread: the native
connectors' C++, NIXL's plugins, subprocesses), and classify() reads the trace between the marks:
  files   the test opened, created, renamed, removed, linked or truncated a file under the mount;
  dirs    only directories and lookups under the mount (mkdir, rmdir, stat, listing);
  none    nothing under the mount.
pytest's own work is not the test's: tmp_path's directory under --basetemp (its mkdir, listing,
the `-current` symlink) and the capture files opened before the first test. Nothing here changes
how the tests run."""
import os
import re
import urllib.parse

BEGIN, END = "/kvfs-census-begin/", "/kvfs-census-end/"


def _mark(prefix, nodeid):
    try:
        os.stat(prefix + urllib.parse.quote(nodeid, safe=""))
    except OSError:
        pass


def pytest_runtest_logstart(nodeid, location):
    _mark(BEGIN, nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _mark(END, nodeid)


LOOKUP = {"stat", "lstat", "newfstatat", "fstatat64", "statx", "access", "faccessat",
          "faccessat2", "readlink", "readlinkat", "statfs", "getxattr", "lgetxattr",
          "listxattr", "llistxattr", "getcwd", "inotify_add_watch"}
DIRS = {"mkdir", "mkdirat", "rmdir", "chdir"}
RANK = {"none": 0, "dirs": 1, "files": 2}
_CALL = re.compile(r"^(\d+)\s+(\w+)\((.*)$")
_ARG = re.compile(r'(?:(\w+|\d+)<([^>]*)>\s*,\s*)?"((?:[^"\\]|\\.)*)"')


def _kind(name, args):
    if name in LOOKUP:
        return "dirs"
    if name in DIRS or "O_DIRECTORY" in args or "AT_REMOVEDIR" in args:
        return "dirs"
    return "files"


def classify(trace, base):
    """{test id: (kind, first strace line that made it so)} from an `strace -f -y` output."""
    basetemp, tmp = os.path.join(base, "basetemp"), os.path.join(base, "tmp")
    events, dirs, current = {}, set(), None  # test id -> [(kind, path, line)]; directories seen
    with open(trace, errors="replace") as f:
        for line in f:
            m = _CALL.match(line)
            if not m:
                continue  # "<... resumed>", signals, exits
            name, args = m.group(2), m.group(3).split(") = ", 1)[0]
            if BEGIN in args or END in args:
                q = args.split('"', 2)[1]
                tid = urllib.parse.unquote(q.split("/", 2)[2])
                current = tid if q.startswith(BEGIN) else None
                events.setdefault(tid, [])
                continue
            if current is None or base not in args:
                continue
            paths = []
            for fdpath, path in ((a[1], a[2]) for a in _ARG.findall(args)):
                if not path.startswith("/") and fdpath:
                    path = os.path.join(fdpath, path) if path else fdpath
                paths.append(path)
            paths = [p for p in paths if p == base or p.startswith(base + "/")]
            if not paths:
                continue
            kind = _kind(name, args)
            if "S_IFDIR" in line or name in ("mkdir", "mkdirat"):
                dirs.add(paths[0])
            # pytest's tmp_path (basetemp/<test>N, its listing, the <test>current symlink) and
            # tempfile's look at TMPDIR itself are pytest's and Python's, not the test's.
            if paths[0] in (base, basetemp, tmp) or (
                    all(os.path.dirname(p) == basetemp for p in paths)
                    and (kind == "dirs" or paths[-1].endswith("current"))):
                continue
            # A read-only open of a directory (shutil.rmtree opens each one without
            # O_DIRECTORY) is a directory operation: decided once the test's calls are read.
            ro_open = name in ("open", "openat") and not re.search(
                r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", args)
            events[current].append((kind, paths[0], ro_open, line.strip()[:300]))
    out = {}
    for tid, evs in events.items():
        best = ("none", "")
        for kind, path, ro_open, line in evs:
            if kind == "files" and ro_open and path in dirs:
                kind = "dirs"
            if RANK[kind] > RANK[best[0]]:
                best = (kind, line)
        out[tid] = best
    return out
