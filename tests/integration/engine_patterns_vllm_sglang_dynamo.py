"""The engines' disk tiers as they ship in 2026-11, system call for system call: vLLM 0.33.0's fs
tier, SGLang HiCacheFile with direct_io and SGLang fast_file, Dynamo KVBM's disk tier (scratch file
and new_at_path). Same interface as engine_patterns.py (path, lookup, store, load, evict, scan);
registered in engine_patterns.ENGINES. Read from the engines' code and rewritten here (nothing
copied); each class names the file and version it follows.
Python 3 stdlib only. Not thread-safe per instance unless a class says so (the bench's threads
share one instance: VllmFs, SglangDirectIo, SglangFastFile and DynamoKvbmAtPath keep no state
between calls but a lock-guarded LRU; DynamoKvbm guards its slot map with a lock).
"""
import ctypes
import errno
import fcntl
import hashlib
import json
import mmap
import os
import random
import threading
import time
import uuid

import engine_patterns as ep

PAGE = mmap.PAGESIZE


def aligned(data):
    """A page-aligned copy of data (O_DIRECT needs aligned user buffers): a private anonymous
    mapping, as the engines' pinned host pools are."""
    mm = mmap.mmap(-1, max(len(data), 1))
    mm[:len(data)] = data
    return mm


def aligned_empty(n):
    return mmap.mmap(-1, max(n, 1))


class VllmFs:
    """vLLM 0.33.0 fs tier (TieringOffloadingSpec, tier type "fs"), as the wheel runs it:
    vllm/v1/kv_offload/tiering/fs/manager.py (FileSystemTierManager: config.json, O_DIRECT probe),
    tiering/fs/io.py (probe_o_direct, thread-local temp suffix) and file_mapper.py (layout), with
    the wheel's C extension vllm/fs_io_C.abi3.so doing the lookups, stores and loads (io.py uses
    it whenever it imports, and 0.33.0 ships it). The C extension's system calls were taken with
    strace from the pinned wheel (2026-11-26): lookup access(F_OK); store access(dst, F_OK) ->
    skip, create_directories(parent), open(tmp, O_WRONLY|O_CREAT|O_EXCL|O_TRUNC[|O_DIRECT], 0644),
    one write, close, rename(tmp, dst), and on any error (EEXIST from the rename included: "already
    stored") unlink(tmp); load open(O_RDONLY[|O_DIRECT]), one read(N), close, and a short read
    unlink(dst) + EIO (any other error leaves the file)."""

    name = "vllm"
    _tls = threading.local()

    def __init__(self, root, model=ep.MODEL, blocks_per_file=1):
        fields = {"model_name": model, "tokens_per_hash": 16, "blocks_per_file": blocks_per_file,
                  "tp_size": 1, "pp_size": 1, "pcp_size": 1, "dcp_size": 1,
                  "dtype": "torch.bfloat16", "kv_cache_groups": [],
                  "inference_engine": "vllm"}  # parallel_agnostic=True: rank 0, no extra field
        digest = hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":"))
                                .encode()).hexdigest()[:12]
        self.base = os.path.join(root, "vllm", "%s_%s" % (model.replace("/", "_"), digest))
        config = os.path.join(self.base, "config.json")
        os.makedirs(self.base, exist_ok=True)  # manager: makedirs(dirname(config_path))
        if not os.path.exists(config):
            with open(config, "w") as f:
                json.dump(fields, f, indent=2, sort_keys=True)
        self.use_o_direct = self.probe_o_direct()

    @classmethod
    def tmp_suffix(cls):  # one per thread for the life of the process
        if not hasattr(cls._tls, "suffix"):
            cls._tls.suffix = "_%d.tmp" % random.randint(0, 2 ** 63 - 1)
        return cls._tls.suffix

    def probe_o_direct(self):
        """probe_o_direct(): one page written O_DIRECT to .o_direct_probe_<n>.tmp, then removed;
        any OSError means buffered I/O from then on."""
        probe = os.path.join(self.base, ".o_direct_probe" + self.tmp_suffix())
        page = aligned_empty(PAGE)
        try:
            fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_DIRECT, 0o644)
            try:
                os.write(fd, page)
            finally:
                os.close(fd)
            return True
        except OSError:
            return False
        finally:
            page.close()
            try:
                os.remove(probe)
            except OSError:
                pass

    def path(self, h):
        k = ep.hexhash(h)
        return os.path.join(self.base + "_r0", k[:3], "%s_g0" % k[3:5], k + ".bin")

    def lookup(self, h):
        return os.access(self.path(h), os.F_OK)  # batch_lookup: access(F_OK), GIL released

    def _direct(self):
        return os.O_DIRECT if self.use_o_direct else 0

    def store(self, h, data):
        dst = self.path(h)
        if os.access(dst, os.F_OK):
            return False
        tmp = dst + self.tmp_suffix()
        os.makedirs(os.path.dirname(dst), exist_ok=True)  # std::filesystem::create_directories
        buf = aligned(data)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_TRUNC | self._direct(),
                         0o644)
            try:
                n = os.write(fd, memoryview(buf)[:len(data)])
                if n != len(data):
                    raise OSError(errno.EIO, "short write %d of %d" % (n, len(data)), tmp)
            finally:
                os.close(fd)
            try:
                os.rename(tmp, dst)
            except FileExistsError:  # another writer published it: the store is done
                os.unlink(tmp)
            return True
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        finally:
            buf.close()

    def load(self, h, n):
        src = self.path(h)
        buf = aligned_empty(n)
        try:
            fd = os.open(src, os.O_RDONLY | self._direct())
            try:
                got = os.readv(fd, [memoryview(buf)[:n]])  # the C code's one read(2) of N bytes
            finally:
                os.close(fd)
            if got < n:  # a provable short read: the file is removed, the load fails
                try:
                    os.unlink(src)
                except OSError:
                    pass
                raise OSError(errno.EIO, "short read %d of %d (file removed)" % (got, n), src)
            return bytes(buf[:n])
        finally:
            buf.close()

    def evict(self, h):
        # 0.33.0 has no evictor of its own; upstream's LRU ("testing only") does os.remove.
        os.remove(self.path(h))

    def scan(self):
        return None  # no start-up scan: lookups go to the filesystem


