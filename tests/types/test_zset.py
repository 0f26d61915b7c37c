"""Sorted sets: every command, compared with Debian's redis-server (orders are defined for
sorted sets, so replies are compared exactly except for random and hashtable-ordered ones)."""
import pytest

SCORES = ["1", "2.5", "-3", "1e3", "-inf", "+inf", "0", "-0", "1.1", "3.0000000000000004",
          "0.1", "1E-5", "123456789012345678"]


def fill(d, key="z", n=10):
    args = []
    for i in range(n):
        args += [SCORES[i % len(SCORES)], "m%d" % i]
    d("ZADD", key, *args)


def test_zadd_options(d):
    d("ZADD", "z", 1, "a", 2, "b")
    d("ZADD", "z", "NX", 5, "a", 3, "c")
    d("ZADD", "z", "XX", 5, "a", 3, "d")
    d("ZADD", "z", "XX", "CH", 6, "a", 3, "d")
    d("ZADD", "z", "GT", "CH", 1, "a", 10, "b")
    d("ZADD", "z", "LT", "CH", 1, "a", 10, "b")
    d("ZADD", "z", "GT", "XX", "CH", 100, "a", 1, "zz")
    d("ZADD", "z", "INCR", 5, "a")
    d("ZADD", "z", "INCR", "NX", 5, "a")
    d("ZADD", "z", "INCR", "XX", 5, "nope")
    d("ZADD", "z", "INCR", "GT", -1, "a")
    d("ZADD", "z", "INCR", 5, "a", 6, "b")
    d("ZADD", "z", "NX", "XX", 1, "a")
    d("ZADD", "z", "GT", "LT", 1, "a")
    d("ZADD", "z", "NX", "GT", 1, "a")
    d("ZADD", "z", 1)
    d("ZADD", "z", 1, "a", 2)
    d("ZADD", "z", "x", "a")
    d("ZADD", "z", "nan", "a")
    d("ZADD", "z", "1", "a", "bad", "b")
    d("ZADD", "z", "CH")
    d("ZADD", "newkey", "XX", 1, "a")
    d("ZADD", "newkey", "XX", "INCR", 1, "a")
    d("EXISTS", "newkey")
    d("ZADD", "z", "inf", "i")
    d("ZADD", "z", "INCR", "-inf", "i")
    d("ZRANGE", "z", 0, -1, "WITHSCORES")
    d("ZINCRBY", "z", 2, "a")
    d("ZINCRBY", "z", "x", "a")
    d("ZINCRBY", "z", 1.5, "new")
    d("ZINCRBY", "z2", "-inf", "new")
    d("ZINCRBY", "z2", "+inf", "new")
    d("ZRANGE", "z", 0, -1, "WITHSCORES")
    d("ZADD", "z", 1, "a", 1, "a", 2, "a")
    d("ZSCORE", "z", "a")


def test_scores_formatting(d):
    fill(d, n=len(SCORES))
    d("ZRANGE", "z", 0, -1, "WITHSCORES")
    for m in range(len(SCORES)):
        d("ZSCORE", "z", "m%d" % m)
    d("ZMSCORE", "z", "m1", "nope", "m2")
    d("ZMSCORE", "nokey", "m1", "m2")
    d("ZSCORE", "z", "nope")
    d("ZSCORE", "nokey", "nope")
    d("ZINCRBY", "z", "0.1", "m10")
    d("ZINCRBY", "z", "0.2", "m10")


def test_card_rem_rank(d):
    fill(d, n=12)
    d("ZCARD", "z")
    d("ZCARD", "nokey")
    for m in ("m0", "m3", "m4", "m5", "nope"):
        d("ZRANK", "z", m)
        d("ZREVRANK", "z", m)
    d("ZRANK", "nokey", "a")
    d("ZREM", "z", "m0", "m1", "nope", "m0")
    d("ZRANGE", "z", 0, -1)
    d("ZREM", "nokey", "a")
    d("ZREM", "z", *["m%d" % i for i in range(12)])
    d("EXISTS", "z")


