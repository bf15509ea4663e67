"""The bounded tier's fault scenarios for the campaign (campaign.py): the collector killed
mid-stream, a chunk removed while a node reads it, a chunk written again after its removal.
Each fills a row: bytes lost (acknowledged writes that must stay but are missing) and bytes
corrupt (bytes served that differ from the object)."""
import errno
import os
import time

from bounded_tier_test import wait_for as _wait  # one deadline poll for both
from daemon_test import MIB, Daemon, chunk, write_chunk

CAP_MIB = 16
INTERVAL = 1
TTL = 2
OPTS = {"store_capacity": "%dMiB" % CAP_MIB, "store_gc_interval": "%ds" % INTERVAL,
        "metadata_cache_ttl_secs": str(TTL)}


def _names(store):
    return {k.rsplit("/", 1)[-1]: v for k, v in store.keys().items()
            if "~kvfs-tier/" not in k and "~kvfs-feed/" not in k and not k.endswith("/")}


def _tier(node):
    return {k: v for k, v in node.stats().items() if k.startswith("kvfs_tier_")}


def _nodes(ctx, store, names):
    return [Daemon(ctx, store, ctx.path("mnt-" + n), ctx.path("cache-" + n), opts=OPTS, name=n)
            for n in names]


def collector_killed(ctx, row):
    """SIGKILL of the collector's daemon in the middle of a stream of 2x the capacity: another
    node takes the lease, the bound holds, the chunks written last (inside the grace period)
    are all there and read right."""
    store = ctx.store()
    nodes = _nodes(ctx, store, "abc")
    written = []
    for i in range(CAP_MIB):
        n = "k%03d" % i
        write_chunk(nodes[0].mnt, n, chunk(n, MIB))
        written.append(n)
        time.sleep(0.1)
    nodes[0].sync()  # stored before a node is killed (write_back: a close precedes its upload)
    holder = _wait(lambda: [x for x in nodes if _tier(x).get("kvfs_tier_is_collector") == 1],
                   "a collector", 10)[0]
    holder.kill()
    ctx.daemons.remove(holder)
    rest = [x for x in nodes if x is not holder]
    t0 = time.time()
    for i in range(CAP_MIB, 2 * CAP_MIB):
        n = "k%03d" % i
        write_chunk(rest[0].mnt, n, chunk(n, MIB))
        written.append(n)
        time.sleep(0.1)
    rest[0].sync()
    _wait(lambda: [x for x in rest if _tier(x).get("kvfs_tier_is_collector") == 1],
          "another node takes the lease", 3 * INTERVAL + 15)
    took = time.time() - t0
    _wait(lambda: sum(_names(store).values()) <= CAP_MIB * MIB, "under capacity again", 20)
    have = _names(store)
    # The newest chunks were used within the grace period: removing one would lose it.
    newest = written[-4:]
    row.lost += sum(MIB for n in newest if n not in have)
    for n in newest:
        if n in have:
            with open(os.path.join(rest[-1].mnt, n), "rb") as f:
                got = f.read()
            row.corrupt += sum(x != y for x, y in zip(got, chunk(n, MIB)))
    row.observed = "new collector within %.1f s of the kill; %.0f MiB left of %d written" % (
        took, sum(have.values()) / MIB, len(written))


def removed_while_reading(ctx, row):
    """A chunk the collector removes while another node has it open: what that node reads is
    the object's bytes or a clear errno (ENOENT), never other bytes; the name then vanishes."""
    store = ctx.store()
    a, b = _nodes(ctx, store, "ab")
    victim = "victim"
    data = chunk(victim, 4 * MIB)
    write_chunk(a.mnt, victim, data)
    a.sync()  # stored: b reads it (the close returned before its upload: write_back)
    fd = os.open(os.path.join(b.mnt, victim), os.O_RDONLY)
    first = os.pread(fd, MIB, 0)  # part of it read before the removal
    row.corrupt += sum(x != y for x, y in zip(first, data[:MIB]))
    time.sleep(2 * INTERVAL + 1)  # past the grace period: the victim is the oldest chunk
    for i in range(CAP_MIB + 4):
        n = "f%03d" % i
        write_chunk(a.mnt, n, chunk(n, MIB))
    _wait(lambda: victim not in _names(store), "the victim removed", 20)
    outcome = "read the object's bytes"
    try:
        rest = os.pread(fd, 4 * MIB, MIB)
        row.corrupt += sum(x != y for x, y in zip(rest, data[MIB:])) + abs(
            len(rest) - 3 * MIB) * (len(rest) > 3 * MIB)
        if len(rest) < 3 * MIB:
            outcome = "short read of %d bytes" % len(rest)
    except OSError as e:
        assert e.errno in (errno.ENOENT, errno.ESTALE), "read after removal: %s" % e
        outcome = errno.errorcode[e.errno]
    finally:
        os.close(fd)
    _wait(lambda: not os.path.exists(os.path.join(b.mnt, victim)), "name gone on b",
          TTL + 4 * INTERVAL + 5)
    row.observed = "open descriptor after removal: %s; name gone on the reading node" % outcome


def rewritten_after_removal(ctx, row):
    """A chunk written again after the collector removed it (an engine storing it anew): the new
    object stays through the following passes and every node reads it, also the node whose
    cached copy of the old one was dropped."""
    store = ctx.store()
    a, b, c = _nodes(ctx, store, "abc")
    name = "again"
    data = chunk(name, 2 * MIB)
    write_chunk(a.mnt, name, data)
    a.sync()  # stored: c reads it (the close returned before its upload: write_back)
    with open(os.path.join(c.mnt, name), "rb") as f:  # cached on c
        f.read()
    time.sleep(2 * INTERVAL + 1)
    for i in range(CAP_MIB + 2):
        n = "g%03d" % i
        write_chunk(a.mnt, n, chunk(n, MIB))
    a.sync()  # the g chunks' store times are those of their uploads
    last_g = time.time()
    _wait(lambda: name not in _names(store), "removed", 20)
    _wait(lambda: not os.path.exists(os.path.join(b.mnt, name)), "gone on b", TTL + 10)
    # Stored anew in a later second than every g chunk: the store's times are whole seconds, and
    # chunks of one second are removed in key order ("again" < "g..."; tier_policy.cc), so a
    # rewrite in the same second as the last g chunks (a loaded machine: the collector removed
    # the old one while a was still writing) is rightly among the first to go.
    time.sleep(max(0.0, int(last_g) + 1.1 - time.time()))
    write_chunk(b.mnt, name, data)  # stored anew
    b.sync()
    time.sleep(4 * INTERVAL)  # several passes
    if name not in _names(store):
        row.lost += len(data)
        raise AssertionError("the chunk written again after its removal was removed")
    got = _wait(lambda: os.path.exists(os.path.join(c.mnt, name)) and open(
        os.path.join(c.mnt, name), "rb").read(), "node c reads the new object", TTL + 10)
    row.corrupt += sum(x != y for x, y in zip(got, data)) + abs(len(got) - len(data))
    row.observed = "the new object stays through %d passes; every node reads it" % (
        4 * INTERVAL)


SCENARIOS = [
    ("tier-collector-kill9", False,
     "another node collects within the lease time; bound holds; newest chunks kept",
     collector_killed),
    ("tier-removed-while-reading", False,
     "an open descriptor reads the object's bytes or ENOENT, never others; name vanishes",
     removed_while_reading),
    ("tier-rewritten-after-removal", False,
     "a chunk stored again after its removal stays and reads right on every node",
     rewritten_after_removal),
]
