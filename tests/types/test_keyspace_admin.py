"""Keyspace administration against redis-server 7.0, side by side: SWAPDB (replies, errors,
data, blocked clients woken, WATCH invalidated), reads that must not change a key's idle time
(TTL, TYPE, EXISTS; TOUCH does), and the internal TC.MCSET hidden from clients."""
import threading
import time

import pytest

from conftest import call


def test_swapdb_replies_and_data(d):
    for c in (d.tc, d.rs):
        call(c, "SET", "a", "db0")
        call(c, "RPUSH", "l", "x", "y")
        call(c, "SELECT", 1)
        call(c, "SET", "a", "db1")
        call(c, "HSET", "h", "f", "v")
        call(c, "SELECT", 0)
    d("SWAPDB", 0, 1)
    d("GET", "a")
    d("HGETALL", "h")
    d("EXISTS", "l")
    d("SELECT", 1)
    d("LRANGE", "l", 0, -1)
    d("GET", "a")
    d("SWAPDB", 1, 1)
    d("GET", "a")
    d("SELECT", 0)
    d("DBSIZE")
    for args in [("x", 1), (0, "y"), (0, 16), (-1, 0), (0, 99999999999), (1.5, 0), (0,),
                 (0, 1, 2)]:
        d("SWAPDB", *args)


def test_swapdb_in_multi_and_script(d):
    for c in (d.tc, d.rs):
        call(c, "SET", "k", "zero")
        call(c, "SELECT", 2)
        call(c, "SET", "k", "two")
        call(c, "SELECT", 0)
    d("MULTI")
    d("SWAPDB", 0, 2)
    d("GET", "k")
    d("EXEC")
    d("EVAL", "redis.call('SWAPDB', 0, 2) return redis.call('GET', 'k')", 0)


def test_swapdb_wakes_blocked_client(tc_server, redis_server):
    out = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        call(c, "FLUSHALL")
        got = []
        blocker = srv.client(socket_timeout=10)

        def wait():
            got.append(call(blocker, "BLPOP", "q", 5))

        t = threading.Thread(target=wait)
        t.start()
        time.sleep(0.2)
        call(c, "SELECT", 1)
        call(c, "RPUSH", "q", "from-db1")
        call(c, "SELECT", 0)
        call(c, "SWAPDB", 0, 1)
        t.join(10)
        out.append(got)
    assert out[0] == out[1] == [[b"q", b"from-db1"]]


def test_swapdb_invalidates_watch(tc_server, redis_server):
    out = []
    for srv in (tc_server, redis_server):
        c, other = srv.client(), srv.client()
        call(c, "FLUSHALL")
        call(c, "SET", "w", "1")
        res = []
        call(c, "WATCH", "w")
        call(other, "SWAPDB", 0, 3)
        call(c, "MULTI")
        call(c, "GET", "w")
        res.append(call(c, "EXEC"))
        # a watched key missing from both databases: not invalidated
        call(c, "WATCH", "nokey")
        call(other, "SWAPDB", 0, 3)
        call(c, "MULTI")
        call(c, "GET", "w")
        res.append(call(c, "EXEC"))
        out.append(res)
    assert out[0] == out[1]


def test_reads_keep_idle_time(tc_server, redis_server):
    clients = [tc_server.client(), redis_server.client()]
    for c in clients:
        call(c, "FLUSHALL")
        call(c, "SET", "k", "v")
        call(c, "SET", "t", "v")
    time.sleep(2.2)
    out = []
    for c in clients:
        call(c, "TTL", "k")
        call(c, "PTTL", "k")
        call(c, "TYPE", "k")
        call(c, "EXISTS", "k")
        call(c, "TOUCH", "t")
        out.append((call(c, "OBJECT", "IDLETIME", "k") >= 2, call(c, "OBJECT", "IDLETIME", "t")))
    assert out[0] == out[1] == (True, 0), out


def test_internal_command_hidden(d):
    d("TC.MCSET", "k", "v", 0, 0, 0)
    d("COMMAND", "INFO", "tc.mcset")
    d("EVAL", "return redis.pcall('TC.MCSET', 'k', 'v', 0, 0, 0)", 0)