def test_zrange_rank(d):
    fill(d, n=10)
    for a, b in [(0, -1), (2, 5), (-3, -1), (5, 2), (-100, 100), (10, 20), (0, 0), (-1, -1),
                 ("x", 1)]:
        d("ZRANGE", "z", a, b)
        d("ZRANGE", "z", a, b, "WITHSCORES")
        d("ZRANGE", "z", a, b, "REV")
        d("ZREVRANGE", "z", a, b, "WITHSCORES")
        d("ZRANGE", "z", a, b, "REV", "WITHSCORES")
    d("ZRANGE", "z", 0, -1, "LIMIT", 0, 1)
    d("ZRANGE", "z", 0, -1, "BYLEX", "WITHSCORES")
    d("ZRANGE", "z", 0, -1, "FOO")
    d("ZRANGE", "z", 0, -1, "REV", "REV")
    d("ZRANGE", "nokey", 0, -1)
    d("ZREVRANGE", "z", 0, -1, "REV")


SCORE_RANGES = [("-inf", "+inf"), ("-inf", "inf"), ("1", "3"), ("(1", "3"), ("1", "(3"),
                ("(1", "(3"), ("3", "1"), ("(-inf", "(+inf"), ("0", "0"), ("(0", "0"),
                ("-0", "0"), ("1e2", "1e4"), ("x", "1"), ("1", "y"), ("(", "1"), ("", "5"),
                ("nan", "1"), ("1.5e-5", "2.5"), ("-3", "-3"), ("((1", "2")]


def test_score_ranges(d):
    fill(d, n=len(SCORES))
    for a, b in SCORE_RANGES:
        d("ZCOUNT", "z", a, b)
        d("ZRANGEBYSCORE", "z", a, b)
        d("ZRANGEBYSCORE", "z", a, b, "WITHSCORES")
        d("ZREVRANGEBYSCORE", "z", b, a, "WITHSCORES")
        d("ZRANGE", "z", a, b, "BYSCORE")
        d("ZRANGE", "z", b, a, "BYSCORE", "REV", "WITHSCORES")
        for off, cnt in [(0, 1), (1, 2), (2, -1), (-1, 3), (0, 0), (100, 1), (1, 100)]:
            d("ZRANGEBYSCORE", "z", a, b, "LIMIT", off, cnt)
            d("ZREVRANGEBYSCORE", "z", b, a, "LIMIT", off, cnt, "WITHSCORES")
    d("ZCOUNT", "nokey", 0, 1)
    d("ZRANGEBYSCORE", "z", 0, 1, "LIMIT", 1)
    d("ZRANGEBYSCORE", "z", 0, 1, "LIMIT", "x", 1)
    d("ZRANGEBYSCORE", "z", 0, 1, "REV")
    d("ZRANGEBYSCORE", "z", 0, 1, "BYLEX")


LEX_RANGES = [("-", "+"), ("+", "-"), ("[a", "[c"), ("(a", "(c"), ("[b", "+"), ("-", "(b"),
              ("[aa", "[b"), ("(", "["), ("[", "(z"), ("a", "[b"), ("[a", "c"), ("-", "-"),
              ("+", "+"), ("[c", "[a"), ("[e", "[e"), ("(e", "[e")]


def test_lex_ranges(d):
    d("ZADD", "z", *[x for m in ["a", "aa", "ab", "b", "ba", "c", "d", "e", "f", ""]
                     for x in (0, m)])
    for a, b in LEX_RANGES:
        d("ZLEXCOUNT", "z", a, b)
        d("ZRANGEBYLEX", "z", a, b)
        d("ZREVRANGEBYLEX", "z", b, a)
        d("ZRANGE", "z", a, b, "BYLEX")
        d("ZRANGE", "z", b, a, "BYLEX", "REV")
        for off, cnt in [(0, 1), (1, 2), (2, -1), (-1, 3), (0, 0)]:
            d("ZRANGEBYLEX", "z", a, b, "LIMIT", off, cnt)
            d("ZREVRANGEBYLEX", "z", b, a, "LIMIT", off, cnt)
    d("ZLEXCOUNT", "nokey", "-", "+")
    d("ZRANGEBYLEX", "z", "-", "+", "WITHSCORES")
    for a, b in LEX_RANGES:
        d("DEL", "y")
        d("ZADD", "y", *[x for m in ["a", "aa", "ab", "b", "ba", "c", "d", "e"] for x in (0, m)])
        d("ZREMRANGEBYLEX", "y", a, b)
        d("ZRANGE", "y", 0, -1)


