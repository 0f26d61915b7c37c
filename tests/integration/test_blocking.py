"""Blocking commands across worker threads: BLPOP/BRPOP/BLMOVE/BRPOPLPUSH/BLMPOP/BZPOPMIN/
BZPOPMAX/BZMPOP, timeouts, fairness, CLIENT UNBLOCK, MULTI, INFO blocked_clients."""

import threading
import time

import pytest

from itutil import raises_exact
from resp import Error, encode

pytestmark = pytest.mark.sanitize


def wait_blocked(r, n, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if r.info("clients")["blocked_clients"] == n:
            return True
        time.sleep(0.01)
    return False


def blocked_call(server, *args):
    """Send a command on a new raw connection without reading its reply."""
    c = server.raw(timeout=30)
    c.send(encode(*args))
    return c


def test_nonblocking_when_data(r):
    r.rpush("l", "a", "b")
    assert r.blpop(["none", "l"], 1) == ("l", "a")
    assert r.brpop(["l"], 1) == ("l", "b")
    assert r.exists("l") == 0
    r.rpush("src", "x", "y")
    assert r.blmove("src", "dst", 1, "RIGHT", "LEFT") == "y"
    assert r.brpoplpush("src", "dst", 1) == "x"
    assert r.lrange("dst", 0, -1) == ["x", "y"]
    assert r.cmd("BLMPOP", 1, 2, "none", "dst", "LEFT", "COUNT", 5) == ["dst", ["x", "y"]]
    r.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert r.bzpopmin(["none", "z"], 1) == ("z", "a", 1.0)
    assert r.bzpopmax("z", 1) == ("z", "c", 3.0)
    assert r.cmd("BZMPOP", 1, 1, "z", "MIN") == ["z", [["b", "2"]]]


def test_errors(r):
    r.set("s", "x")
    with raises_exact("WRONGTYPE Operation against a key holding the wrong kind of value"):
        r.blpop(["s"], 1)
    with raises_exact("ERR timeout is not a float or out of range"):
        r.cmd("BLPOP", "l", "abc")
    with raises_exact("ERR timeout is negative"):
        r.cmd("BLPOP", "l", "-1")
    with raises_exact("ERR timeout is negative"):
        r.cmd("BZPOPMIN", "z", "-0.5")


def test_timeouts(r):
    t0 = time.time()
    assert r.blpop(["nothing"], 0.2) is None
    dt = time.time() - t0
    assert 0.15 <= dt < 2.0
    t0 = time.time()
    assert r.bzpopmin(["nothing"], 0.1) is None
    assert r.blmove("nothing", "d", 0.1, "LEFT", "LEFT") is None
    assert r.cmd("BLMPOP", "0.1", 1, "nothing", "LEFT") is None
    assert r.cmd("BZMPOP", "0.1", 1, "nothing", "MAX") is None
    assert time.time() - t0 < 3.0
    assert r.info("clients")["blocked_clients"] == 0


def test_blpop_served_by_push_from_other_connection(server, r):
    """Several blocked clients (on both worker threads) served by pushes from others."""
    waiters = [blocked_call(server, "BLPOP", "q", 0) for _ in range(6)]
    assert wait_blocked(r, 6)
    for i in range(6):
        assert r.rpush("q", "v%d" % i) == 1 or True
    got = sorted(w.read_reply()[1] for w in waiters)
    assert got == [b"v%d" % i for i in range(6)]
    assert r.llen("q") == 0
    assert wait_blocked(r, 0)
    for w in waiters:
        w.close()


def test_fifo_fairness(server, r):
    first = blocked_call(server, "BLPOP", "fair", 0)
    assert wait_blocked(r, 1)
    second = blocked_call(server, "BLPOP", "fair", 0)
    assert wait_blocked(r, 2)
    r.rpush("fair", "one")
    assert first.read_reply() == [b"fair", b"one"]
    r.rpush("fair", "two")
    assert second.read_reply() == [b"fair", b"two"]
    first.close()
    second.close()


def test_multiple_pushed_serves_several(server, r):
    a = blocked_call(server, "BRPOP", "k1", "k2", 0)
    b = blocked_call(server, "BRPOP", "k2", 0)
    assert wait_blocked(r, 2)
    r.rpush("k2", "x", "y")
    replies = [a.read_reply(), b.read_reply()]
    assert sorted(replies) == [[b"k2", b"x"], [b"k2", b"y"]]
    a.close()
    b.close()


def test_blocked_client_then_pipeline(server, r):
    c = server.raw(timeout=30)
    c.send(encode("BLPOP", "p", 0) + encode("PING") + encode("LLEN", "p"))
    assert wait_blocked(r, 1)
    r.rpush("p", "a", "b")
    assert c.read_reply() == [b"p", b"a"]
    assert c.read_reply() == "PONG"
    assert c.read_reply() == 1
    c.close()


def test_blmove_wakes_next(server, r):
    mover = blocked_call(server, "BLMOVE", "from", "to", "LEFT", "RIGHT", 0)
    popper = blocked_call(server, "BLPOP", "to", 0)
    assert wait_blocked(r, 2)
    r.lpush("from", "item")
    assert mover.read_reply() == b"item"
    assert popper.read_reply() == [b"to", b"item"]
    assert r.exists("from", "to") == 0
    mover.close()
    popper.close()


def test_bzpopmin_blocks(server, r):
    c = blocked_call(server, "BZPOPMIN", "zz", 0)
    assert wait_blocked(r, 1)
    r.zadd("zz", {"m": 5, "n": 7})
    assert c.read_reply() == [b"zz", b"m", b"5"]
    assert r.zrange("zz", 0, -1) == ["n"]
    c.close()
    c = blocked_call(server, "BZPOPMAX", "zz2", 0)
    assert wait_blocked(r, 1)
    r.zadd("zz2", {"lo": 1, "hi": 2})
    assert c.read_reply() == [b"zz2", b"hi", b"2"]
    c.close()
    c = blocked_call(server, "BZMPOP", 0, 1, "zz3", "MIN", "COUNT", 2)
    assert wait_blocked(r, 1)
    r.zadd("zz3", {"a": 1, "b": 2, "c": 3})
    assert c.read_reply() == [b"zz3", [[b"a", b"1"], [b"b", b"2"]]]
    c.close()


def test_bzpopmin_resp3(server, r):
    c = server.raw(timeout=30)
    assert isinstance(c.call("HELLO", "3"), dict)
    c.send(encode("BZPOPMIN", "z3", 0))
    assert wait_blocked(r, 1)
    r.zadd("z3", {"m": 1.5})
    assert c.read_reply() == [b"z3", b"m", 1.5]
    assert c.call("BZPOPMIN", "z3", "0.05") is None
    c.close()


def test_sub_second_timeout_while_others_served(server, r):
    slow = blocked_call(server, "BLPOP", "never", "0.3")
    t0 = time.time()
    assert slow.read_reply() is None
    assert 0.25 <= time.time() - t0 < 2.0
    slow.close()


def test_client_unblock(server, r):
    c = server.raw(timeout=30)
    cid = c.call("CLIENT", "ID")
    c.send(encode("BLPOP", "u", 0))
    assert wait_blocked(r, 1)
    assert r.cmd("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() is None
    assert r.cmd("CLIENT", "UNBLOCK", cid) == 0
    c.send(encode("BZPOPMIN", "u", 0))
    assert wait_blocked(r, 1)
    assert r.cmd("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    assert c.read_reply() == Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    assert c.call("PING") == "PONG"
    c.close()


def test_blocking_inside_multi_does_not_block(server):
    c = server.raw(timeout=30)
    assert c.call("MULTI") == "OK"
    assert c.call("BLPOP", "m", 0) == "QUEUED"
    assert c.call("BLMOVE", "m", "n", "LEFT", "LEFT", 0) == "QUEUED"
    assert c.call("BZPOPMIN", "m", 0) == "QUEUED"
    assert c.call("EXEC") == [None, None, None]
    c.close()


def test_closed_while_blocked(server, r):
    c = blocked_call(server, "BLPOP", "x", 0)
    assert wait_blocked(r, 1)
    c.close()
    assert wait_blocked(r, 0)
    r.rpush("x", "kept")
    assert r.lrange("x", 0, -1) == ["kept"]


def test_many_producers_consumers(server, r):
    """Consumers blocked on both threads, producers on both: every element delivered once."""
    n = 200
    got = []
    lock = threading.Lock()

    def consumer():
        c = server.client()
        while True:
            v = c.blpop(["work"], 5)
            if v is None or v[1] == "stop":
                break
            with lock:
                got.append(v[1])
        c.close()

    def producer(base):
        c = server.client()
        for i in range(n):
            c.rpush("work", "%d-%d" % (base, i))
        c.close()

    cons = [threading.Thread(target=consumer) for _ in range(4)]
    for t in cons:
        t.start()
    prods = [threading.Thread(target=producer, args=(b,)) for b in range(3)]
    for t in prods:
        t.start()
    for t in prods:
        t.join()
    r.rpush("work", *["stop"] * 4)
    for t in cons:
        t.join(30)
    assert sorted(got) == sorted("%d-%d" % (b, i) for b in range(3) for i in range(n))


def test_xread(server, r):
    r.xadd("s1", {"a": "1"}, id="1-1")
    r.xadd("s1", {"b": "2"}, id="2-1")
    assert r.cmd("XREAD", "STREAMS", "s1", "0") == [["s1", [["1-1", ["a", "1"]], ["2-1", ["b", "2"]]]]]
    assert r.cmd("XREAD", "COUNT", 1, "STREAMS", "s1", "nokey", "1-1", "0") == [["s1", [["2-1", ["b", "2"]]]]]
    assert r.cmd("XREAD", "STREAMS", "s1", "$") is None
    assert r.cmd("XREAD", "STREAMS", "s1", "2-1") is None
    with raises_exact("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."):
        r.cmd("XREAD", "STREAMS", "s1", "s2", "0")
    with raises_exact("ERR syntax error"):
        r.cmd("XREAD", "COUNT", 1, "s1", "0")
    with raises_exact("ERR Invalid stream ID specified as stream command argument"):
        r.cmd("XREAD", "STREAMS", "s1", "bad")
    c = server.raw(timeout=30)
    assert isinstance(c.call("HELLO", "3"), dict)
    assert c.call("XREAD", "STREAMS", "s1", "1-1") == {b"s1": [[b"2-1", [b"b", b"2"]]]}
    c.close()


def test_xread_block(server, r):
    r.xadd("xs", {"old": "1"}, id="5-1")
    readers = [blocked_call(server, "XREAD", "BLOCK", 0, "STREAMS", "xs", "$") for _ in range(3)]
    since = blocked_call(server, "XREAD", "BLOCK", 0, "STREAMS", "other", "xs", "0", "5-1")
    assert wait_blocked(r, 4)
    r.xadd("xs", {"new": "2"}, id="6-1")
    for c in readers + [since]:
        assert c.read_reply() == [[b"xs", [[b"6-1", [b"new", b"2"]]]]]
        c.close()
    assert wait_blocked(r, 0)
    # a reader waiting for a later ID does not hold up the readers behind it
    ahead = server.raw(timeout=30)
    ahead_id = ahead.call("CLIENT", "ID")
    ahead.send(encode("XREAD", "BLOCK", 0, "STREAMS", "xs", "100-0"))
    behind = blocked_call(server, "XREAD", "BLOCK", 0, "STREAMS", "xs", "$")
    assert wait_blocked(r, 2)
    r.xadd("xs", {"n": "3"}, id="7-1")
    assert behind.read_reply() == [[b"xs", [[b"7-1", [b"n", b"3"]]]]]
    assert wait_blocked(r, 1)
    assert r.cmd("CLIENT", "UNBLOCK", ahead_id) == 1
    assert ahead.read_reply() is None
    ahead.close()
    behind.close()
    t0 = time.time()
    assert r.cmd("XREAD", "BLOCK", 150, "STREAMS", "xs", "$") is None
    assert 0.1 <= time.time() - t0 < 2.0
    c = server.raw(timeout=30)
    assert c.call("MULTI") == "OK"
    assert c.call("XREAD", "BLOCK", 0, "STREAMS", "xs", "$") == "QUEUED"
    assert c.call("EXEC") == [None]
    c.close()


def test_push_inside_exec_serves_blocked(server, r):
    c = blocked_call(server, "BLPOP", "tx", 0)
    assert wait_blocked(r, 1)
    p = r.pipeline(transaction=True)
    p.rpush("tx", "a", "b").llen("tx")
    assert p.execute() == [2, 2]
    assert c.read_reply() == [b"tx", b"a"]
    assert r.lrange("tx", 0, -1) == ["b"]
    c.close()


def test_idle_timeout_spares_blocked_and_subscribers(start_extra_server):
    srv = start_extra_server("--timeout", "1")
    r = srv.client()
    b = blocked_call(srv, "BLPOP", "never", 0)
    s = srv.raw(timeout=30)
    assert s.call("SUBSCRIBE", "ch") == [b"subscribe", b"ch", 1]
    time.sleep(2.5)
    assert r.rpush("never", "x") == 1
    assert b.read_reply() == [b"never", b"x"]
    assert r.publish("ch", "m") == 1
    assert s.read_reply() == [b"message", b"ch", b"m"]
    b.close()
    s.close()


def test_idle_timeout_spares_client_just_unblocked(start_extra_server):
    """A client woken from a long block has its reply queued for the end of the loop turn;
    the idle check (run every tick, here every 2 ms) must not close it in between: the
    idle time counts from the unblocking."""
    srv = start_extra_server("--timeout", "1", "--hz", "500")
    r = srv.client()
    waiters = [blocked_call(srv, "BLPOP", f"k{i}", 0) for i in range(20)]
    time.sleep(1.6)
    for i, b in enumerate(waiters):
        assert r.rpush(f"k{i}", "v") == 1
        assert b.read_reply() == [f"k{i}".encode(), b"v"], i
    for b in waiters:
        b.close()


def test_key_of_another_type_keeps_client_blocked(server, r):
    """A key that becomes a string is not 'ready' for a blocked list/zset/stream reader: the
    client stays blocked (as Redis) and is served by a later push; only the destination of
    BLMOVE being of the wrong type is an error for the blocked client."""
    cases = [("BLPOP", "k", 0), ("BZPOPMIN", "k", 0), ("BLMPOP", 0, 2, "k", "k2", "LEFT"),
             ("XREAD", "BLOCK", 0, "STREAMS", "k", "$")]
    for args in cases:
        r.delete("k", "k2")
        c = blocked_call(server, *args)
        assert wait_blocked(r, 1)
        r.set("k", "string")
        time.sleep(0.1)
        assert r.info("clients")["blocked_clients"] == 1, args
        r.delete("k")
        if args[0] == "BZPOPMIN":
            r.zadd("k", {"m": 1})
            assert c.read_reply() == [b"k", b"m", b"1"]
        elif args[0] == "XREAD":
            r.xadd("k", {"f": "v"}, id="1-1")
            assert c.read_reply() == [[b"k", [[b"1-1", [b"f", b"v"]]]]]
        elif args[0] == "BLMPOP":
            r.set("k", "still a string")
            r.rpush("k2", "v")
            assert c.read_reply() == [b"k2", [b"v"]]
        else:
            r.rpush("k", "v")
            assert c.read_reply() == [b"k", b"v"]
        c.close()
        assert wait_blocked(r, 0)
    # BLMOVE: wrong-type destination answers WRONGTYPE once the source is pushed
    r.delete("k", "k2")
    r.set("dst", "string")
    c = blocked_call(server, "BLMOVE", "src", "dst", "LEFT", "LEFT", 0)
    assert wait_blocked(r, 1)
    r.rpush("src", "v")
    assert c.read_reply() == Error(
        "WRONGTYPE Operation against a key holding the wrong kind of value")
    assert r.lrange("src", 0, -1) == ["v"]
    c.close()
    r.delete("src", "dst")
