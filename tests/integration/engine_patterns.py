"""The file I/O of the inference engines' disk tiers, system call for system call, as read from
their public source (docs/engines.md). Shared by tests/integration/engines_two_mounts_replay.py
(checks) and bench/engines_bench.py (timings). Python 3 stdlib only.

Every engine class takes the directory it is pointed at (`root`) and offers:
  path(h)       where chunk/page number h lives (h: an int; names derive from sha256(h))
  lookup(h)     the engine's existence check of h
  store(h, b)   its store of bytes b as h (skipped by the engine when h exists, as upstream)
  load(h, n)    its read of h (n bytes of payload), returning the payload
  evict(h)      what its evictor (or an external cleaner) does to h
  scan()        its start-up scan: the set of h-names it would recover (or None: no scan)
"""
import ctypes
import errno
import hashlib
import mmap
import os
import struct
import threading
import urllib.parse
import uuid

_libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2
MODEL = "meta-llama/Llama-3.1-8B-Instruct"  # contains '/', as real model names do


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def utimensat_atime_now(path):
    """llm-d's update_atime: utimensat(AT_FDCWD, path, {UTIME_NOW, UTIME_OMIT}, 0)."""
    ts = (_Timespec * 2)(_Timespec(0, UTIME_NOW), _Timespec(0, UTIME_OMIT))
    if _libc.utimensat(AT_FDCWD, os.fsencode(path), ts, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)


def fallocate(fd, size):
    """fallocate(2) itself (os.posix_fallocate would emulate it by writing every block)."""
    _libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    if _libc.fallocate(fd, 0, 0, size) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def hexhash(h, n=64):
    return hashlib.sha256(b"kv%d" % h).hexdigest()[:n]


