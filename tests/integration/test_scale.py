"""Bigger workloads through redis-py and raw sockets: a full SCAN over 10,000 keys (also while
the keyspace grows and shrinks), 16 isolated databases, pipelines of 10,000 commands, RESP3
after HELLO 3.

Debian 12's python3-redis is 4.3.4, which has no `protocol=3` (added in redis-py 5), so RESP3
is checked on the wire with resp.RespConn.
"""

import random

import pytest

from itutil import skip_if_unknown
from resp import Double, Map, Set, Simple, Verbatim, encode

pytestmark = pytest.mark.sanitize

N = 10000


def fill(r, n, prefix="key:", db_client=None):
    c = db_client or r
    pipe = c.pipeline(transaction=False)
    for i in range(n):
        pipe.set("%s%d" % (prefix, i), str(i))
    assert all(pipe.execute())


def full_scan(r, count=None, match=None, between=None):
    """Iterate SCAN to the end; return (list of keys in order returned, number of calls)."""
    seen, cursor, calls = [], 0, 0
    while True:
        kw = {}
        if count:
            kw["count"] = count
        if match:
            kw["match"] = match
        cursor, keys = r.scan(cursor, **kw)
        seen += keys
        calls += 1
        if between:
            between(calls)
        if cursor == 0:
            return seen, calls
        assert calls < 100 * N, "SCAN does not terminate"


@pytest.mark.parametrize("count", [None, 7, 100, 1000])
def test_full_scan_10000_keys(r, count):
    fill(r, N)
    seen, calls = full_scan(r, count=count)
    expected = {"key:%d" % i for i in range(N)}
    assert set(seen) == expected, "missing %r" % sorted(expected - set(seen))[:10]
    # Redis may return a key more than once, but a large excess means a broken cursor
    assert len(seen) <= 2 * N
    if count is None:
        assert calls >= N // 100  # default COUNT 10 cannot return 10k keys in a few calls


def test_full_scan_while_keyspace_changes(r):
    """Keys present for the whole scan must all be returned even when the table grows and
    shrinks between calls (rehash / stripe growth in the middle of an iteration)."""
    fill(r, N, prefix="stable:")
    churn = {"n": 0}

    def between(calls):
        if calls % 20 == 0:  # grow by 2000 keys, then delete half of the churn keys
            base = churn["n"]
            pipe = r.pipeline(transaction=False)
            for i in range(base, base + 2000):
                pipe.set("churn:%d" % i, "x")
            for i in range(base - 2000, base, 2):
                if i >= 0:
                    pipe.delete("churn:%d" % i)
            pipe.execute()
            churn["n"] = base + 2000

    seen, calls = full_scan(r, count=50, between=between)
    assert churn["n"] >= 10000  # the table really did grow a lot during the scan
    stable = {k for k in seen if k.startswith("stable:")}
    missing = {"stable:%d" % i for i in range(N)} - stable
    assert not missing, "SCAN lost %d stable keys, e.g. %r" % (len(missing), sorted(missing)[:5])


def test_scan_match_over_10000_keys(r):
    fill(r, N)
    seen, _ = full_scan(r, count=500, match="key:12*")
    expected = {"key:%d" % i for i in range(N) if str(i).startswith("12")}
    assert set(seen) == expected


def test_16_databases_isolated(server, r):
    clients = [server.client(db=db) for db in range(16)]
    for db, c in enumerate(clients):
        pipe = c.pipeline(transaction=False)
        pipe.set("shared", "db%d" % db)
        for i in range(db + 1):
            pipe.set("only:%d:%d" % (db, i), str(i))
        pipe.execute()
    for db, c in enumerate(clients):
        assert c.get("shared") == "db%d" % db
        assert c.dbsize() == db + 2
        assert sorted(c.keys("only:*")) == sorted("only:%d:%d" % (db, i) for i in range(db + 1))
        assert c.exists("only:%d:0" % ((db + 1) % 16)) == 0
    # operations in one db leave the others alone
    clients[3].delete("shared")
    clients[4].incr("counter")
    clients[5].expire("shared", 1000)
    clients[6].rename("shared", "renamed")
    clients[7].flushdb()
    for db, c in enumerate(clients):
        if db == 3:
            assert c.get("shared") is None
        elif db == 6:
            assert c.get("renamed") == "db6" and c.get("shared") is None
        elif db == 7:
            assert c.dbsize() == 0
        else:
            assert c.get("shared") == "db%d" % db
        assert (c.get("counter") == "1") == (db == 4)
        assert (c.ttl("shared") > 0) == (db == 5)
    text = r.cmd("INFO", "keyspace")
    for db in range(16):
        assert ("db%d:" % db in text) == (db != 7), text
    # SELECT on one connection walks through all 16
    conn = server.client(single_connection_client=True)
    for db in range(16):
        conn.cmd("SELECT", str(db))
        assert conn.dbsize() == clients[db].dbsize()
    r.flushall()
    assert all(c.dbsize() == 0 for c in clients)


