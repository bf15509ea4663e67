"""Helpers shared by the real-mount tests (run_mount_test.py, daemon_test.py)."""
import errno
import mmap
import os
import sys


def skip_or_fail(reason, require_var):
    """Exit 77 (ctest SKIP_RETURN_CODE) - or fail when CI requires the missing piece."""
    if os.environ.get(require_var) == "1":
        print("FAIL (%s=1): %s" % (require_var, reason))
        sys.exit(1)
    print("SKIP: " + reason)
    sys.exit(77)


def expect_errno(fn, code, what, report=print):
    try:
        fn()
    except OSError as e:
        assert e.errno == code, "%s: errno %s, expected %s" % (what, e.errno, code)
        report("ok: %s -> %s" % (what, errno.errorcode[code]))
        return
    raise AssertionError("%s: succeeded, expected %s" % (what, errno.errorcode[code]))


def read_direct(path, size=None):
    """Reads a whole file with O_DIRECT: the kernel page cache (kept across opens) is bypassed,
    so every byte comes from the daemon."""
    if size is None:
        size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, size + mmap.PAGESIZE)  # page-aligned
        got = 0
        while True:
            n = os.preadv(fd, [memoryview(buf)[got:]], got)
            if n == 0:
                break
            got += n
        return bytes(buf[:got])
    finally:
        os.close(fd)