def payload(h, size):
    block = hashlib.sha256(b"payload%d" % h).digest() * 2048  # 64 KiB
    return (block * (size // len(block) + 1))[:size]


def read_all(fd, n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = os.readv(fd, [view[got:]])
        if k == 0:
            break
        got += k
    return bytes(buf[:got])


class LlmD:
    """vLLM offloading connector + llm-d llmd_fs_backend (csrc/storage/backends/fs_io/file_io.cpp,
    file_mapper.py, storage_offload.cpp)."""

    name = "llmd"
    TMP_SUFFIX = "_%d.tmp" % 3141592653  # thread_local "_" + random_device() + ".tmp"

    def __init__(self, root, blocks_per_file=4):
        self.base = os.path.join(root, MODEL, "block_size_16_blocks_per_file_%d" % blocks_per_file,
                                 "tp_1_pp_size_1_pcp_size_1", "rank_0", "bfloat16")

    def path(self, h):
        k = hexhash(h)
        return os.path.join(self.base, k[:3], k[3:5], k + ".bin")

    def lookup(self, h):
        return os.path.exists(self.path(h))  # manager.py lookup()

    def store(self, h, data):
        target = self.path(h)
        try:  # std::ifstream(dst_file).good(): exists -> refresh atime and skip
            with open(target, "rb"):
                pass
            utimensat_atime_now(target)
            return False
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(target), exist_ok=True)  # fs::create_directories(parent)
        tmp = target + self.TMP_SUFFIX
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT, 0o664)  # no O_TRUNC
        try:
            for off in range(0, len(data), 4 << 20):  # write_unbuffered: 4 MiB write() calls
                os.write(fd, data[off:off + (4 << 20)])
            os.rename(tmp, target)  # TmpFile::rename: before the close
        finally:
            os.close(fd)
        try:  # TmpFile::cleanup: std::remove(tmp) after the rename
            os.remove(tmp)
        except FileNotFoundError:
            pass
        return True

    def load(self, h, n):
        p = self.path(h)
        with open(p, "rb") as f:  # ifstream(ios::ate): size from the end, then one read
            size = f.seek(0, os.SEEK_END)
            f.seek(0)
            data = f.read(size)
        if len(data) != size:
            raise OSError(errno.EIO, "short read %d of %d" % (len(data), size), p)
        return data

    def evict(self, h):
        # pvc_evictor: crawl, cold by st_atime, `rm -f`.
        p = self.path(h)
        os.stat(p).st_atime
        os.remove(p)

    def scan(self):
        found = set()
        for d, _, files in os.walk(self.base):
            found.update(f for f in files if f.endswith(".bin"))
        return found

    def o_tmpfile_errno(self):
        """With O_TMPFILE on, llm-d opens the parent directory O_RDWR|O_TMPFILE, then linkat."""
        os.makedirs(self.base, exist_ok=True)
        try:
            fd = os.open(self.base, os.O_RDWR | os.O_TMPFILE, 0o664)
        except OSError as e:
            return e.errno
        os.close(fd)
        return 0


class LlmD022(LlmD):
    """llm-d fs backend 0.22, the final (frozen) release: llm-d/llm-d-kv-cache
    kv_connectors/llmd_fs_backend csrc/storage/backends/fs_io/file_io.cpp @97b72cc0,
    llmd_fs_backend/file_mapper.py (docs/engines.md). The 0.22 layout (the one vLLM kept), an
    ofstream temp opened O_WRONLY|O_CREAT|O_TRUNC written by one writev through its 1 MiB
    buffer, the rename while the descriptor is open, and a tail read (lseek END, lseek to
    size - read_size, one read)."""

    name = "llmd022"

    def __init__(self, root, group=0):
        digest = hashlib.sha256(MODEL.encode()).hexdigest()[:12]
        self.model_dir = os.path.join(root, "%s_%s" % (MODEL.replace("/", "_"), digest))
        self.base = self.model_dir + "_r0"
        self.group = group

    def path(self, h):
        k = hexhash(h)
        return os.path.join(self.base, k[:3], "%s_g%d" % (k[3:5], self.group), k + ".bin")

    def write_config(self):
        cfg = os.path.join(self.model_dir, "config.json")
        os.makedirs(self.model_dir, exist_ok=True)
        if not os.path.exists(cfg):  # open("w") if missing
            with open(cfg, "w") as f:
                f.write('{"model": "%s", "block_size": 16}\n' % MODEL)

    def store(self, h, data):
        target = self.path(h)
        try:  # ifstream(dst).good(): open(O_RDONLY) + close, no read; exists -> atime, skip
            os.close(os.open(target, os.O_RDONLY))
            utimensat_atime_now(target)
            return False
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(target), exist_ok=True)
        self.write_config()
        tmp = "%s_%d.tmp" % (target, 2718281828)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            mib = 1 << 20  # the stream's 1 MiB buffer: the slice leaves in one writev
            os.writev(fd, [data[off:off + mib] for off in range(0, len(data), mib)])
            os.rename(tmp, target)  # before the close
        except OSError:
            os.close(fd)
            try:
                os.remove(tmp)  # remove(tmp) only on an error
            except FileNotFoundError:
                pass
            raise
        os.close(fd)
        return True

    def load(self, h, n):
        p = self.path(h)
        fd = os.open(p, os.O_RDONLY)
        try:
            size = os.lseek(fd, 0, os.SEEK_END)  # ifstream(ios::ate)
            if size < n:
                raise OSError(errno.EIO, "file shorter than asked: %d < %d" % (size, n), p)
            os.lseek(fd, size - n, os.SEEK_SET)  # the tail: the blocks it needs
            data = b""
            while len(data) < n:
                got = os.read(fd, n - len(data))
                if not got:
                    break
                data += got
        finally:
            os.close(fd)
        if len(data) != n:
            raise OSError(errno.EIO, "short read %d of %d" % (len(data), n), p)
        return data