def test_zremrange(d):
    for a, b in [(0, -1), (1, 3), (-3, -1), (5, 2), (100, 200), (-100, 2), (0, 0), ("x", 1)]:
        d("DEL", "z")
        fill(d, n=10)
        d("ZREMRANGEBYRANK", "z", a, b)
        d("ZRANGE", "z", 0, -1, "WITHSCORES")
        d("EXISTS", "z")
    for a, b in SCORE_RANGES:
        d("DEL", "z")
        fill(d, n=len(SCORES))
        d("ZREMRANGEBYSCORE", "z", a, b)
        d("ZRANGE", "z", 0, -1, "WITHSCORES")
    d("ZREMRANGEBYRANK", "nokey", 0, 1)
    d("ZREMRANGEBYSCORE", "nokey", 0, 1)
    d("ZREMRANGEBYLEX", "nokey", "-", "+")


def test_pops(d):
    fill(d, n=8)
    d("ZPOPMIN", "z")
    d("ZPOPMAX", "z")
    d("ZPOPMIN", "z", 2)
    d("ZPOPMAX", "z", 0)
    d("ZPOPMAX", "z", -1)
    d("ZPOPMAX", "z", "x")
    d("ZPOPMAX", "z", 1, 2)
    d("ZPOPMAX", "z", 100)
    d("EXISTS", "z")
    d("ZPOPMIN", "nokey")
    d("ZPOPMIN", "nokey", 2)
    d("ZPOPMIN", "nokey", 0)
    fill(d, "a", 3)
    fill(d, "b", 5)
    d("ZMPOP", 2, "x", "a", "MIN")
    d("ZMPOP", 3, "x", "a", "b", "MAX", "COUNT", 10)
    d("ZMPOP", 2, "a", "b", "MIN", "COUNT", 10)
    d("ZMPOP", 2, "a", "b", "MIN", "COUNT", 10)
    d("SET", "str", 1)
    for bad in [(0, "a", "MIN"), (-1, "a", "MIN"), ("x", "a", "MIN"), (3, "a", "MIN"),
                (1, "a", "UP"), (1, "a", "MIN", "COUNT", 0), (1, "a", "MIN", "COUNT"),
                (1, "a", "MIN", "COUNT", 1, "COUNT", 1), (1, "str", "MIN"), (2, "x", "str", "MIN")]:
        d("ZMPOP", *bad)


def test_wrongtype(d):
    d("SET", "s", "v")
    for cmd in (("ZADD", "s", 1, "a"), ("ZINCRBY", "s", 1, "a"), ("ZREM", "s", "a"),
                ("ZSCORE", "s", "a"), ("ZMSCORE", "s", "a"), ("ZCARD", "s"),
                ("ZCOUNT", "s", 0, 1), ("ZLEXCOUNT", "s", "-", "+"), ("ZRANK", "s", "a"),
                ("ZRANGE", "s", 0, 1), ("ZRANGEBYSCORE", "s", 0, 1),
                ("ZRANGEBYLEX", "s", "-", "+"), ("ZREVRANGE", "s", 0, 1),
                ("ZREMRANGEBYRANK", "s", 0, 1), ("ZREMRANGEBYSCORE", "s", 0, 1),
                ("ZREMRANGEBYLEX", "s", "-", "+"), ("ZPOPMIN", "s"), ("ZPOPMAX", "s", 2),
                ("ZRANDMEMBER", "s"), ("ZSCAN", "s", 0), ("ZUNIONSTORE", "d", 1, "s"),
                ("ZINTER", 1, "s"), ("ZRANGESTORE", "d", "s", 0, 1), ("ZDIFF", 2, "nokey", "s"),
                ("ZRANGE", "s", "x", 1), ("ZCOUNT", "s", "x", 1)):
        d(*cmd)


