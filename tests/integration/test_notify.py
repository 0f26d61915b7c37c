"""Keyspace notifications against redis-server 7.0: for each command family a list of commands
runs on both servers with notify-keyspace-events KEA (and some with other classes); a
subscriber on __key*__:* records every (channel, message) pair, which must be the same
sequence on both. Also expiry (lazy and active), eviction, memcached writes, and the CONFIG
SET / GET forms of the setting."""

import socket
import sys
import time
from pathlib import Path

import pytest
import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tcharness  # noqa: E402

SENTINEL = b"__notify_test_end__"

pytestmark = pytest.mark.sanitize


@pytest.fixture(scope="module")
def pair():
    tcharness.require_twincache()
    tc = tcharness.start_twincache(mc=True, check=True)
    rs = tcharness.start_redis()
    yield tc, rs
    rs.stop()
    tc.stop()


def run_events(srv, cmds, classes="KEA", setup=()):
    """Run setup (no events recorded), then cmds with notify-keyspace-events classes; return
    the (channel, message) pairs a __key*__:* subscriber saw, in order."""
    c = srv.client(raw=True)
    c.execute_command("FLUSHALL")
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
    for cmd in setup:
        c.execute_command(*cmd)
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", classes)
    ps = srv.client(raw=True).pubsub()
    ps.psubscribe("__key*__:*")
    ps.subscribe(SENTINEL)
    for _ in range(2):
        ps.get_message(timeout=5)
    for cmd in cmds:
        try:
            c.execute_command(*cmd)
        except redis.ResponseError:
            pass
    c.execute_command("PUBLISH", SENTINEL, "x")
    got = []
    deadline = time.time() + 10
    while time.time() < deadline:
        m = ps.get_message(timeout=1)
        if m is None:
            continue
        if m["channel"] == SENTINEL:
            break
        got.append((m["channel"], m["data"]))
    ps.close()
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
    return got


def diff(pair, cmds, classes="KEA", setup=()):
    tc, rs = pair
    want = run_events(rs, cmds, classes, setup)
    got = run_events(tc, cmds, classes, setup)
    assert got == want
    return got


STRINGS = [
    ("SET", "s", "v"), ("SET", "s", "w", "EX", "100"), ("SET", "s", "x", "NX"),
    ("SET", "s", "y", "XX", "KEEPTTL"), ("SETNX", "n", "1"), ("SETEX", "e", "10", "v"),
    ("PSETEX", "e", "10000", "v"), ("GETSET", "s", "z"), ("MSET", "a", "1", "b", "2"),
    ("MSETNX", "c", "1", "d", "2"), ("MSETNX", "c", "1", "f", "2"), ("INCR", "i"),
    ("INCRBY", "i", "5"), ("DECR", "i"), ("DECRBY", "i", "2"), ("INCRBYFLOAT", "f", "1.5"),
    ("APPEND", "s", "tail"), ("APPEND", "new", "v"), ("SETRANGE", "s", "1", "QQ"),
    ("SETRANGE", "sr", "3", "x"), ("SETRANGE", "s", "0", ""), ("GETDEL", "a"),
    ("GETDEL", "nokey"), ("GETEX", "b", "EX", "100"), ("GETEX", "b", "PERSIST"),
    ("GETEX", "b"), ("INCR", "s"), ("SET", "s", "v", "PX", "100000", "GET"),
]

KEYS = [
    ("SET", "k", "v"), ("EXPIRE", "k", "100"), ("PEXPIRE", "k", "100000"),
    ("EXPIREAT", "k", "9999999999"), ("PERSIST", "k"), ("PERSIST", "k"), ("EXPIRE", "nokey", "5"),
    ("RENAME", "k", "k2"), ("SET", "d", "1"), ("RENAME", "k2", "d"), ("RENAMENX", "d", "e"),
    ("RENAMENX", "e", "e"), ("COPY", "e", "f"), ("COPY", "e", "f"), ("COPY", "e", "f", "REPLACE"),
    ("MOVE", "f", "1"), ("MOVE", "nokey", "1"), ("DEL", "e", "nokey", "d"), ("SET", "u", "1"),
    ("UNLINK", "u"), ("SET", "x", "1"), ("EXPIRE", "x", "-1"), ("SET", "y", "1"),
    ("PEXPIREAT", "y", "1"), ("SET", "z", "1", "EX", "100"), ("EXPIRE", "z", "50", "GT"),
    ("EXPIRE", "z", "50", "LT"), ("FLUSHDB",), ("SET", "after", "1"), ("FLUSHALL",),
]

