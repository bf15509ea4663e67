"""pytest plugin (-p kvfs_outcomes): appends one JSON line per test outcome to the file named by
KVFS_OUTCOMES, flushed as each test ends, so a pytest that dies mid-run (a crash in the process
itself, a SIGBUS, the driver's timeout) still leaves what it got that far. The file is on local
disk, not on the mount under test. run.py reads it; nothing here changes how the tests run."""
import json
import os

_PATH = os.environ.get("KVFS_OUTCOMES")
_seen = {}  # nodeid -> worst outcome so far (setup/call/teardown each report)


def _write(rec):
    if _PATH:
        with open(_PATH, "a") as f:
            f.write(json.dumps(rec) + "\n")


def pytest_runtest_logreport(report):
    if report.passed and report.when != "call":
        return
    if report.skipped:
        outcome = "skipped"
        # (path, line, "Skipped: reason") for a skip; xfail gives wasxfail.
        msg = getattr(report, "wasxfail", None) or (
            report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr))
    elif report.failed:
        outcome = "failed" if report.when == "call" else "error"
        crash = getattr(report.longrepr, "reprcrash", None)
        msg = "%s: %s" % (report.when, crash.message if crash else str(report.longrepr)[-500:])
    else:
        outcome, msg = "passed", ""
    _write({"id": report.nodeid, "when": report.when, "outcome": outcome,
            "msg": msg[:1500], "secs": round(report.duration, 2)})


def pytest_collectreport(report):
    if report.skipped:  # a whole file skipped (pytest.importorskip, a module-level skip)
        lr = report.longrepr
        _write({"id": report.nodeid, "when": "collect", "outcome": "skipped",
                "msg": lr[2] if isinstance(lr, tuple) else str(lr), "secs": 0})
    elif report.failed:  # an import error of a whole file
        crash = getattr(report.longrepr, "reprcrash", None)
        _write({"id": report.nodeid, "when": "collect", "outcome": "error",
                "msg": crash.message if crash else str(report.longrepr)[-1500:], "secs": 0})
