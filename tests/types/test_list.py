"""Lists: every command, compared reply for reply with Debian's redis-server."""
import pytest


def test_push_pop_basic(d):
    d("LPUSH", "l", "a", "b", "c")
    d("RPUSH", "l", "x", "y")
    d("LRANGE", "l", 0, -1)
    d("LLEN", "l")
    d("LPOP", "l")
    d("RPOP", "l")
    d("LPOP", "l", 2)
    d("RPOP", "l", 10)
    d("EXISTS", "l")
    d("LPOP", "l")
    d("LPOP", "l", 0)
    d("RPOP", "l", 3)
    d("RPUSH", "l", "a")
    d("LPOP", "l", 0)
    d("LPOP", "l", -1)
    d("LPOP", "l", "x")
    d("LPOP", "l", 1, 2)
    d("LPUSHX", "nx", "a")
    d("RPUSHX", "nx", "a")
    d("EXISTS", "nx")
    d("LPUSHX", "l", "b", "c")
    d("RPUSHX", "l", "d")
    d("LRANGE", "l", 0, -1)
    d("LPUSH", "l")


def test_wrongtype(d):
    d("SET", "s", "v")
    for cmd in (("LPUSH", "s", "a"), ("RPUSH", "s", "a"), ("LPOP", "s"), ("RPOP", "s", 2),
                ("LRANGE", "s", 0, -1), ("LLEN", "s"), ("LINDEX", "s", 0), ("LSET", "s", 0, "x"),
                ("LREM", "s", 0, "a"), ("LTRIM", "s", 0, 1), ("LINSERT", "s", "BEFORE", "a", "b"),
                ("LPOS", "s", "a"), ("LMOVE", "s", "d", "LEFT", "RIGHT"), ("RPOPLPUSH", "s", "d"),
                ("LMPOP", 1, "s", "LEFT"), ("LPUSHX", "s", "a")):
        d(*cmd)
    d("RPUSH", "l", "a")
    d("LMOVE", "l", "s", "LEFT", "RIGHT")
    d("LRANGE", "l", 0, -1)


def test_lrange_indexes(d):
    d("RPUSH", "l", *range(20))
    for a, b in [(0, -1), (0, 0), (-1, -1), (5, 2), (-100, 100), (3, 7), (-3, -1), (19, 30),
                 (20, 30), (-25, -21), (-25, -20), (0, -21), ("a", 1), (1, "1.5")]:
        d("LRANGE", "l", a, b)
    d("LRANGE", "nokey", 0, -1)


def test_lindex_lset(d):
    d("RPUSH", "l", "a", "b", "c")
    for i in (0, 1, 2, 3, -1, -3, -4, "x", 9223372036854775807, -9223372036854775808):
        d("LINDEX", "l", i)
    d("LINDEX", "nokey", 0)
    d("LSET", "l", 1, "B")
    d("LSET", "l", -1, "C" * 200)
    d("LSET", "l", 3, "x")
    d("LSET", "l", -4, "x")
    d("LSET", "nokey", 0, "x")
    d("LSET", "l", "z", "x")
    d("LRANGE", "l", 0, -1)


def test_lrem(d):
    d("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a")
    d("LREM", "l", 2, "a")
    d("LRANGE", "l", 0, -1)
    d("LREM", "l", -1, "a")
    d("LRANGE", "l", 0, -1)
    d("LREM", "l", 0, "b")
    d("LRANGE", "l", 0, -1)
    d("LREM", "l", 0, "zz")
    d("LREM", "l", 0, "a")
    d("LREM", "l", 0, "c")
    d("EXISTS", "l")
    d("LREM", "l", "x", "a")
    d("RPUSH", "m", *(["x", "y"] * 50))
    d("LREM", "m", -30, "x")
    d("LRANGE", "m", 0, -1)


def test_ltrim(d):
    for a, b in [(0, -1), (1, 3), (-3, -1), (5, 2), (100, 200), (-100, 2), (0, 0)]:
        d("DEL", "l")
        d("RPUSH", "l", *range(10))
        d("LTRIM", "l", a, b)
        d("LRANGE", "l", 0, -1)
        d("EXISTS", "l")
    d("LTRIM", "nokey", 0, 1)
    d("LTRIM", "l", "a", 1)