LISTS = [
    ("LPUSH", "l", "a", "b"), ("RPUSH", "l", "c"), ("LPUSHX", "l", "d"), ("RPUSHX", "l", "e"),
    ("LPUSHX", "nol", "d"), ("LINSERT", "l", "BEFORE", "a", "x"), ("LINSERT", "l", "AFTER", "zz", "x"),
    ("LSET", "l", "0", "y"), ("LREM", "l", "1", "x"), ("LREM", "l", "1", "nothere"),
    ("LTRIM", "l", "0", "2"), ("LPOP", "l"), ("RPOP", "l"), ("RPOP", "l", "5"),
    ("RPUSH", "src", "1", "2", "3"), ("RPOPLPUSH", "src", "dst"), ("LMOVE", "src", "dst", "LEFT", "RIGHT"),
    ("LMOVE", "src", "src", "LEFT", "RIGHT"), ("LMOVE", "src", "dst", "RIGHT", "LEFT"),
    ("LPOP", "nol"), ("RPUSH", "m", "1", "2"), ("LMPOP", "2", "nol", "m", "LEFT", "COUNT", "5"),
    ("RPUSH", "t", "1", "2", "3"), ("LTRIM", "t", "5", "10"), ("BLPOP", "dst", "1"),
    ("BRPOP", "dst", "1"), ("BLMOVE", "dst", "n2", "LEFT", "LEFT", "1"),
]

HASHES = [
    ("HSET", "h", "a", "1", "b", "2"), ("HSET", "h", "a", "1"), ("HSETNX", "h", "a", "1"),
    ("HSETNX", "h", "c", "3"), ("HMSET", "h", "d", "4"), ("HINCRBY", "h", "a", "5"),
    ("HINCRBYFLOAT", "h", "f", "1.5"), ("HDEL", "h", "nofield"), ("HDEL", "h", "a", "b"),
    ("HDEL", "h", "c", "d", "f"), ("HDEL", "h", "x"), ("HINCRBY", "h2", "x", "1"),
]

SETS = [
    ("SADD", "s", "a", "b", "c"), ("SADD", "s", "a"), ("SREM", "s", "zz"), ("SREM", "s", "a"),
    ("SMOVE", "s", "t", "b"), ("SMOVE", "s", "t", "nothere"), ("SMOVE", "s", "t", "c"),
    ("SADD", "p", "1"), ("SPOP", "p"), ("SADD", "p", "1", "2", "3"), ("SPOP", "p", "2"),
    ("SPOP", "p", "10"), ("SADD", "a", "1", "2"), ("SADD", "b", "2", "3"),
    ("SINTERSTORE", "i", "a", "b"), ("SUNIONSTORE", "u", "a", "b"), ("SDIFFSTORE", "d", "a", "b"),
    ("SINTERSTORE", "i", "a", "nokey"), ("SDIFFSTORE", "nokey2", "nokey", "a"),
]

ZSETS = [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "z", "1", "a"), ("ZADD", "z", "INCR", "5", "a"),
    ("ZINCRBY", "z", "1", "b"), ("ZREM", "z", "nothere"), ("ZREM", "z", "a"),
    ("ZADD", "z", "4", "d", "5", "e", "6", "f"), ("ZREMRANGEBYSCORE", "z", "0", "2"),
    ("ZREMRANGEBYRANK", "z", "0", "0"), ("ZREMRANGEBYLEX", "z", "-", "+"),
    ("ZADD", "y", "1", "a", "2", "b"), ("ZPOPMIN", "y"), ("ZPOPMAX", "y"), ("ZPOPMIN", "y"),
    ("ZADD", "z1", "1", "a"), ("ZADD", "z2", "2", "a", "3", "b"),
    ("ZUNIONSTORE", "zu", "2", "z1", "z2"), ("ZINTERSTORE", "zi", "2", "z1", "z2"),
    ("ZDIFFSTORE", "zd", "2", "z2", "z1"), ("ZINTERSTORE", "zi", "2", "z1", "nokey"),
    ("ZRANGESTORE", "zr", "z2", "0", "-1"), ("ZMPOP", "1", "z2", "MIN"),
    ("BZPOPMIN", "z2", "1"), ("BZPOPMAX", "zu", "1"),
]