def test_zrangestore(d):
    fill(d, n=10)
    d("ZRANGESTORE", "dst", "z", 0, 3)
    d("ZRANGE", "dst", 0, -1, "WITHSCORES")
    d("ZRANGESTORE", "dst", "z", 2, 5, "BYSCORE", "LIMIT", 1, 2)
    d("ZRANGE", "dst", 0, -1, "WITHSCORES")
    d("ZRANGESTORE", "dst", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 0, 3)
    d("ZRANGE", "dst", 0, -1, "WITHSCORES")
    d("ZRANGESTORE", "dst", "z", 5, 2)
    d("EXISTS", "dst")
    d("ZRANGESTORE", "dst", "nokey", 0, -1)
    d("ZRANGESTORE", "dst", "z", 0, -1, "WITHSCORES")
    d("SET", "str", "v")
    d("ZRANGESTORE", "str", "z", 0, 1)
    d("TYPE", "str")
    d("ZRANGESTORE", "z", "z", 0, 1)
    d("ZRANGE", "z", 0, -1, "WITHSCORES")


def test_set_operations(d):
    d("ZADD", "a", 1, "x", 2, "y", 3, "z")
    d("ZADD", "b", 10, "y", 20, "z", 30, "w")
    d("SADD", "s", "x", "w", "v")
    d("ZADD", "inf", "inf", "x", "-inf", "y")
    for op in ("ZUNION", "ZINTER", "ZDIFF"):
        for keys in ((1, "a"), (2, "a", "b"), (3, "a", "b", "s"), (2, "a", "nokey"),
                     (2, "nokey", "a"), (2, "a", "a"), (2, "b", "a"), (2, "inf", "a")):
            d(op, *keys, "WITHSCORES")
            d(op, *keys)
            d(op + "STORE", "dst", *keys)
            d("ZRANGE", "dst", 0, -1, "WITHSCORES")
    for opts in (("WEIGHTS", 2, 3), ("WEIGHTS", 0, "inf"), ("WEIGHTS", "-inf", "inf"),
                 ("AGGREGATE", "MIN"), ("AGGREGATE", "MAX", "WEIGHTS", 1, -1),
                 ("AGGREGATE", "SUM"), ("AGGREGATE", "FOO"), ("WEIGHTS", 1),
                 ("WEIGHTS", 1, "x"), ("WEIGHTS", 1, 2, 3), ("AGGREGATE",), ("FOO",),
                 ("WITHSCORES", "WITHSCORES"), ("LIMIT", 1)):
        for op in ("ZUNION", "ZINTER", "ZDIFF"):
            d(op, 2, "a", "b", *opts)
            d(op + "STORE", "dst", 2, "a", "b", *opts)
            d(op, 2, "a", "inf", *opts)
            d(op + "STORE", "dst2", 2, "inf", "inf", *opts)
            d("ZRANGE", "dst2", 0, -1, "WITHSCORES")
    for bad in ((0, "a"), (-1, "a"), ("x", "a"), (3, "a", "b")):
        d("ZUNION", *bad)
        d("ZINTERSTORE", "dst", *bad)
        d("ZDIFFSTORE", "dst", *bad)
    d("ZINTERCARD", 2, "a", "b")
    d("ZINTERCARD", 2, "a", "b", "LIMIT", 1)
    d("ZINTERCARD", 2, "a", "b", "LIMIT", -1)
    d("ZINTERCARD", 0, "a")
    d("ZINTERCARD", 2, "a", "s")
    d("ZINTERCARD", 1, "a", "WEIGHTS", 1)
    d("ZUNIONSTORE", "a", 2, "a", "b")
    d("ZRANGE", "a", 0, -1, "WITHSCORES")


def test_sum_order_matches(d):
    # float addition order follows Redis (intersection iterates the smallest input first)
    d("ZADD", "p", 0.1, "x", 0.7, "y")
    d("ZADD", "q", 0.2, "x", 0.1, "y", 5, "z")
    d("ZADD", "r", 0.3, "x", 0.2, "y", 1, "z", 2, "w")
    d("ZINTER", 3, "r", "q", "p", "WITHSCORES")
    d("ZUNION", 3, "r", "q", "p", "WITHSCORES")
    d("ZUNION", 3, "p", "q", "r", "WEIGHTS", 0.3, 0.7, 1.1, "WITHSCORES")


