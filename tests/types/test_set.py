"""Sets: every command, compared with Debian's redis-server (as sets where Redis's order is
unspecified), plus encodings and random-member properties."""
import pytest


def test_sadd_srem_card(d):
    d("SADD", "s", "a", "b", "c", "a")
    d("SADD", "s", "b", "d")
    d("SCARD", "s")
    d("SMEMBERS", "s", unordered=True)
    d("SREM", "s", "a", "zz", "b")
    d("SISMEMBER", "s", "c")
    d("SISMEMBER", "s", "a")
    d("SISMEMBER", "nokey", "a")
    d("SMISMEMBER", "s", "a", "c", "d", "e")
    d("SMISMEMBER", "nokey", "a", "c")
    d("SREM", "s", "c", "d")
    d("EXISTS", "s")
    d("SCARD", "s")
    d("SREM", "s", "x")
    d("SMEMBERS", "nokey")
    d("SADD", "s")
    d("SMISMEMBER", "s")


def test_intset_order_and_conversions(d, r):
    d("SADD", "i", 5, 3, -1, 100000, 7, 3, -70000, 9223372036854775807, -9223372036854775808)
    d("SMEMBERS", "i")  # intset: sorted, same order as Redis
    d("SISMEMBER", "i", "05")
    d("SISMEMBER", "i", "100000")
    d("SADD", "i", "+5", "05", " 5", "5.0")
    d("SCARD", "i")
    d("SMEMBERS", "i", unordered=True)
    d("SADD", "e", 1, 2, 3)
    d("OBJECT", "ENCODING", "e")  # intset
    d("SADD", "e", "x")
    d("OBJECT", "ENCODING", "e")  # hashtable, as Redis 7.0 (no listpack sets by default)
    r.config_set("set-max-listpack-entries", 128)  # twincache's opt-in listpack sets
    r.sadd("e2", 1, 2, 3)
    r.sadd("e2", "x")
    assert r.object("encoding", "e2") == "listpack"
    r.sadd("e", *range(200))
    assert r.object("encoding", "e") == "hashtable"
    assert r.scard("e") == 201
    r.sadd("big", *range(600))
    assert r.object("encoding", "big") == "hashtable"
    r.sadd("long", "x" * 65)
    assert r.object("encoding", "long") == "hashtable"
    r.sadd("lp", "a")
    r.sadd("lp", "x" * 65)
    assert r.object("encoding", "lp") == "hashtable"
    r.config_set("set-max-intset-entries", 4)
    r.sadd("small", 1, 2, 3, 4)
    assert r.object("encoding", "small") == "intset"
    r.sadd("small", 5)
    assert r.object("encoding", "small") == "hashtable"
    r.config_set("set-max-intset-entries", 512)
    r.config_set("set-max-listpack-entries", 0)
    assert r.config_get("set-max-listpack-entries") == {"set-max-listpack-entries": "0"}


def test_wrongtype(d):
    d("SET", "str", "v")
    d("SADD", "s", "a")
    for cmd in (("SADD", "str", "a"), ("SREM", "str", "a"), ("SISMEMBER", "str", "a"),
                ("SMISMEMBER", "str", "a"), ("SMEMBERS", "str"), ("SCARD", "str"),
                ("SPOP", "str"), ("SPOP", "str", 2), ("SRANDMEMBER", "str"),
                ("SRANDMEMBER", "str", 2), ("SMOVE", "str", "s", "a"), ("SMOVE", "s", "str", "a"),
                ("SINTER", "s", "str"), ("SINTER", "nokey", "str"), ("SUNION", "s", "str"),
                ("SDIFF", "s", "str"), ("SDIFF", "nokey", "str"), ("SINTERSTORE", "d", "s", "str"),
                ("SINTERCARD", 2, "s", "str"), ("SSCAN", "str", 0), ("SUNIONSTORE", "d", "str")):
        d(*cmd)
    d("SMOVE", "nokey", "str", "a")
    d("SMEMBERS", "s")


def test_spop_srandmember(d, r):
    d("SPOP", "nokey")
    d("SPOP", "nokey", 3)
    d("SPOP", "nokey", 0)
    d("SRANDMEMBER", "nokey")
    d("SRANDMEMBER", "nokey", 3)
    d("SRANDMEMBER", "nokey", -3)
    d("SADD", "s", "a")
    for bad in (("SPOP", "s", -1), ("SPOP", "s", "x"), ("SPOP", "s", 1, 2),
                ("SRANDMEMBER", "s", "x"), ("SRANDMEMBER", "s", 1, 2),
                ("SRANDMEMBER", "s", -9223372036854775808), ("SPOP", "s", 0),
                ("SRANDMEMBER", "s", 0)):
        d(*bad)
    for enc_members in (list(range(10)), ["m%d" % i for i in range(10)],
                        ["m%d" % i for i in range(300)]):
        r.delete("x")
        r.sadd("x", *enc_members)
        members = {str(m) for m in enc_members}
        assert r.srandmember("x") in members
        got = r.srandmember("x", 5)
        assert len(got) == 5 and len(set(got)) == 5 and set(got) <= members
        got = r.srandmember("x", -20)
        assert len(got) == 20 and set(got) <= members
        assert set(r.srandmember("x", 1000)) == members
        popped = r.spop("x", 3)
        assert len(set(popped)) == 3 and set(popped) <= members
        one = r.spop("x")
        assert one in members and one not in popped
        assert r.scard("x") == len(members) - 4
        rest = r.spop("x", 1000)
        assert len(rest) == len(members) - 4
        assert r.exists("x") == 0