class SglangDirectIo:
    """SGLang HiCacheFile with "direct_io": true (sgl-project/sglang PR #20613, tree @4ae9139e
    python/sglang/srt/mem_cache/hicache_storage.py and docs/advanced_features/
    hicache_file_direct_io.md; not in the pinned 0.5.23, not in the later HiCacheFile @001067ff).
    No temp file: set() opens the final name O_CREAT|O_TRUNC|O_WRONLY|O_DIRECT, 0644, one writev,
    close; get() opens O_RDONLY|O_DIRECT, one readv, a short read is an error (raised). No
    fallback to buffered I/O. Lookup exists(); batch_exists_v2 scans the directory (scandir)."""

    name = "sglang_dio"

    def __init__(self, root):
        self.dir = os.path.join(root, "hicache-dio")
        self.suffix = "_%s_%d_%d" % ("-".join(ep.MODEL.split("/")), 0, 1)
        if not os.path.exists(self.dir):  # rank 0
            os.makedirs(self.dir, exist_ok=True)

    def path(self, h):
        return os.path.join(self.dir, ep.hexhash(h) + self.suffix + ".bin")

    def lookup(self, h):
        return os.path.exists(self.path(h))

    def store(self, h, data):
        if self.lookup(h):
            return False
        buf = aligned(data)
        try:
            fd = os.open(self.path(h), os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_DIRECT, 0o644)
            try:
                n = os.writev(fd, [memoryview(buf)[:len(data)]])
                if n != len(data):
                    raise OSError(errno.EIO, "Short write", self.path(h))
            finally:
                os.close(fd)
        finally:
            buf.close()
        return True

    def load(self, h, n):
        buf = aligned_empty(n)
        try:
            fd = os.open(self.path(h), os.O_RDONLY | os.O_DIRECT)
            try:
                got = os.readv(fd, [memoryview(buf)[:n]])
            finally:
                os.close(fd)
            if got != n:
                raise OSError(errno.EIO, "Short read %d of %d" % (got, n), self.path(h))
            return bytes(buf[:n])
        finally:
            buf.close()

    def evict(self, h):
        os.remove(self.path(h))  # clear() (no evictor in this version)

    def scan(self):
        # batch_exists_v2 without a metadata cache: scandir of the directory, is_file().
        with os.scandir(self.dir) as it:
            return {e.name for e in it if e.is_file() and e.name.endswith(self.suffix + ".bin")}