STREAMS = [
    ("XADD", "x", "1-1", "f", "v"), ("XADD", "x", "2-1", "f", "v"), ("XADD", "x", "MAXLEN", "1", "3-1", "f", "v"),
    ("XTRIM", "x", "MAXLEN", "0"), ("XADD", "x", "4-1", "f", "v"), ("XDEL", "x", "4-1"),
    ("XDEL", "x", "9-9"), ("XGROUP", "CREATE", "x", "g", "0"), ("XGROUP", "CREATECONSUMER", "x", "g", "c"),
    ("XADD", "x", "5-1", "f", "v"), ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "x", ">"),
    ("XGROUP", "SETID", "x", "g", "0"), ("XGROUP", "DELCONSUMER", "x", "g", "c"),
    ("XGROUP", "DESTROY", "x", "g"), ("XGROUP", "CREATE", "y", "g", "$", "MKSTREAM"),
]

OTHER = [
    ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "1"), ("BITOP", "AND", "bo", "b", "b"),
    ("BITFIELD", "bf", "SET", "u8", "0", "1"), ("BITFIELD", "bf", "GET", "u8", "0"),
    ("PFADD", "hl", "a"), ("PFADD", "hl", "a"), ("PFMERGE", "hm", "hl"),
    ("GEOADD", "g", "13.361389", "38.115556", "P"), ("GEOADD", "g", "15.087269", "37.502669", "C"),
    ("GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"),
    ("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr"),
    ("GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
    ("RPUSH", "sl", "3", "1", "2"),
    ("SORT", "sl", "STORE", "so"), ("SORT", "nokey", "STORE", "so"),
    ("SET", "r", "v"),
]


@pytest.mark.parametrize("family", ["STRINGS", "KEYS", "LISTS", "HASHES", "SETS", "ZSETS",
                                    "STREAMS", "OTHER"])
def test_family_events(pair, family):
    got = diff(pair, globals()[family])
    assert got, "no events at all"


def test_classes(pair):
    cmds = [("SET", "s", "v"), ("LPUSH", "l", "a"), ("DEL", "s"), ("HSET", "h", "f", "v"),
            ("SADD", "st", "a"), ("ZADD", "z", "1", "a"), ("XADD", "x", "1-1", "f", "v"),
            ("EXPIRE", "l", "100")]
    for classes in ("K$", "El", "Kg", "Eh", "KEs", "Ez", "Kt", "E", "", "KEn", "KA", "Egx"):
        diff(pair, cmds, classes)


def test_keymiss(pair):
    cmds = [("GET", "nokey"), ("SET", "s", "v"), ("GET", "s"), ("HGET", "nohash", "f"),
            ("LRANGE", "nolist", "0", "-1"), ("SMEMBERS", "noset"), ("ZSCORE", "nozset", "m"),
            ("XRANGE", "nostream", "-", "+"), ("STRLEN", "nokey"), ("MGET", "a", "s", "b"),
            ("EXISTS", "nokey"), ("TYPE", "nokey"), ("TTL", "nokey"), ("HGETALL", "nohash"),
            ("LLEN", "nolist"), ("SCARD", "noset"), ("GETRANGE", "nokey", "0", "1")]
    diff(pair, cmds, "KEm")


def test_config_forms(pair):
    for srv in pair:
        c = srv.client(raw=True)
        out = []
        for v in ("KEA", "AKE", "Kx", "gn", "Agn", "Amn", "KEAmn", "Kz$", "", "K", "d", "ElshzxetgK$"):
            c.execute_command("CONFIG", "SET", "notify-keyspace-events", v)
            out.append(c.execute_command("CONFIG", "GET", "notify-keyspace-events")[1])
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("CONFIG", "SET", "notify-keyspace-events", "q")
        out.append(str(e.value))
        c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
        srv.result = out
    assert pair[0].result == pair[1].result


def test_lazy_and_active_expiry(pair):
    # lazy: the key expired is found by a read; active: the sweep finds it
    cmds = [("SET", "lazy", "v", "PX", "20"), ("SET", "act", "v", "PX", "20")]
    setup = ()
    for srv in pair:
        c = srv.client(raw=True)
        c.execute_command("FLUSHALL")
    def run(srv):
        c = srv.client(raw=True)
        c.execute_command("CONFIG", "SET", "notify-keyspace-events", "KEA")
        ps = srv.client(raw=True).pubsub()
        ps.psubscribe("__key*__:*")
        ps.get_message(timeout=5)
        for cmd in cmds:
            c.execute_command(*cmd)
        time.sleep(0.1)
        assert c.execute_command("GET", "lazy") is None
        got = []
        deadline = time.time() + 15  # the active sweep's pace, on a loaded machine
        while time.time() < deadline and len(got) < 12:
            m = ps.get_message(timeout=0.5)
            if m:
                got.append((m["channel"], m["data"]))
        ps.close()
        c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
        return got
    got, want = run(pair[0]), run(pair[1])
    assert sorted(got) == sorted(want)
    assert (b"__keyevent@0__:expired", b"lazy") in got
    assert (b"__keyevent@0__:expired", b"act") in got
    # the lazy one is the first expired event (the GET found it)
    assert [m for m in got if m[0].endswith(b"expired")][0][1] in (b"lazy", b"act")