def test_smove(d):
    d("SADD", "a", "x", "y")
    d("SADD", "b", "z")
    d("SMOVE", "a", "b", "x")
    d("SMOVE", "a", "b", "nope")
    d("SMOVE", "a", "a", "y")
    d("SMOVE", "a", "a", "nope")
    d("SMOVE", "a", "c", "y")
    d("EXISTS", "a")
    d("SMEMBERS", "b", unordered=True)
    d("SMEMBERS", "c", unordered=True)
    d("SMOVE", "nokey", "c", "y")
    d("SADD", "n", 1, 2)
    d("SMOVE", "n", "c", 1)
    d("SMOVE", "c", "n", "y")
    d("SMEMBERS", "n", unordered=True)


def test_set_algebra(d):
    d("SADD", "a", 1, 2, 3, 4, 5)
    d("SADD", "b", 4, 5, 6, "x")
    d("SADD", "c", 5, "x", "y")
    d("SET", "str", "v")
    for op in ("SINTER", "SUNION", "SDIFF"):
        for keys in (("a",), ("a", "b"), ("a", "b", "c"), ("b", "a"), ("a", "nokey"),
                     ("nokey", "a"), ("a", "a"), ("c", "b", "a")):
            d(op, *keys, unordered=True)
            d(op + "STORE", "dst", *keys)
            d("SMEMBERS", "dst", unordered=True)
            d("EXISTS", "dst")
    d("SINTERSTORE", "str", "a", "b")
    d("TYPE", "str")
    d("SUNIONSTORE", "a", "a", "c")
    d("SMEMBERS", "a", unordered=True)
    d("SDIFFSTORE", "a", "a", "a")
    d("EXISTS", "a")
    d("SINTER", "a")
    d("SUNION", "nokey")
    d("SINTERSTORE", "e")


def test_sintercard(d):
    d("SADD", "a", *range(50))
    d("SADD", "b", *range(25, 75))
    for args in ((2, "a", "b"), (2, "a", "b", "LIMIT", 0), (2, "a", "b", "LIMIT", 3),
                 (2, "a", "b", "LIMIT", 100), (1, "a"), (2, "a", "nokey"), (0, "a"),
                 (-1, "a"), (3, "a", "b"), (2, "a", "b", "LIMIT", -1), (2, "a", "b", "LIMIT"),
                 (2, "a", "b", "FOO", 1), ("x", "a"), (2, "a", "b", "LIMIT", "x")):
        d("SINTERCARD", *args)


def test_sscan(d, r):
    d("SSCAN", "nokey", 0)
    d("SSCAN", "nokey", "x")
    d("SADD", "s", "a", "b", "c", 1)
    d("SSCAN", "s", 0, unordered=True)
    d("SSCAN", "s", 0, "MATCH", "[ab]", unordered=True)
    d("SSCAN", "s", 0, "COUNT", 0)
    d("SSCAN", "s", 0, "COUNT", "x")
    d("SSCAN", "s", 0, "FOO", 1)
    d("SSCAN", "s", 0, "MATCH")
    d("SSCAN", "s", "abc")
    d("SADD", "i", 1, 2, 3)
    d("SSCAN", "i", 0, "MATCH", "1*")
    members = {"m%d" % i for i in range(1000)}
    r.sadd("big", *members)
    seen, cursor = set(), 0
    while True:
        cursor, batch = r.sscan("big", cursor, count=50)
        seen.update(batch)
        if cursor == 0:
            break
    assert seen == members
    _, batch = r.sscan("big", 0, match="m99*", count=10000)
    assert set(batch) == {"m99"} | {"m99%d" % i for i in range(10)}


def test_copy_rename_expire(r):
    r.sadd("s", "a", "b")
    r.sadd("i", 1, 2)
    r.sadd("h", *range(1000))
    for k in ("s", "i", "h"):
        assert r.copy(k, k + "2")
        r.sadd(k + "2", "new")
        assert "new" not in r.smembers(k)
        assert r.smembers(k + "2") == r.smembers(k) | {"new"}
        assert r.memory_usage(k) > 0
    assert r.memory_usage("h") > r.memory_usage("s") * 10
    r.rename("h", "h3")
    assert r.scard("h3") == 1000
    r.pexpire("h3", 50)
    import time
    time.sleep(0.2)
    assert r.exists("h3") == 0
    assert r.type("s") == "set"