class SglangFastFile:
    """SGLang fast_file (upstream, not in 0.5.23): python/sglang/srt/mem_cache/storage/fast_file/
    fast_file_store.py and lru_file_evictor.py @a71c2814. Pages in <root>/namespace-<24 hex>/;
    set(): getsize(final) == size -> skip, else (missing or another size) a temp
    <final>.tmp.<pid>.<tid>.<uuid> opened O_WRONLY|O_CREAT|O_EXCL, 0600, writev of the page's
    buffers (at most IOV_MAX per call, looped), close, os.replace - also over a page of another
    size; on error remove(temp), set fails. get(): open O_RDONLY, fstat size must equal, readv loop;
    a size mismatch or short read removes the page (unless getsize now matches: a writer replaced
    it). LRU evictor (max_size): os.remove of the oldest pages; start-up scan (storage owner)
    scandir + stat, removes temps older than stale_temp_age_s (3600 s)."""

    name = "fastfile"
    IOVECS = 64  # a page_first pool page: one buffer per layer (K and V), e.g. 32 layers x 2

    def __init__(self, root, max_pages=0, stale_temp_age_s=3600.0):
        self.suffix = "_%s_%d_%d" % ("-".join(ep.MODEL.split("/")), 0, 1)
        identity = "\0".join(str(f) for f in (1, ep.MODEL, 0, 1, 0, 1, 0, 1, False, None, False))
        self.dir = os.path.join(root, "fastfile",
                                "namespace-" + hashlib.sha256(identity.encode()).hexdigest()[:24])
        os.makedirs(self.dir, exist_ok=True)
        self.iov_max = os.sysconf("SC_IOV_MAX")
        self.max_pages = max_pages  # stands for max_size (pages here all have one size)
        self.stale_temp_age_s = stale_temp_age_s
        self._lock = threading.Lock()
        self._lru = {}  # stem -> None, oldest first (dicts keep insertion order)
        self.removed = []  # what the LRU and the corrupt-page path removed (for the checks)
        if max_pages or stale_temp_age_s > 0:
            self._startup_scan(track=bool(max_pages))

    def path(self, h):
        return os.path.join(self.dir, ep.hexhash(h) + self.suffix + ".bin")

    def lookup(self, h):
        return os.path.exists(self.path(h))

    @classmethod
    def _iovecs(cls, view):
        step = -(-len(view) // cls.IOVECS)
        return [view[i:i + step] for i in range(0, len(view), step)]

    def store(self, h, data):
        final = self.path(h)
        try:
            have = os.path.getsize(final)
        except FileNotFoundError:
            have = None
        if have == len(data):
            self._touch(final)
            return False
        tmp = "%s.tmp.%d.%d.%s" % (final, os.getpid(), threading.get_ident(), uuid.uuid4().hex)
        self._reserve(final)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                pending = self._iovecs(memoryview(data))
                while pending:
                    n = os.writev(fd, pending[:self.iov_max])
                    if n == 0:
                        raise OSError(errno.EIO, "Short write", tmp)
                    pending = _consume(pending, n)
            finally:
                os.close(fd)
            os.replace(tmp, final)
            return True
        except OSError:
            self._abort(final)
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise  # the engine logs "Failed to save tensor" and the set returns False

    def load(self, h, n):
        p = self.path(h)
        buf = bytearray(n)
        fd = os.open(p, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            got = 0
            if size == n:
                pending = self._iovecs(memoryview(buf))
                while pending:
                    k = os.readv(fd, pending[:self.iov_max])
                    if k == 0:
                        break
                    got += k
                    pending = _consume(pending, k)
        finally:
            os.close(fd)
        if size != n or got != n:
            self._remove_corrupt(p, n)
            raise OSError(errno.EIO, "corrupt page: size %d, read %d, expected %d (removed)"
                          % (size, got, n), p)
        self._touch(p)
        return bytes(buf)

    def _remove_corrupt(self, p, n):
        try:
            if os.path.getsize(p) == n:  # replaced by a writer since the open
                return
            os.remove(p)
            self.removed.append(os.path.basename(p))
        except FileNotFoundError:
            pass

    def evict(self, h):
        os.remove(self.path(h))  # LRUFileEvictor._evict_one_lru_locked

    def _touch(self, p):
        if self.max_pages:
            with self._lock:
                self._lru.pop(os.path.basename(p), None)
                self._lru[os.path.basename(p)] = None

    def _reserve(self, p):
        if not self.max_pages:
            return
        with self._lock:
            self._lru.pop(os.path.basename(p), None)
            while len(self._lru) >= self.max_pages:
                victim = next(iter(self._lru))
                del self._lru[victim]
                try:
                    os.remove(os.path.join(self.dir, victim))
                    self.removed.append(victim)
                except FileNotFoundError:
                    pass
            self._lru[os.path.basename(p)] = None

    def _abort(self, p):
        if self.max_pages:
            with self._lock:
                self._lru.pop(os.path.basename(p), None)

    def _startup_scan(self, track):
        cutoff = time.time() - self.stale_temp_age_s
        pages = []
        for e in os.scandir(self.dir):
            stem, marker, _ = e.name.partition(".bin.tmp.")
            is_temp = bool(marker) and stem.endswith(self.suffix)
            is_page = track and e.name.endswith(self.suffix + ".bin")
            if not (is_temp or is_page) or not e.is_file(follow_symlinks=False):
                continue
            st = e.stat(follow_symlinks=False)
            if is_temp:
                if self.stale_temp_age_s > 0 and st.st_mtime <= cutoff:
                    try:
                        os.remove(e.path)
                        self.removed.append(e.name)
                    except FileNotFoundError:
                        pass
                continue
            pages.append((st.st_mtime, e.name))
        for _, name in sorted(pages):
            self._lru[name] = None

    def scan(self):
        with os.scandir(self.dir) as it:
            return {e.name for e in it if e.name.endswith(self.suffix + ".bin")}


def _consume(bufs, n):
    while bufs and n >= len(bufs[0]):
        n -= len(bufs[0])
        bufs = bufs[1:]
    if n:
        bufs = [bufs[0][n:]] + bufs[1:]
    return bufs


def mkostemp(template, flags):
    """mkostemp(3) itself: O_RDWR|O_CREAT|O_EXCL plus flags, 0600, the XXXXXX filled in."""
    buf = ctypes.create_string_buffer(os.fsencode(template))
    fd = ep._libc.mkostemp(buf, flags)
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), template)
    return fd, os.fsdecode(buf.value)


