"""Hashes: every command, compared with Debian's redis-server, plus encodings."""
import tcharness
from conftest import CLIENT



def test_basic(d):
    d("HSET", "h", "a", 1, "b", 2)
    d("HSET", "h", "a", 3, "c", 4)
    d("HSET", "h", "a")
    d("HSET", "h", "a", 1, "b")
    d("HMSET", "h", "x", 1, "y")
    d("HMSET", "h", "x", 1, "y", 2)
    d("HGET", "h", "a")
    d("HGET", "h", "nope")
    d("HGET", "nokey", "a")
    d("HMGET", "h", "a", "nope", "x")
    d("HMGET", "nokey", "a", "b")
    d("HGETALL", "h", pairs=True)
    d("HGETALL", "nokey")
    d("HKEYS", "h", unordered=True)
    d("HVALS", "h", unordered=True)
    d("HLEN", "h")
    d("HLEN", "nokey")
    d("HEXISTS", "h", "a")
    d("HEXISTS", "h", "zz")
    d("HSTRLEN", "h", "a")
    d("HSTRLEN", "h", "zz")
    d("HSTRLEN", "nokey", "zz")
    d("HSETNX", "h", "a", "v")
    d("HSETNX", "h", "new", "v")
    d("HSETNX", "h2", "new", "v")
    d("HDEL", "h", "a", "a", "nope", "b")
    d("HDEL", "nokey", "a")
    d("HDEL", "h2", "new")
    d("EXISTS", "h2")
    d("HDEL", "h", "c", "x", "y", "new")
    d("EXISTS", "h")


def test_listpack_order_matches_redis(d):
    # small hashes keep insertion order in both servers
    d("HSET", "h", *[x for i in range(20) for x in ("f%d" % i, "v%d" % i)])
    d("HGETALL", "h")
    d("HKEYS", "h")
    d("HDEL", "h", "f3", "f7")
    d("HSET", "h", "f3", "again")
    d("HVALS", "h")


def test_wrongtype(d):
    d("SET", "s", "v")
    for cmd in (("HSET", "s", "a", "b"), ("HMSET", "s", "a", "b"), ("HSETNX", "s", "a", "b"),
                ("HGET", "s", "a"), ("HMGET", "s", "a"), ("HGETALL", "s"), ("HKEYS", "s"),
                ("HVALS", "s"), ("HDEL", "s", "a"), ("HEXISTS", "s", "a"), ("HLEN", "s"),
                ("HSTRLEN", "s", "a"), ("HINCRBY", "s", "a", 1),
                ("HINCRBYFLOAT", "s", "a", 1), ("HRANDFIELD", "s"), ("HRANDFIELD", "s", 2),
                ("HSCAN", "s", 0)):
        d(*cmd)


def test_hincrby(d):
    d("HINCRBY", "h", "n", 5)
    d("HINCRBY", "h", "n", -10)
    d("HINCRBY", "h", "n", "x")
    d("HINCRBY", "h", "n", "1.5")
    d("HSET", "h", "s", "abc", "big", 9223372036854775800, "f", "1.5", "sp", " 1")
    d("HINCRBY", "h", "s", 1)
    d("HINCRBY", "h", "f", 1)
    d("HINCRBY", "h", "sp", 1)
    d("HINCRBY", "h", "big", 7)
    d("HINCRBY", "h", "big", 1)
    d("HINCRBY", "h", "n", -9223372036854775808)
    d("HINCRBY", "h", "n", -9223372036854775808)
    d("HGETALL", "h")
    d("HINCRBY", "nokey2", "n", "x")
    d("EXISTS", "nokey2")


def test_hincrbyfloat(d):
    for inc in ("10.5", "0.1", "-5", "3e3", "1.0e-5", "-0", "5.0e3", "abc", "inf", "-inf",
                "nan", "1e400", "0x10", " 1", "1 ", "", "17"):
        d("HINCRBYFLOAT", "h", "x", inc)
    d("HGET", "h", "x")
    d("HSET", "h", "s", "abc", "i", "10", "e", "1e400", "big", "1.7976931348623157e308")
    d("HINCRBYFLOAT", "h", "s", 1)
    d("HINCRBYFLOAT", "h", "i", "0.25")
    d("HINCRBYFLOAT", "h", "e", 1)
    d("HINCRBYFLOAT", "h", "big", "1.7976931348623157e308")
    d("HINCRBYFLOAT", "h", "i", "1.1")
    d("HINCRBYFLOAT", "h", "i", "-11.35")
    d("HGETALL", "h", pairs=True)


def test_hrandfield(d, r):
    d("HRANDFIELD", "nokey")
    d("HRANDFIELD", "nokey", 5)
    d("HRANDFIELD", "nokey", -5, "WITHVALUES")
    d("HSET", "h", "a", 1)
    for bad in ((0,), ("x",), (1, "FOO"), (1, "WITHVALUES", "x"), (-9223372036854775808,),
                (-4611686018427387905, "WITHVALUES"), (4611686018427387904, "WITHVALUES"),
                (4611686018427387903, "WITHVALUES")):
        d("HRANDFIELD", "h", *bad)
    for n in (5, 300):
        r.delete("x")
        fields = {"f%d" % i: "v%d" % i for i in range(n)}
        r.hset("x", mapping=fields)
        assert r.hrandfield("x") in fields
        got = r.hrandfield("x", 3)
        assert len(set(got)) == 3 and set(got) <= set(fields)
        got = r.hrandfield("x", 3, withvalues=True)
        assert len(got) == 6
        for f, v in zip(got[::2], got[1::2]):
            assert fields[f] == v
        got = r.hrandfield("x", -20, withvalues=True)
        assert len(got) == 40
        assert set(r.hrandfield("x", 1000)) == set(fields)
        got = r.hrandfield("x", -2)
        assert len(got) == 2 and set(got) <= set(fields)