def test_pipeline_10000_commands(r):
    pipe = r.pipeline(transaction=False)
    for i in range(N):
        m = i % 4
        if m == 0:
            pipe.set("p:%d" % i, "v%d" % i)
        elif m == 1:
            pipe.get("p:%d" % (i - 1))
        elif m == 2:
            pipe.incr("p:counter")
        else:
            pipe.get("p:missing")
    res = pipe.execute()
    assert len(res) == N
    for i, v in enumerate(res):
        m = i % 4
        if m == 0:
            assert v is True
        elif m == 1:
            assert v == "v%d" % (i - 1)
        elif m == 2:
            assert v == i // 4 + 1
        else:
            assert v is None
    assert r.get("p:counter") == str(N // 4)


def test_pipeline_with_errors_in_the_middle(r):
    pipe = r.pipeline(transaction=False)
    for i in range(1000):
        pipe.set("e:%d" % i, "x")
        pipe.incr("e:%d" % i)  # error: not an integer
        pipe.get("e:%d" % i)
    res = pipe.execute(raise_on_error=False)
    for i in range(1000):
        assert res[3 * i] is True
        assert str(res[3 * i + 1]) == "ERR value is not an integer or out of range"
        assert res[3 * i + 2] == "x"


def test_raw_pipeline_one_write(server, raw):
    """10,000 commands in one sendall, mixing RESP and inline, large and small."""
    c = raw(timeout=30)
    rnd = random.Random(1)
    req = []
    for i in range(N):
        kind = i % 5
        if kind == 0:
            req.append(encode("SET", "rp:%d" % i, b"v" * rnd.choice([1, 10, 100, 5000])))
        elif kind == 1:
            req.append(b"GET rp:%d\r\n" % (i - 1))  # inline
        elif kind == 2:
            req.append(encode("INCR", "rp:ctr"))
        elif kind == 3:
            req.append(b"PING\r\n")
        else:
            req.append(encode("ECHO", "e%d" % i))
    c.send(b"".join(req))
    for i in range(N):
        reply = c.read_reply()
        if i % 5 == 1:
            assert isinstance(reply, bytes) and set(reply) == {ord("v")}, i
        elif i % 5 == 0:
            assert reply == Simple("OK"), i
        elif i % 5 == 2:
            assert reply == i // 5 + 1
        elif i % 5 == 3:
            assert reply == Simple("PONG")
        else:
            assert reply == b"e%d" % i
    assert server.ping_raw() == b"+PONG\r\n"


def test_resp3_after_hello3(server, r, raw):
    r.set("s", "str")
    r.set("n", "42")
    c = raw()
    # before HELLO 3 the connection speaks RESP2
    c.send(encode("GET", "nokey") + encode("CONFIG", "GET", "port"))
    assert c.read_raw(5) == b"$-1\r\n"
    assert c.read_raw(4) == b"*2\r\n"
    c.read_reply(), c.read_reply()
    hello = c.call("HELLO", "3")
    assert isinstance(hello, Map) and hello[b"proto"] == 3
    # null is '_', a map is '%', INFO/CLIENT INFO are verbatim '=' strings
    c.send(encode("GET", "nokey"))
    assert c.read_raw(3) == b"_\r\n"
    c.send(encode("MGET", "s", "nokey"))
    assert c.read_raw(len(b"*2\r\n$3\r\nstr\r\n_\r\n")) == b"*2\r\n$3\r\nstr\r\n_\r\n"
    c.send(encode("CONFIG", "GET", "port"))
    port = str(server.port).encode()
    want = b"%%1\r\n$4\r\nport\r\n$%d\r\n%s\r\n" % (len(port), port)
    assert c.read_raw(len(want)) == want
    cfg = c.call("CONFIG", "GET", "maxmemory*")
    assert isinstance(cfg, Map) and b"maxmemory" in cfg
    info = c.call("INFO", "server")
    assert isinstance(info, Verbatim) and info.fmt == "txt"
    assert info.startswith(b"# Server\r\n")
    ci = c.call("CLIENT", "INFO")
    assert isinstance(ci, Verbatim) and b"resp=3" in ci
    assert c.call("EXISTS", "s") == 1
    assert c.call("TTL", "s") == -1
    assert c.call("INCRBYFLOAT", "n", "0.5") == b"42.5"  # a bulk string even in RESP3
    assert c.call("GET", "s") == b"str"
    assert c.call("SET", "s2", "v", "GET") is None
    assert c.call("PING") == Simple("PONG")
    assert c.call("TIME")[0].isdigit()
    cursor, found = b"0", []
    while True:
        reply = c.call("SCAN", cursor, "COUNT", "100")
        assert type(reply) is list and len(reply) == 2  # an array of 2, not a map or set
        cursor, keys = reply
        assert type(keys) is list
        found += keys
        if cursor == b"0":
            break
    assert sorted(found) == [b"n", b"s", b"s2"]
    cmd_docs = c.call("COMMAND", "DOCS", "get")
    assert isinstance(cmd_docs, Map)
    err = c.call("GET")
    assert err == "ERR wrong number of arguments for 'get' command"
    # HELLO 2 switches back
    c.call("HELLO", "2")
    c.send(encode("GET", "nokey"))
    assert c.read_raw(5) == b"$-1\r\n"


def test_resp3_types_of_other_families(server, r, raw):
    """Doubles, sets and maps in RESP3, once the sorted-set/set/hash families exist."""
    skip_if_unknown(r, "ZADD", "z", "1.5", "a")
    c = raw()
    c.call("HELLO", "3")
    score = c.call("ZSCORE", "z", "a")
    assert isinstance(score, Double) and score == 1.5
    c.send(encode("ZSCORE", "z", "a"))
    assert c.read_raw(len(b",1.5\r\n")) == b",1.5\r\n"
    assert c.call("ZRANGE", "z", "0", "-1", "WITHSCORES") == [[b"a", 1.5]]
    skip_if_unknown(r, "SADD", "s", "m")
    members = c.call("SMEMBERS", "s")
    assert isinstance(members, Set) and members == [b"m"]
    assert c.call("HGETALL", "nokey") == Map()
    r.delete("z", "s")