def dynamo_allocate_file(fd, size, zero_fill=False):
    """allocate_file(): fallocate(fd, 0, 0, size); on EOPNOTSUPP only, ftruncate(size) (default)
    or, with DYN_KVBM_DISK_ZEROFILL_FALLBACK, 16 MiB page-aligned zero writes through the O_DIRECT
    descriptor (a dup: the file position) then ftruncate to the exact size. Returns which path."""
    try:
        ep.fallocate(fd, size)
        return "fallocate"
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            raise
    if not zero_fill:
        os.ftruncate(fd, size)
        return "ftruncate"
    zeros = aligned_empty(16 << 20)
    dup = os.dup(fd)
    try:
        written = 0
        while written < size:
            n = min(len(zeros), -(-(size - written) // PAGE) * PAGE)
            k = os.write(dup, memoryview(zeros)[:n])
            if k != n:
                raise OSError(errno.EIO, "Partial write %d of %d" % (k, n))
            written += k
        if written > size:
            os.ftruncate(fd, size)
    finally:
        os.close(dup)
        zeros.close()
    return "zero-fill"


class DynamoKvbm:
    """Dynamo KVBM disk tier (G3), ai-dynamo/dynamo lib/llm/src/block_manager/storage/disk.rs
    @1fe5a661, DiskStorage::new: mkostemp("<DYN_KVBM_DISK_CACHE_DIR>/dynamo-kvbm-disk-cache-XXXXXX",
    O_CLOEXEC), fcntl(F_GETFL) + fcntl(F_SETFL, |O_DIRECT), allocate_file (fallocate, on EOPNOTSUPP
    ftruncate or the zero-fill), NIXL registration, unlink; blocks are then read and written at
    offsets through the open descriptor (NIXL POSIX: pwrite/pread of page-aligned buffers), and the
    file is freed at close. One scratch file per instance, per node: nothing is shared or kept.
    slots x block bytes is the tier's size (the file's). Thread-safe (the slot map is locked)."""

    name = "dynamo"
    PROCESS_LOCAL = True  # the tier is gone with the process (engines_bench refills it)

    def __init__(self, root, slots=128, block=1 << 20, zero_fill=False):
        self.dir = os.path.join(root, "kvbm")
        os.makedirs(self.dir, exist_ok=True)  # create_dir_all(parent)
        self.block = block
        self.slots = slots
        self.fd, self.file = mkostemp(os.path.join(self.dir, "dynamo-kvbm-disk-cache-XXXXXX"),
                                      os.O_CLOEXEC)
        try:
            fl = fcntl.fcntl(self.fd, fcntl.F_GETFL)
            fcntl.fcntl(self.fd, fcntl.F_SETFL, fl | os.O_DIRECT)
            self.allocated_by = dynamo_allocate_file(self.fd, slots * block, zero_fill)
        except OSError:
            # DiskStorage::new returns the error here with the descriptor still open and the file
            # still linked (only a failed F_SETFL closes and unlinks): the caller closes it.
            raise
        os.unlink(self.file)  # after registration: freed at the last close
        self._lock = threading.Lock()
        self._slot = {}  # block -> slot (KVBM's registry)
        self._free = list(reversed(range(slots)))  # KVBM's free list

    def close(self):
        os.close(self.fd)

    def path(self, h):
        return self.file  # one file, already unlinked

    def lookup(self, h):
        with self._lock:  # KVBM's block registry is in memory: no file-system call
            return h in self._slot

    def store(self, h, data):
        if len(data) > self.block:
            raise OSError(errno.EINVAL, "block of %d bytes in %d-byte slots" % (len(data), self.block))
        with self._lock:
            if h in self._slot:
                return False
            if not self._free:
                raise OSError(errno.ENOSPC, "all %d slots used" % self.slots)
            slot = self._slot[h] = self._free.pop()
        buf = aligned(data)
        try:
            n = os.pwrite(self.fd, memoryview(buf)[:len(data)], slot * self.block)
        finally:
            buf.close()
        if n != len(data):
            raise OSError(errno.EIO, "short pwrite %d of %d" % (n, len(data)))
        return True

    def load(self, h, n):
        with self._lock:
            slot = self._slot[h]
        buf = aligned_empty(n)
        try:
            got = os.preadv(self.fd, [memoryview(buf)[:n]], slot * self.block)
            if got != n:
                raise OSError(errno.EIO, "short pread %d of %d" % (got, n))
            return bytes(buf[:n])
        finally:
            buf.close()

    def evict(self, h):
        with self._lock:  # the block returns to KVBM's free list: no file-system call
            if h in self._slot:
                self._free.append(self._slot.pop(h))

    def scan(self):
        return None


class DynamoKvbmAtPath:
    """Dynamo KVBM DiskStorage::new_at_path(path, size, create, persist) (same file, @1fe5a661):
    create_dir_all(parent) if missing, open(path, O_RDWR|O_CLOEXEC[|O_CREAT]|O_DIRECT, 0644),
    allocate_file when creating (fallocate, on EOPNOTSUPP ftruncate; on failure close + unlink
    the path), persist = not unlinked at drop. Its callers (remote disk transfers, a DiskKey per
    transfer) were not traced: here one named file per block, written by pwrite at offset 0 and
    read by pread (create=false) on any node; existence = stat of the name (a guess)."""

    name = "dynamo_path"

    def __init__(self, root):
        self.dir = os.path.join(root, "kvbm-persist")

    def path(self, h):
        k = ep.hexhash(h)
        return os.path.join(self.dir, k[:2], k + ".kvbm")

    def lookup(self, h):
        return os.path.exists(self.path(h))

    def open(self, p, size, create):
        parent = os.path.dirname(p)
        if not os.path.exists(parent):
            os.makedirs(parent, exist_ok=True)
        flags = os.O_RDWR | os.O_CLOEXEC | os.O_DIRECT | (os.O_CREAT if create else 0)
        fd = os.open(p, flags, 0o644)
        if create:
            try:
                dynamo_allocate_file(fd, size)
            except OSError:
                os.close(fd)
                try:
                    os.unlink(p)
                except OSError:
                    pass
                raise
        return fd

    def store(self, h, data):
        if self.lookup(h):
            return False
        fd = self.open(self.path(h), len(data), create=True)
        buf = aligned(data)
        try:
            n = os.pwrite(fd, memoryview(buf)[:len(data)], 0)
            if n != len(data):
                raise OSError(errno.EIO, "short pwrite %d of %d" % (n, len(data)))
        finally:
            buf.close()
            os.close(fd)  # persist: the named file stays
        return True

    def load(self, h, n):
        fd = self.open(self.path(h), n, create=False)
        buf = aligned_empty(n)
        try:
            got = os.preadv(fd, [memoryview(buf)[:n]], 0)
            if got != n:
                raise OSError(errno.EIO, "short pread %d of %d" % (got, n))
            return bytes(buf[:n])
        finally:
            buf.close()
            os.close(fd)

    def evict(self, h):
        os.unlink(self.path(h))  # a drop with persist=false

    def scan(self):
        found = set()
        for _, _, files in os.walk(self.dir):
            found.update(f for f in files if f.endswith(".kvbm"))
        return found


ENGINES = {"vllm": VllmFs, "sglang_dio": SglangDirectIo, "fastfile": SglangFastFile,
           "dynamo": DynamoKvbm, "dynamo_path": DynamoKvbmAtPath}
DEFAULT_MIB = {"vllm": 2, "sglang_dio": 2, "fastfile": 2, "dynamo": 1, "dynamo_path": 2}
