"""maxmemory, eviction policies and active expiry at scale (issue 4).

Each test starts its own server with the limit and policy under test and fills it over a raw
pipelined socket (fast enough to push hundreds of MB from Python)."""

import socket
import time

import pytest

from harness import start_server
from itutil import rss_of

OOM = "OOM command not allowed when used memory > 'maxmemory'."
MB = 1024 * 1024


class Pipe:
    """Pipelined writer: sends batches of commands and reads one reply line per command."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def run(self, cmds):
        out = []
        for c in cmds:
            out.append(b"*%d\r\n" % len(c))
            for a in c:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        replies = []
        for _ in cmds:
            line = self.f.readline()
            if line.startswith(b"$") and line != b"$-1\r\n":
                n = int(line[1:])
                line = self.f.read(n + 2)[:-2]
            replies.append(line)
        return replies

    def fill(self, prefix, n, size, px=None, batch=1000):
        val = b"v" * size
        errors = []
        for start in range(0, n, batch):
            cmds = []
            for i in range(start, min(n, start + batch)):
                c = [b"SET", b"%s:%d" % (prefix, i), val]
                if px:
                    c += [b"PX", str(px).encode()]
                cmds.append(c)
            errors += [r for r in self.run(cmds) if r.startswith(b"-")]
        return errors

    def close(self):
        self.s.close()


def info(r, section):
    return r.info(section)


@pytest.fixture
def limited():
    servers = []

    def start(policy, maxmem="64mb", extra=()):
        srv = start_server(["--maxmemory", maxmem, "--maxmemory-policy", policy, *extra])
        servers.append(srv)
        return srv

    yield start
    for s in servers:
        s.stop(check=True)


def test_limit_holds_writing_500mb(limited):
    srv = limited("allkeys-lru", "64mb")
    r = srv.client()
    empty_rss = rss_of(srv.pid)
    p = Pipe(srv.port)
    errors = p.fill(b"big", 500_000, 1000)  # 500 MB of distinct keys
    p.close()
    assert errors == []
    time.sleep(0.5)  # one timer tick settles any last write that went over
    mem = info(r, "memory")
    assert mem["used_memory"] <= 64 * MB, mem["used_memory"]
    assert rss_of(srv.pid) < 1.25 * 64 * MB + empty_rss
    evicted = info(r, "stats")["evicted_keys"]
    assert evicted > 400_000
    assert r.dbsize() + evicted == 500_000
    # the server keeps working and keeps evicting
    assert r.set("after", "x") is True and r.get("after") == "x"


def test_lru_keeps_recently_read_keys(limited):
    srv = limited("allkeys-lru", "32mb")
    r = srv.client()
    p = Pipe(srv.port)
    hot = 5000
    assert p.fill(b"hot", hot, 500) == []
    cold_total = 0
    for round_ in range(40):
        time.sleep(0.005)  # the LRU clock has millisecond resolution: let it advance
        p.run([[b"GET", b"hot:%d" % i] for i in range(hot)])
        assert p.fill(b"cold%d" % round_, 4000, 500) == []
        cold_total += 4000
    hot_left = sum(1 for x in p.run([[b"EXISTS", b"hot:%d" % i] for i in range(hot)]) if x == b":1\r\n")
    p.close()
    dbsize = r.dbsize()
    assert info(r, "stats")["evicted_keys"] > 0
    cold_left = dbsize - hot_left
    hot_rate, cold_rate = hot_left / hot, cold_left / cold_total
    # random eviction would give both the same survival rate
    assert hot_rate > 0.9, (hot_rate, cold_rate)
    assert hot_rate > cold_rate + 0.4, (hot_rate, cold_rate)


def test_noeviction_refuses_writes_keeps_reads(limited):
    srv = limited("noeviction", "16mb")
    r = srv.client()
    p = Pipe(srv.port)
    errors = p.fill(b"k", 40_000, 1000)
    assert errors and all(e == b"-" + OOM.encode() + b"\r\n" for e in errors)
    # at the limit: the next write is refused, reads and deletes are served
    assert p.run([[b"SET", b"new", b"x" * 1000]]) == [b"-" + OOM.encode() + b"\r\n"]
    p.close()
    assert info(r, "stats")["evicted_keys"] == 0
    assert r.get("k:0") == "v" * 1000
    assert r.delete("k:0", "k:1") == 2


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"])
def test_volatile_policies_never_evict_persistent_keys(limited, policy):
    srv = limited(policy, "16mb")
    r = srv.client()
    p = Pipe(srv.port)
    assert p.fill(b"keep", 3000, 1000) == []
    errors = p.fill(b"tmp", 30_000, 1000, px=600_000)
    assert errors == []  # volatile keys make room for volatile keys
    kept = sum(1 for x in p.run([[b"EXISTS", b"keep:%d" % i] for i in range(3000)]) if x == b":1\r\n")
    assert kept == 3000
    assert info(r, "stats")["evicted_keys"] > 0
    # once nothing volatile is left, writes are refused
    r.execute_command("PERSIST", "nothing")
    for i in range(30_000):
        r.persist("tmp:%d" % i) if i % 1000 == 0 else None
    p.run([[b"PERSIST", b"tmp:%d" % i] for i in range(30_000)])
    errors = p.fill(b"more", 5000, 1000)
    p.close()
    assert errors and errors[0] == b"-" + OOM.encode() + b"\r\n"


def test_volatile_ttl_evicts_nearest_expiry_first(limited):
    srv = limited("volatile-ttl", "16mb", ["--maxmemory-samples", "10"])
    r = srv.client()
    p = Pipe(srv.port)
    assert p.fill(b"far", 4000, 1000, px=3_600_000) == []
    assert p.fill(b"near", 4000, 1000, px=600_000) == []
    assert p.fill(b"new", 10000, 1000, px=7_200_000) == []
    far = sum(1 for x in p.run([[b"EXISTS", b"far:%d" % i] for i in range(4000)]) if x == b":1\r\n")
    near = sum(1 for x in p.run([[b"EXISTS", b"near:%d" % i] for i in range(4000)]) if x == b":1\r\n")
    p.close()
    assert info(r, "stats")["evicted_keys"] > 0
    assert near < far, (near, far)


def test_allkeys_random_and_lfu_stay_under_limit(limited):
    for policy in ("allkeys-random", "allkeys-lfu"):
        srv = limited(policy, "16mb")
        r = srv.client()
        p = Pipe(srv.port)
        assert p.fill(b"k", 40_000, 1000) == []
        p.close()
        # the limit check sees the allocator overhead as last sampled (at most 10 ms old), so
        # the last writes may end a few KiB over it (Redis: under 4 KiB); the workers' timer
        # evicts the rest. A defect listed in tests/conformance/expected-failures.txt
        # (unit/maxmemory 'is the memory limit honoured?').
        deadline, under = time.monotonic() + 3, 0
        while under < 3 and time.monotonic() < deadline:
            used = info(r, "memory")["used_memory"]
            under = under + 1 if used <= 16 * MB else 0
            time.sleep(0.05)
        assert under == 3, used
        assert info(r, "stats")["evicted_keys"] > 0


def test_lfu_keeps_frequently_used_keys(limited):
    # no decay during the test: a minute boundary would otherwise age every counter by one
    srv = limited("allkeys-lfu", "16mb", ["--lfu-decay-time", "0"])
    r = srv.client()
    p = Pipe(srv.port)
    assert p.fill(b"hot", 1000, 1000) == []
    for _ in range(40):
        p.run([[b"GET", b"hot:%d" % i] for i in range(1000)])
    assert p.fill(b"cold", 30_000, 1000) == []
    hot_left = sum(1 for x in p.run([[b"EXISTS", b"hot:%d" % i] for i in range(1000)]) if x == b":1\r\n")
    p.close()
    freqs = [r.object("freq", "hot:%d" % i) for i in range(50)]
    assert max(int(f) for f in freqs if f is not None) > 5
    assert hot_left > 900, hot_left


def test_million_keys_with_ttl_reclaimed_without_traffic(limited):
    srv = limited("allkeys-lru", "0")
    r = srv.client()
    base = info(r, "memory")["used_memory"]
    p = Pipe(srv.port)
    t0 = time.monotonic()
    assert p.fill(b"t", 1_000_000, 16, px=1000, batch=5000) == []
    p.close()
    deadline = t0 + 1 + 10
    while time.monotonic() < deadline and r.dbsize() > 0:
        time.sleep(0.2)
    assert r.dbsize() == 0, r.dbsize()
    used = info(r, "memory")["used_memory"]
    assert used < base + 4 * MB, (base, used)
    assert info(r, "stats")["expired_keys"] >= 900_000


def test_eviction_with_long_keys(limited):
    srv = limited("allkeys-lru", "8mb")
    r = srv.client()
    p = Pipe(srv.port)
    assert p.fill(b"k" * 600, 20_000, 500) == []  # 600-byte key prefixes
    p.close()
    assert info(r, "stats")["evicted_keys"] > 0


@pytest.mark.parametrize("policy", ["allkeys-random", "allkeys-lru", "allkeys-lfu",
                                    "volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl"])
def test_small_limit_above_used_evicts(policy):
    """Redis's "is the memory limit honoured?": a limit 100 KB above used_memory, filled with
    SETEX, then as many again: keys are evicted, never -OOM, and used_memory stays under the
    limit (freed chunks waiting in a thread's cache, another thread's unpublished keyspace
    bytes and a stale overhead sample must not count as used)."""
    import random
    srv = start_server()
    try:
        r = srv.client()
        r.flushall()
        used = r.info("memory")["used_memory"]
        limit = used + 100 * 1024
        r.config_set("maxmemory", limit)
        r.config_set("maxmemory-policy", policy)
        n = 0
        while True:
            r.setex("k%d" % random.randrange(10 ** 9), 10000, "x")
            n += 1
            if n % 4 == 0 and r.info("memory")["used_memory"] + 4096 > limit:
                assert n > 10
                break
        for _ in range(n):
            r.setex("k%d" % random.randrange(10 ** 9), 10000, "x")
        assert r.info("memory")["used_memory"] < limit + 4096
    finally:
        srv.stop()


def test_client_buffers_evict_at_next_command_and_free_at_close(limited):
    """Redis's "eviction due to input buffer of a dead client": any command evicts what is
    over first (INFO too), so the eviction is seen at once; once those clients are gone, the
    keyspace fills again whole (the figure is measured again after large buffers are freed,
    not taken from a sample that still holds them)."""
    srv = limited("allkeys-lru", "11mb")
    r = srv.client()

    def fill():
        r.flushdb()
        for j in range(50):
            r.setrange(str(j), 100000, "x")
        return r.dbsize()

    assert fill() == 50
    socks = []
    for _ in range(30):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"*250\r\n" + (b"$1000\r\n" + b"x" * 1000 + b"\r\n") * 249)
        socks.append(s)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and r.info("clients")["connected_clients"] < 31:
        time.sleep(0.01)
    time.sleep(0.05)
    assert r.info("stats")["evicted_keys"] > 0
    assert r.dbsize() < 50
    for s in socks:
        s.close()
    while time.monotonic() < deadline and r.info("clients")["connected_clients"] > 1:
        time.sleep(0.01)
    assert fill() == 50