def test_zrandmember(d, r):
    d("ZRANDMEMBER", "nokey")
    d("ZRANDMEMBER", "nokey", 3)
    d("ZADD", "z", 1, "a")
    for bad in ((0,), ("x",), (1, "FOO"), (1, "WITHSCORES", "x"), (-9223372036854775808,),
                (-4611686018427387905, "WITHSCORES")):
        d("ZRANDMEMBER", "z", *bad)
    for n in (5, 300):
        r.delete("x")
        members = {"m%d" % i: float(i) for i in range(n)}
        r.zadd("x", members)
        assert r.zrandmember("x") in members
        got = r.zrandmember("x", 3)
        assert len(set(got)) == 3 and set(got) <= set(members)
        got = r.zrandmember("x", -10, withscores=True)
        assert len(got) == 20
        for m, s in zip(got[::2], got[1::2]):
            assert members[m] == float(s)
        assert set(r.zrandmember("x", 1000)) == set(members)


def test_zscan(d, r):
    d("ZSCAN", "nokey", 0)
    fill(d, n=5)
    d("ZSCAN", "z", 0)
    d("ZSCAN", "z", 0, "MATCH", "m[12]")
    d("ZSCAN", "z", 0, "COUNT", 0)
    members = {"m%d" % i: i for i in range(500)}
    r.zadd("big", members)
    seen, cursor = {}, 0
    while True:
        cursor, batch = r.zscan("big", cursor, count=20)
        seen.update(batch)
        if cursor == 0:
            break
    assert seen == {m: float(s) for m, s in members.items()}


def test_big_skiplist(d):
    import random
    rnd = random.Random(7)
    args = []
    for i in range(400):
        args += [rnd.choice(["%d" % rnd.randint(-50, 50), "%.3f" % rnd.uniform(-10, 10)]),
                 "k%d" % rnd.randint(0, 300)]
    d("ZADD", "z", *args)
    d("ZCARD", "z")
    d("ZRANGE", "z", 0, -1, "WITHSCORES")
    d("ZRANGE", "z", 17, 230, "REV", "WITHSCORES")
    for m in ("k1", "k77", "k299", "nope"):
        d("ZRANK", "z", m)
        d("ZREVRANK", "z", m)
    d("ZRANGEBYSCORE", "z", "(-3", "7.5", "LIMIT", 10, 40)
    d("ZREVRANGEBYSCORE", "z", "7.5", "(-3", "LIMIT", 10, 40, "WITHSCORES")
    d("ZCOUNT", "z", -5, 5)
    for i in range(100):
        d("ZINCRBY", "z", rnd.choice(["1", "-2.5", "0"]), "k%d" % rnd.randint(0, 300))
    d("ZREMRANGEBYSCORE", "z", -2, 2)
    d("ZREMRANGEBYRANK", "z", 10, 50)
    d("ZRANGE", "z", 0, -1, "WITHSCORES")
    d("ZPOPMIN", "z", 5)
    d("ZPOPMAX", "z", 5)
    d("ZUNIONSTORE", "u", 1, "z", "WEIGHTS", 2)
    d("ZRANGE", "u", 0, -1, "WITHSCORES")


def test_encodings(r):
    r.zadd("z", {"a": 1, "b": 2})
    assert r.object("encoding", "z") == "listpack"
    r.zadd("z", {"x" * 65: 3})
    assert r.object("encoding", "z") == "skiplist"
    r.zadd("z2", {"m%d" % i: i for i in range(128)})
    assert r.object("encoding", "z2") == "listpack"
    r.zadd("z2", {"one": 1})
    assert r.object("encoding", "z2") == "skiplist"
    r.zunionstore("z3", ["z"])
    assert r.object("encoding", "z3") == "skiplist"
    r.zrem("z", "x" * 65)
    r.zunionstore("z4", ["z"])
    assert r.object("encoding", "z4") == "listpack"
    assert r.copy("z2", "z5")
    r.zadd("z5", {"new": 5})
    assert r.zcard("z2") == 129 and r.zcard("z5") == 130
    assert r.type("z5") == "zset"
    assert r.memory_usage("z2") > r.memory_usage("z")