class Sglang:
    """SGLang HiCacheFile (python/sglang/srt/mem_cache/hicache_storage.py) with its LRU evictor."""

    name = "sglang"

    def __init__(self, root):
        self.dir = os.path.join(root, "hicache")
        self.suffix = "_%s_%d_%d" % ("-".join(MODEL.split("/")), 0, 1)
        os.makedirs(self.dir, exist_ok=True)

    def path(self, h):
        return os.path.join(self.dir, hexhash(h) + self.suffix + ".bin")

    def lookup(self, h):
        return os.path.exists(self.path(h))

    def store(self, h, data):
        if self.lookup(h):
            return False
        p = self.path(h)
        tmp = "%s.tmp.%d.%d.%s" % (p, os.getpid(), threading.get_ident(), uuid.uuid4().hex)
        with open(tmp, "wb") as f:  # numpy tofile(tmp_path)
            f.write(data)
        os.replace(tmp, p)
        return True

    def load(self, h, n):
        buf = bytearray(n)
        with open(self.path(h), "rb", buffering=0) as f:
            got = f.readinto(buf)
        if got != n:
            raise OSError(errno.EIO, "Short read %d of %d" % (got, n), self.path(h))
        return bytes(buf)

    def evict(self, h):
        os.remove(self.path(h))  # LRUFileEvictor._evict_one_lru_locked

    def scan(self):
        # _scan_existing_files_to_metadata_cache / the evictor's scan: listdir, .bin, own suffix
        return {fn for fn in os.listdir(self.dir)
                if fn.endswith(".bin") and fn[:-4].endswith(self.suffix)}