def test_eviction_event(pair):
    for srv in pair:
        c = srv.client(raw=True)
        c.execute_command("FLUSHALL")
    tc = pair[0]
    c = tc.client(raw=True)
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", "Ee")
    ps = tc.client(raw=True).pubsub()
    ps.subscribe("__keyevent@0__:evicted")
    ps.get_message(timeout=5)
    c.execute_command("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    for i in range(200):
        c.execute_command("SET", "k%d" % i, "x" * 1000)
    info = c.execute_command("INFO", "memory").decode()
    used = int(info.split("used_memory:")[1].split("\r\n")[0])
    c.execute_command("CONFIG", "SET", "maxmemory", str(used - 50000))
    got = []
    deadline = time.time() + 10
    i = 0
    while time.time() < deadline and not got:
        c.execute_command("SET", "trigger%d" % i, "x" * 1000)  # writes evict until under
        i += 1
        m = ps.get_message(timeout=0.2)
        if m:
            got.append(m["data"])
    c.execute_command("CONFIG", "SET", "maxmemory", "0")
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
    ps.close()
    assert got and (got[0].startswith(b"k") or got[0].startswith(b"trigger"))


def mc_cmd(port, line, data=None):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(line + b"\r\n" + (data + b"\r\n" if data is not None else b""))
    out = b""
    while not out.endswith(b"\r\n"):
        out += s.recv(4096)
    s.close()
    return out


def test_memcached_events(pair):
    tc = pair[0]
    c = tc.client(raw=True)
    c.execute_command("FLUSHALL")
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", "KEA")
    ps = tc.client(raw=True).pubsub()
    ps.psubscribe("__keyevent@0__:*")
    ps.get_message(timeout=5)
    mc_cmd(tc.mc_port, b"set m 0 0 1", b"5")
    mc_cmd(tc.mc_port, b"append m 0 0 1", b"1")
    mc_cmd(tc.mc_port, b"incr m 2")
    mc_cmd(tc.mc_port, b"decr m 1")
    mc_cmd(tc.mc_port, b"touch m 100")
    mc_cmd(tc.mc_port, b"delete m")
    mc_cmd(tc.mc_port, b"delete m")
    got = []
    deadline = time.time() + 5
    while time.time() < deadline and len(got) < 6:
        m = ps.get_message(timeout=0.5)
        if m:
            got.append((m["channel"], m["data"]))
    ps.close()
    c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
    assert got == [(b"__keyevent@0__:set", b"m"), (b"__keyevent@0__:append", b"m"),
                   (b"__keyevent@0__:incrby", b"m"), (b"__keyevent@0__:decrby", b"m"),
                   (b"__keyevent@0__:expire", b"m"), (b"__keyevent@0__:del", b"m")]


def test_redis_py_listener(pair):
    """A keyspace-event listener as applications write it with Debian's redis-py: a pubsub
    worker thread with a handler per pattern, on a key written from other connections."""
    tc = pair[0]
    r = tc.client(decode=True)
    r.config_set("notify-keyspace-events", "Kg$")
    seen = []
    p = r.pubsub()
    p.psubscribe(**{"__keyspace@0__:user:*": lambda m: seen.append((m["channel"], m["data"]))})
    th = p.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        w = tc.client(decode=True)
        w.set("user:1", "a")
        w.expire("user:1", 100)
        w.set("other", "x")
        w.delete("user:1")
        deadline = time.time() + 5
        while len(seen) < 3 and time.time() < deadline:
            time.sleep(0.01)
    finally:
        th.stop()
        th.join(5)
        p.close()
        r.config_set("notify-keyspace-events", "")
    assert seen == [("__keyspace@0__:user:1", "set"), ("__keyspace@0__:user:1", "expire"),
                    ("__keyspace@0__:user:1", "del")]