def test_linsert(d):
    d("RPUSH", "l", "a", "b", "c")
    d("LINSERT", "l", "BEFORE", "b", "x")
    d("LINSERT", "l", "after", "c", "y")
    d("LINSERT", "l", "AFTER", "zz", "y")
    d("LINSERT", "l", "MIDDLE", "a", "y")
    d("LINSERT", "nokey", "BEFORE", "a", "y")
    d("LRANGE", "l", 0, -1)


def test_lpos(d):
    d("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c")
    for opts in [(), ("RANK", 2), ("RANK", -1), ("RANK", -2), ("COUNT", 0), ("COUNT", 2),
                 ("RANK", 2, "COUNT", 0), ("RANK", -1, "COUNT", 2), ("MAXLEN", 7),
                 ("MAXLEN", 1, "COUNT", 0), ("RANK", 0), ("COUNT", -1), ("MAXLEN", -1),
                 ("RANK", "x"), ("FOO",), ("RANK",), ("RANK", 5), ("COUNT", 5, "RANK", 5),
                 ("RANK", -9223372036854775808)]:
        d("LPOS", "l", "c", *opts)
    d("LPOS", "l", "zz")
    d("LPOS", "l", "zz", "COUNT", 1)
    d("LPOS", "nokey", "zz")
    d("LPOS", "nokey", "zz", "COUNT", 1)


def test_lmove_rpoplpush(d):
    d("RPUSH", "a", 1, 2, 3)
    for w1 in ("LEFT", "RIGHT"):
        for w2 in ("LEFT", "RIGHT"):
            d("LMOVE", "a", "b", w1, w2)
            d("LMOVE", "a", "a", w1, w2)
            d("LRANGE", "a", 0, -1)
            d("LRANGE", "b", 0, -1)
    d("LMOVE", "a", "b", "UP", "LEFT")
    d("RPOPLPUSH", "a", "b")
    d("RPOPLPUSH", "a", "b")
    d("EXISTS", "a")
    d("RPOPLPUSH", "nokey", "b")
    d("RPOPLPUSH", "b", "b")
    d("LRANGE", "b", 0, -1)


def test_lmpop(d):
    d("RPUSH", "a", 1, 2, 3)
    d("RPUSH", "b", 4, 5)
    d("LMPOP", 2, "x", "a", "LEFT")
    d("LMPOP", 2, "x", "b", "RIGHT", "COUNT", 10)
    d("LMPOP", 2, "x", "b", "RIGHT", "COUNT", 10)
    d("LMPOP", 3, "x", "b", "a", "RIGHT", "COUNT", 1)
    for bad in [(0, "a", "LEFT"), (-1, "a", "LEFT"), ("x", "a", "LEFT"), (3, "a", "LEFT"),
                (1, "a", "UP"), (1, "a", "LEFT", "COUNT", 0), (1, "a", "LEFT", "COUNT"),
                (1, "a", "LEFT", "COUNT", 1, "COUNT", 1), (1, "a", "LEFT", "FOO")]:
        d("LMPOP", *bad)


def test_large_list_chunks(d):
    # crosses many chunks; big elements get chunks of their own
    for i in range(300):
        d("RPUSH", "l", "v%d" % i * (1 + i % 7))
        if i % 50 == 0:
            d("LPUSH", "l", "B" * 5000)
    d("LLEN", "l")
    for i in (0, 1, 150, 299, -1, -150, 352):
        d("LINDEX", "l", i)
    d("LRANGE", "l", 100, 120)
    d("LINSERT", "l", "BEFORE", "v100" * 3, "ins")
    d("LINSERT", "l", "AFTER", "B" * 5000, "ins2")
    d("LREM", "l", 0, "B" * 5000)
    d("LTRIM", "l", 10, -10)
    d("LRANGE", "l", 0, -1)
    d("LPOS", "l", "ins", "RANK", -1)


def test_encoding_and_type(r):
    r.rpush("l", "a")
    assert r.object("encoding", "l") == "quicklist"
    assert r.type("l") == "list"
    r.copy("l", "l2")
    r.rpush("l2", "b")
    assert r.lrange("l", 0, -1) == ["a"]
    assert r.lrange("l2", 0, -1) == ["a", "b"]
    r.rename("l2", "l3")
    assert r.lrange("l3", 0, -1) == ["a", "b"]
    assert r.memory_usage("l3") > 0
    r.expire("l3", 100)
    assert r.ttl("l3") > 0
    assert r.scan(0, _type="list", count=10000)[1] == sorted(r.scan(0, _type="list", count=10000)[1])
    assert set(r.scan(0, _type="list", count=10000)[1]) == {"l", "l3"}