class LmcacheGds:
    """LMCache GdsBackend (lmcache/v1/storage_backend/gds_backend.py), POSIX fallback or cuFile
    compatibility mode (no GPU here: the bytes come from memory)."""

    name = "gds"
    HEADER = 4096  # _METADATA_MAX_SIZE

    def __init__(self, root, use_mmap=False):
        self.root = os.path.join(root, "gds")
        self.use_mmap = use_mmap
        os.makedirs(self.root, exist_ok=True)

    def key_str(self, h):
        return "%s@1@0@%d@bfloat16" % (MODEL, int(hexhash(h, 15), 16))

    def path(self, h):
        digits = str(int(hexhash(h, 15), 16))
        name = urllib.parse.quote(self.key_str(h), safe="") + ".kvcache.safetensors"
        return os.path.join(self.root, digits[:2], digits[2:4], name)

    def lookup(self, h):
        return os.path.exists(self.path(h) + ".metadata")  # _try_to_read_metadata

    def header(self, n):
        meta = b'{"kvcache": {"dtype": "BF16", "data_offsets": [0, %d]}}' % n
        meta += b" " * (self.HEADER - 8 - len(meta))
        return struct.pack("<Q", len(meta)) + meta

    def store(self, h, data):
        if self.lookup(h):  # the storage manager asks contains() before a put
            return False
        p = self.path(h)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        tmp = ".tmp" + uuid.uuid4().hex[:8]
        with open(p + tmp, "wb") as f:  # _save_gds: the header first
            f.write(self.header(len(data)))
        if self.use_mmap:  # POSIX fallback: ftruncate + shared mmap + memcpy
            fd = os.open(p + tmp, os.O_RDWR)
            os.ftruncate(fd, len(data) + self.HEADER)
            mm = mmap.mmap(fd, len(data) + self.HEADER, prot=mmap.PROT_WRITE,
                           flags=mmap.MAP_SHARED)
            os.close(fd)
            mm[self.HEADER:] = data
            mm.close()
        else:  # cuFile compatibility mode: open "r+", pwrite at the offset
            fd = os.open(p + tmp, os.O_RDWR)
            try:
                os.pwrite(fd, data, self.HEADER)
            finally:
                os.close(fd)
        os.rename(p + tmp, p)
        with open(p + ".metadata" + tmp, "wb") as f:  # save_metadata: temp then rename
            f.write(self.header(len(data)))
        os.rename(p + ".metadata" + tmp, p + ".metadata")
        return True

    def load(self, h, n):
        p = self.path(h)
        try:  # _read_metadata_info: O_NOATIME, 4 KiB
            fd = os.open(p + ".metadata", os.O_RDONLY | os.O_NOATIME)
        except OSError:
            fd = os.open(p + ".metadata", os.O_RDONLY)
        try:
            meta = os.read(fd, self.HEADER)
        finally:
            os.close(fd)
        if len(meta) != self.HEADER:
            raise OSError(errno.EIO, "metadata %d bytes" % len(meta), p)
        fd = os.open(p, os.O_RDONLY)  # _load_gds POSIX path: fstat + private mmap
        try:
            size = os.fstat(fd).st_size
            if size < self.HEADER + n:
                raise OSError(errno.EIO, "file too small: %d" % size, p)
            mm = mmap.mmap(fd, size, flags=mmap.MAP_PRIVATE | mmap.MAP_POPULATE,
                           prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        try:
            return mm[self.HEADER:self.HEADER + n]
        finally:
            mm.close()

    def evict(self, h):
        # GdsBackend.remove is not implemented; an operator's cleanup removes both files.
        os.remove(self.path(h) + ".metadata")
        os.remove(self.path(h))

    def scan(self):
        # _scan_metadata: 2-char dirs, 2-char subdirs, *.kvcache.safetensors.metadata
        found = set()
        for l1 in os.scandir(self.root):
            if not l1.is_dir() or len(l1.name) != 2:
                continue
            for l2 in os.scandir(l1.path):
                if not l2.is_dir() or len(l2.name) != 2:
                    continue
                for f in os.scandir(l2.path):
                    if f.is_file() and f.name.endswith(".kvcache.safetensors.metadata"):
                        found.add(f.name[:-len(".metadata")])
        return found


class LmcacheMp:
    """LMCache MP fs_native adapter (csrc/storage_backends/fs/connector.cpp) and the fs://
    connector: <model -SEP->@0x<rank>@<hash>.data, temp <name>.tmp, comma-separated base paths
    sharded by the hash."""

    name = "mp"

    def __init__(self, root, shards=2):
        self.bases = [os.path.join(root, "mp%d" % i) for i in range(shards)]
        for b in self.bases:
            os.makedirs(b, exist_ok=True)  # create_directories(base_path)

    def path(self, h):
        hh = int(hexhash(h, 16), 16)
        name = "%s@0x%08x@%016x.data" % (MODEL.replace("/", "-SEP-"), 0, hh)
        return os.path.join(self.bases[hh % len(self.bases)], name)

    def lookup(self, h):
        return os.path.exists(self.path(h))

    def store(self, h, data):
        p = self.path(h)
        if os.path.exists(p):  # "Skip if already stored on disk"
            return False
        tmp = p[:-len(".data")] + ".tmp"  # replace_extension(".tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.rename(tmp, p)
        return True

    def load(self, h, n):
        fd = os.open(self.path(h), os.O_RDONLY)
        try:
            data = read_all(fd, n)
        finally:
            os.close(fd)
        if len(data) != n:
            raise OSError(errno.EIO, "incomplete read %d of %d" % (len(data), n), self.path(h))
        return data

    def evict(self, h):
        os.remove(self.path(h))  # do_single_delete

    def scan(self):
        return {f for b in self.bases for f in os.listdir(b) if f.endswith(".data")}


ENGINES = {"llmd": LlmD, "llmd022": LlmD022, "sglang": Sglang, "gds": LmcacheGds, "mp": LmcacheMp}
# Page/chunk sizes each engine writes in a typical setup (bench defaults): llm-d 4 blocks of 16
# tokens per file, SGLang 64-token pages, LMCache 256-token chunks (8B model, bf16, TP1: 32 MiB;
# kept smaller here so a run stays short).
DEFAULT_MIB = {"llmd": 8, "llmd022": 8, "sglang": 2, "gds": 8, "mp": 8}

# The engines as they ship in 2026-11 (vLLM 0.33.0 fs tier, SGLang direct_io and fast_file,
# Dynamo KVBM): engine_patterns_vllm_sglang_dynamo.py, which uses the helpers above.
import engine_patterns_vllm_sglang_dynamo as _current  # noqa: E402

ENGINES.update(_current.ENGINES)
DEFAULT_MIB.update(_current.DEFAULT_MIB)
