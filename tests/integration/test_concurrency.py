"""Many concurrent clients on overlapping keys: every reply must be correct.

200 connections are driven by 8 threads; each thread keeps one command in flight on each of
its 25 connections at once, so the server sees 200 requests in flight. Values encode
writer id, per-writer sequence number, key and a padding whose length follows from the
sequence, so a reader can tell a torn, mixed-up or stale value:
  - a value is well formed and belongs to the key it was read from;
  - per reader, per key and per writer, the sequence never goes backwards;
  - MSET'd pairs are read back equal by MGET (multi-key atomicity);
  - a connection reads its own last write to its private key;
  - INCR totals equal the number of INCRs sent.

TC_CONCURRENCY_SECONDS (default 4) sets the duration. twincache runs here with 4 worker
threads (more threads than this machine's cores means more preemption, more interleavings).
"""

import os
import random
import re
import threading
import time

import pytest

from harness import IS_REDIS, start_server
from resp import RespConn, Simple, encode

pytestmark = pytest.mark.sanitize

THREADS = 8
CONNS_PER_THREAD = 25
SHARED_KEYS = 16
COUNTERS = 4
PAIRS = 8
DURATION = float(os.environ.get("TC_CONCURRENCY_SECONDS", "4"))
VALUE_RE = re.compile(rb"^(\d+):(\d+):(\d+):(x*)$")


@pytest.fixture(scope="module")
def server():
    srv = start_server([] if IS_REDIS else ["--threads", "4"])
    yield srv
    srv.stop(check=True)


def make_value(wid, seq, k):
    pad = 3000 if seq % 50 == 0 else seq % 97  # mostly small, now and then past 2 KB
    return b"%d:%d:%d:%s" % (wid, seq, k, b"x" * pad)


def check_value(v, k):
    """Parse a shared value; raise AssertionError if it is not one any writer wrote to k."""
    m = VALUE_RE.match(v)
    assert m, "malformed value %r for key %d" % (v[:80], k)
    wid, seq, vk, pad = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
    assert vk == k, "value for key %d found under key %d" % (vk, k)
    assert len(pad) == (3000 if seq % 50 == 0 else seq % 97), "torn value %r" % v[:80]
    return wid, seq


class Client:
    """One connection's state: it acts as writer `wid` and as a reader."""

    def __init__(self, server, wid):
        self.conn = RespConn(server.host, server.port, timeout=30)
        self.wid = wid
        self.seq = 0
        self.rnd = random.Random(wid)
        self.seen = {}  # (key, writer) -> last seq this connection saw
        self.incrs = [0] * COUNTERS
        self.last_incr = [0] * COUNTERS
        self.ops = 0
        self.pending = None

    def start(self):
        """Pick the next operation, send it, remember how to check its replies."""
        self.seq += 1
        roll = self.rnd.random()
        k = self.rnd.randrange(SHARED_KEYS)
        if roll < 0.35:
            self.conn.send(encode("SET", "shared:%d" % k, make_value(self.wid, self.seq, k)))
            self.pending = ("set", k)
        elif roll < 0.70:
            self.conn.send(encode("GET", "shared:%d" % k))
            self.pending = ("get", k)
        elif roll < 0.80:
            c = k % COUNTERS
            self.conn.send(encode("INCR", "counter:%d" % c))
            self.incrs[c] += 1
            self.pending = ("incr", c)
        elif roll < 0.87:
            p = k % PAIRS
            v = make_value(self.wid, self.seq, p)
            self.conn.send(encode("MSET", "pair:%d:a" % p, v, "pair:%d:b" % p, v))
            self.pending = ("mset", p)
        elif roll < 0.94:
            p = k % PAIRS
            self.conn.send(encode("MGET", "pair:%d:a" % p, "pair:%d:b" % p))
            self.pending = ("mget", p)
        else:
            v = b"own:%d:%d" % (self.wid, self.seq)
            self.conn.send(encode("SET", "own:%d" % self.wid, v) +
                           encode("GET", "own:%d" % self.wid))
            self.pending = ("own", v)

    def finish(self):
        """Read and check the replies of the operation in flight."""
        op, arg = self.pending
        reply = self.conn.read_reply()
        if op == "set":
            assert reply == Simple("OK"), reply
        elif op == "get":
            if reply is not None:
                wid, seq = check_value(reply, arg)
                last = self.seen.get((arg, wid), 0)
                assert seq >= last, "key %d went back in time: writer %d seq %d after %d" % (
                    arg, wid, seq, last)
                self.seen[(arg, wid)] = seq
        elif op == "incr":
            assert isinstance(reply, int) and reply > self.last_incr[arg], (reply, arg)
            self.last_incr[arg] = reply
        elif op == "mset":
            assert reply == Simple("OK"), reply
        elif op == "mget":
            a, b = reply
            assert a == b, "MSET not atomic: pair %d has %r and %r" % (arg, a and a[:40],
                                                                       b and b[:40])
            if a is not None:
                check_value(a, arg)
        elif op == "own":
            assert reply == Simple("OK"), reply
            got = self.conn.read_reply()
            assert got == arg, "read %r after writing %r" % (got, arg)
        self.ops += 1
        self.pending = None