def chi_square(res):
    counts = {}
    for k in res:
        counts[k] = counts.get(k, 0) + 1
    p = len(res) // len(counts)
    return sum((v - p) ** 2 / p for v in counts.values())


def test_hrandfield_uniform(r):
    """Every field equally likely in the hashtable encoding too (Redis's test: 10 fields, 9
    degrees of freedom, chi-square under 40); the table's chains must not weigh on it."""
    old = r.config_get("hash-max-listpack-value")["hash-max-listpack-value"]
    r.config_set("hash-max-listpack-value", 10)
    try:
        for n in (10, 40):
            r.delete("u")
            r.hset("u", mapping={"f%d" % i: "v" for i in range(n - 1)})
            r.hset("u", "long", "x" * 30)
            assert r.object("encoding", "u") == "hashtable"
            worst = max(chi_square(r.hrandfield("u", -100 * n)) for _ in range(3))
            assert worst < 40 + 2 * n
            picks = []
            for _ in range(50 * n // 2):
                picks += r.hrandfield("u", 2)
            assert chi_square(picks) < 40 + 2 * n
    finally:
        r.config_set("hash-max-listpack-value", old)


def test_hscan(d, r):
    d("HSCAN", "nokey", 0)
    d("HSET", "h", "a", 1, "b", 2, "c", 3)
    d("HSCAN", "h", 0)
    d("HSCAN", "h", 0, "MATCH", "b*")
    d("HSCAN", "h", 0, "COUNT", 0)
    d("HSCAN", "h", "x")
    d("HSCAN", "h", 0, "NOVALUES")
    fields = {"f%d" % i: str(i) for i in range(500)}
    r.hset("big", mapping=fields)
    seen, cursor = {}, 0
    while True:
        cursor, batch = r.hscan("big", cursor, count=20)
        seen.update(batch)
        if cursor == 0:
            break
    assert seen == fields


def test_encodings(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.object("encoding", "h") == "listpack"
    r.hset("h", "long", "x" * 65)
    assert r.object("encoding", "h") == "hashtable"
    assert r.hget("h", "long") == "x" * 65
    r.hset("h2", mapping={"f%d" % i: i for i in range(512)})
    assert r.object("encoding", "h2") == "listpack"
    r.hset("h2", "one-more", 1)
    assert r.object("encoding", "h2") == "hashtable"
    assert r.hlen("h2") == 513
    r.hset("h3", "x" * 65, "v")
    assert r.object("encoding", "h3") == "hashtable"
    r.hincrbyfloat("h4", "f", "1.5")
    assert r.object("encoding", "h4") == "listpack"
    # a hash of 10 small fields costs less than 10 string keys (before their table slots)
    r.hset("small", mapping={"field%d" % i: "value%d" % i for i in range(10)})
    for i in range(10):
        r.set("small:field%d" % i, "value%d" % i)
    strings = sum(r.memory_usage("small:field%d" % i) for i in range(10))
    assert r.memory_usage("small") < strings
    assert r.copy("h2", "h5")
    r.hset("h5", "z", "z")
    assert r.hlen("h2") == 513 and r.hlen("h5") == 514
    assert r.config_get("hash-max-listpack-*") == {"hash-max-listpack-entries": "512",
                                                  "hash-max-listpack-value": "64"}


def test_large_values_update(d):
    for i in range(200):
        d("HSET", "h", "f%d" % (i % 150), "v" * (i % 90))
    d("HGETALL", "h", pairs=True)
    d("HSET", "h", "f1", "short", "f2", "x" * 1000)
    d("HMGET", "h", "f1", "f2", "f3")


def test_listpack_defaults_match_redis(tc_factory):
    """The small-collection thresholds a fresh server starts with are a fresh redis-server
    7.0's (its compiled defaults, no config file), and a hash of 512 fields stays a listpack on
    both while the 513th field converts both."""
    names = ["hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
             "zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size"]
    rsrv = tcharness.start_redis(client_defaults=CLIENT)
    try:
        clients = [tc_factory().client(), rsrv.client()]
        for n in names:
            tcv, rsv = (c.execute_command("CONFIG", "GET", n)[1] for c in clients)
            assert tcv == rsv, n
        got = []
        for c in clients:
            c.execute_command("HSET", "hdef", *[x for i in range(512) for x in (b"f%d" % i, b"v")])
            got.append(c.execute_command("OBJECT", "ENCODING", "hdef"))
            c.execute_command("HSET", "hdef", "f512", "v")
            got.append(c.execute_command("OBJECT", "ENCODING", "hdef"))
        assert got == [b"listpack", b"hashtable"] * 2
    finally:
        rsrv.stop()
