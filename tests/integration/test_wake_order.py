"""Clients a command unblocks are served before anything that follows that command, as Redis
serves them (handleClientsBlockedOnKeys runs before the next command is read): the pusher's
next command, pipelined or not, and every other client's, see the lists already popped and
moved, through chains of BLMOVE/BRPOPLPUSH, whichever worker thread each client is on.

Also against Debian's redis-server: TC_SERVER=redis /usr/bin/python3 -m pytest
tests/integration/test_wake_order.py. Each case is repeated: under the asynchronous wake
that this replaced, a round failed about one time in three."""

import threading

import pytest

from resp import encode

pytestmark = pytest.mark.sanitize

ROUNDS = 25


def blocked_count(r):
    return r.info("clients")["blocked_clients"]


def wait_blocked(r, n):
    for _ in range(2000):
        if blocked_count(r) == n:
            return
        threading.Event().wait(0.005)
    raise AssertionError("blocked_clients never reached %d" % n)


def block(server, *args):
    c = server.raw(timeout=30)
    c.send(encode(*args))
    return c


def test_circular_brpoplpush(server, r):
    """Redis's 'Circular BRPOPLPUSH': the push comes back to list1 before the LRANGE."""
    for i in range(ROUNDS):
        r.delete("l1", "l2")
        a = block(server, "BRPOPLPUSH", "l1", "l2", 0)
        b = block(server, "BRPOPLPUSH", "l2", "l1", 0)
        wait_blocked(r, 2)
        r.rpush("l1", "foo")
        assert r.lrange("l1", 0, -1) == ["foo"], "round %d" % i
        assert r.lrange("l2", 0, -1) == [], "round %d" % i
        assert a.read_reply() == b"foo"
        assert b.read_reply() == b"foo"
        a.close()
        b.close()


def test_pipelined_read_after_push(server, r):
    """RPUSH and LLEN in one pipeline: the waiter took the element before LLEN ran."""
    for i in range(ROUNDS):
        r.delete("q")
        waiters = []
        for n in range(3):  # one at a time: the order they blocked in is the order served
            waiters.append(block(server, "BLPOP", "q", 0))
            wait_blocked(r, n + 1)
        p = server.raw(timeout=30)
        p.send(encode("RPUSH", "q", "a", "b") + encode("LLEN", "q") + encode("LRANGE", "q", 0, -1))
        assert p.read_reply() == 2
        assert p.read_reply() == 0, "round %d" % i
        assert p.read_reply() == []
        got = []
        for w in waiters[:2]:
            got.append(w.read_reply())
        assert got == [[b"q", b"a"], [b"q", b"b"]]
        wait_blocked(r, 1)
        r.rpush("q", "c")
        assert waiters[2].read_reply() == [b"q", b"c"]
        for w in waiters + [p]:
            w.close()


def test_chain_of_moves(server, r):
    """a -> b -> c -> d by three BLMOVEs and a BLPOP at the end: one push goes all the way
    before the pusher's next command."""
    for i in range(ROUNDS):
        r.delete("a", "b", "c", "d", "out")
        m1 = block(server, "BLMOVE", "a", "b", "LEFT", "RIGHT", 0)
        m2 = block(server, "BLMOVE", "b", "c", "LEFT", "RIGHT", 0)
        m3 = block(server, "BLMOVE", "c", "d", "LEFT", "RIGHT", 0)
        m4 = block(server, "BLMPOP", 0, 1, "d", "LEFT")
        wait_blocked(r, 4)
        r.lpush("a", "x")
        assert r.exists("a", "b", "c", "d") == 0, "round %d" % i
        assert blocked_count(r) == 0, "round %d" % i
        assert [m.read_reply() for m in (m1, m2, m3)] == [b"x", b"x", b"x"]
        assert m4.read_reply() == [b"d", [b"x"]]
        for m in (m1, m2, m3, m4):
            m.close()


def test_exec_serves_after_the_transaction(server, r):
    """The waiter is served once EXEC is over (it sees the transaction's last state) and
    before the next command."""
    for i in range(ROUNDS):
        r.delete("t")
        w = block(server, "BLPOP", "t", 0)
        wait_blocked(r, 1)
        p = server.raw(timeout=30)
        p.send(encode("MULTI") + encode("RPUSH", "t", "1") + encode("RPUSH", "t", "2") +
               encode("EXEC") + encode("LRANGE", "t", 0, -1))
        assert [p.read_reply() for _ in range(4)][-1] == [1, 2]
        assert p.read_reply() == [b"2"], "round %d" % i
        assert w.read_reply() == [b"t", b"1"]
        w.close()
        p.close()


def test_zset_and_stream_waiters(server, r):
    for i in range(ROUNDS):
        r.delete("z", "s")
        z = block(server, "BZPOPMIN", "z", 0)
        s = block(server, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
        wait_blocked(r, 2)
        r.zadd("z", {"m": 1})
        assert r.zcard("z") == 0, "round %d" % i
        r.xadd("s", {"f": "v"}, id="1-1")
        assert blocked_count(r) == 0, "round %d" % i
        assert z.read_reply() == [b"z", b"m", b"1"]
        assert s.read_reply() == [[b"s", [[b"1-1", [b"f", b"v"]]]]]
        z.close()
        s.close()


def test_pushers_on_both_sides_do_not_wait_for_each_other(server, r):
    """Clients push to keys the other side's clients wait on, all at once, from many
    connections (so both worker threads wake each other's clients at the same time): every
    element is delivered once, nothing stays, no worker waits forever."""
    n_keys, per_key = 8, 40
    r.delete(*["k%d" % k for k in range(n_keys)])
    results = []
    lock = threading.Lock()

    def consumer(k):
        c = server.raw(timeout=60)
        got = []
        for _ in range(per_key):
            c.send(encode("BLMOVE", "k%d" % k, "k%d" % ((k + 1) % n_keys), "LEFT", "RIGHT", 0))
            got.append(c.read_reply())
            c.send(encode("LPOP", "k%d" % ((k + 1) % n_keys)))
            c.read_reply()
        c.close()
        with lock:
            results.append(len(got))

    def producer(k):
        c = server.raw(timeout=60)
        for j in range(per_key):
            c.send(encode("RPUSH", "k%d" % k, "v%d" % j))
            c.read_reply()
        c.close()

    threads = [threading.Thread(target=consumer, args=(k,)) for k in range(n_keys)]
    threads += [threading.Thread(target=producer, args=(k,)) for k in range(n_keys)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        assert not t.is_alive()
    assert results == [per_key] * n_keys
    wait_blocked(r, 0)