def test_200_concurrent_connections(server):
    r = server.client()
    r.flushall()
    base_clients = r.info("clients")["connected_clients"]
    clients = [Client(server, wid) for wid in range(THREADS * CONNS_PER_THREAD)]
    for c in clients:
        assert c.conn.call("PING") == Simple("PONG")
    assert r.info("clients")["connected_clients"] >= len(clients) + 1  # all of them and r (base_clients may count one still closing)

    errors = []
    start = threading.Barrier(THREADS + 1)
    stop_at = [0.0]

    def worker(group):
        try:
            start.wait()
            while time.monotonic() < stop_at[0]:
                for c in group:
                    c.start()
                for c in group:
                    c.finish()
        except Exception as e:  # reported below with the first few others
            errors.append("%s: %s" % (type(e).__name__, e))

    threads = []
    for t in range(THREADS):
        group = clients[t * CONNS_PER_THREAD:(t + 1) * CONNS_PER_THREAD]
        th = threading.Thread(target=worker, args=(group,), daemon=True)
        th.start()
        threads.append(th)
    stop_at[0] = time.monotonic() + DURATION
    start.wait()
    # meanwhile, the server still answers a fresh connection promptly
    while time.monotonic() < stop_at[0]:
        t0 = time.monotonic()
        assert server.ping_raw() == b"+PONG\r\n"
        assert time.monotonic() - t0 < 2, "a new connection waited over 2 s for PONG"
        time.sleep(0.25)
    for th in threads:
        th.join(timeout=60)
        assert not th.is_alive(), "a client thread is stuck (server stopped answering?)"
    assert not errors, "%d client errors, first: %s" % (len(errors), errors[:5])

    total = sum(c.ops for c in clients)
    assert min(c.ops for c in clients) >= 10, "some connections were starved"
    for i in range(COUNTERS):
        assert int(r.get("counter:%d" % i) or 0) == sum(c.incrs[i] for c in clients)
    for k in range(SHARED_KEYS):
        v = server.client(decode=False).get("shared:%d" % k)
        if v is not None:
            check_value(v, k)
    for c in clients:
        c.conn.close()
    print("%d operations on %d connections in %.1f s" % (total, len(clients), DURATION))


def test_threads_sharing_a_pool(server):
    """redis-py's thread-safe pool under 16 threads: pipelined INCRBYs add up exactly."""
    r = server.client(max_connections=32)
    r.flushall()
    errors = []

    def worker(tid):
        try:
            rnd = random.Random(tid)
            expected = {}
            for _ in range(20):
                pipe = r.pipeline(transaction=False)
                for _ in range(200):
                    k = "acc:%d" % rnd.randrange(10)
                    n = rnd.randint(-5, 100)
                    pipe.incrby(k, n)
                    expected[k] = expected.get(k, 0) + n
                res = pipe.execute()
                assert all(isinstance(x, int) for x in res)
            totals.append(expected)
        except Exception as e:
            errors.append(repr(e))

    totals = []
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:5]
    assert len(totals) == 16
    for i in range(10):
        k = "acc:%d" % i
        assert int(r.get(k) or 0) == sum(t.get(k, 0) for t in totals)
