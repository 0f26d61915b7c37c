"""Streams, the basics: XADD XLEN XRANGE XREVRANGE XDEL XTRIM, compared with redis-server
(explicit IDs, so replies are deterministic) plus auto-ID properties."""
import time


def test_xadd_explicit_ids(d):
    d("XADD", "s", "1-1", "f", "v")
    d("XADD", "s", "1-1", "f", "v")
    d("XADD", "s", "1-0", "f", "v")
    d("XADD", "s", "1-2", "a", "1", "b", "2")
    d("XADD", "s", "1-*", "f", "v")
    d("XADD", "s", "2", "f", "v")
    d("XADD", "s", "2-*", "f", "v")
    d("XADD", "s", "0-*", "f", "v")
    d("XADD", "s", "5-18446744073709551615", "f", "v")
    d("XADD", "s", "5-*", "f", "v")
    d("XADD", "s", "0-0", "f", "v")
    d("XADD", "n", "0-0", "f", "v")
    d("XADD", "n", "0-*", "f", "v")
    d("XADD", "s", "abc", "f", "v")
    d("XADD", "s", "1-x", "f", "v")
    d("XADD", "s", "-1", "f", "v")
    d("XADD", "s", "-", "f", "v")
    d("XADD", "s", "+", "f", "v")
    d("XADD", "s", "9", "f")
    d("XADD", "s", "9", "f", "v", "g")
    d("XADD", "s", "9")
    d("XADD", "s", "*")
    d("XLEN", "s")
    d("XLEN", "nokey")
    d("XRANGE", "s", "-", "+")
    d("XADD", "max", "18446744073709551615-18446744073709551615", "f", "v")
    d("XADD", "max", "*", "f", "v")
    d("XADD", "nomk", "NOMKSTREAM", "*", "f", "v")
    d("EXISTS", "nomk")
    d("XADD", "s", "NOMKSTREAM", "10-1", "f", "v")


def test_xrange(d):
    for i in range(1, 31):
        d("XADD", "s", "%d-%d" % (i // 3, i % 3), "k", str(i), "x", "y" * i)
    for a, b in [("-", "+"), ("+", "-"), ("3", "5"), ("3-1", "5-0"), ("(3-1", "(5-0"),
                 ("(3", "5"), ("0", "0"), ("(-", "+"), ("-", "(+"), ("(0-0", "+"),
                 ("-", "(0-0"), ("(18446744073709551615-18446744073709551615", "+"),
                 ("x", "+"), ("-", "1-x"), ("5-1", "3"), ("(", "+"), ("((3", "5"),
                 ("3-18446744073709551615", "4"), ("4-*", "+")]:
        d("XRANGE", "s", a, b)
        d("XREVRANGE", "s", b, a)
        for cnt in (0, 1, 5, -1, "x"):
            d("XRANGE", "s", a, b, "COUNT", cnt)
            d("XREVRANGE", "s", b, a, "COUNT", cnt)
    d("XRANGE", "s", "-", "+", "COUNT")
    d("XRANGE", "s", "-", "+", "FOO", 1)
    d("XRANGE", "nokey", "-", "+")
    d("XRANGE", "nokey", "-", "+", "COUNT", 0)


def test_xdel(d):
    for i in range(1, 11):
        d("XADD", "s", "%d-0" % i, "f", i)
    d("XDEL", "s", "3-0", "5", "99-0", "3-0")
    d("XDEL", "s", "bad")
    d("XDEL", "s", "-")
    d("XDEL", "nokey", "1-0")
    d("XRANGE", "s", "-", "+")
    d("XLEN", "s")
    d("XDEL", "s", *["%d-0" % i for i in range(1, 11)])
    d("XLEN", "s")
    d("EXISTS", "s")
    d("XADD", "s", "5-0", "f", "v")
    d("XADD", "s", "11-0", "f", "v")
    d("XRANGE", "s", "-", "+")


def test_xtrim_exact_and_approx(d):
    for trim in (("MAXLEN", 250), ("MAXLEN", "=", 250), ("MAXLEN", "~", 250),
                 ("MAXLEN", "~", 150), ("MAXLEN", "~", 0), ("MAXLEN", 0),
                 ("MINID", "120-0"), ("MINID", "~", "120-0"), ("MINID", "~", "250"),
                 ("MINID", "=", "0"), ("MAXLEN", "~", 10, "LIMIT", 100),
                 ("MAXLEN", "~", 10, "LIMIT", 99), ("MAXLEN", "~", 10, "LIMIT", 0),
                 ("MAXLEN", 10, "LIMIT", 100), ("MAXLEN", -1), ("MAXLEN", "x"),
                 ("MINID", "x"), ("MAXLEN", 1, "MINID", 1), ("LIMIT", 10), (), ("FOO", 1),
                 ("MAXLEN",), ("MAXLEN", "~", 1, "LIMIT", -1)):
        d("DEL", "s")
        for i in range(1, 321):
            d("XADD", "s", "%d-0" % i, "f", "v")
        d("XDEL", "s", "5-0", "150-0", "210-0")
        d("XTRIM", "s", *trim)
        d("XLEN", "s")
        d("XRANGE", "s", "-", "+", "COUNT", 3)
    d("XTRIM", "nokey", "MAXLEN", 1)


def test_xadd_with_trim(d):
    for i in range(1, 400):
        d("XADD", "s", "MAXLEN", "~", 120, "%d-0" % i, "f", i)
        d("XADD", "t", "MAXLEN", 50, "%d-0" % i, "f", i)
        d("XADD", "u", "MINID", "~", "%d" % max(1, i - 150), "%d-0" % i, "f", i)
    d("XLEN", "s")
    d("XLEN", "t")
    d("XLEN", "u")
    d("XRANGE", "s", "-", "+", "COUNT", 2)
    d("XRANGE", "u", "-", "+", "COUNT", 2)
    d("XADD", "s", "LIMIT", 5, "*", "f", "v")
    d("XADD", "s", "MAXLEN", 5, "LIMIT", 5, "*", "f", "v")


def test_wrongtype(d):
    d("SET", "str", "v")
    for cmd in (("XADD", "str", "*", "f", "v"), ("XLEN", "str"), ("XRANGE", "str", "-", "+"),
                ("XREVRANGE", "str", "+", "-"), ("XDEL", "str", "1-0"),
                ("XTRIM", "str", "MAXLEN", 1)):
        d(*cmd)
    d("XADD", "s", "1-0", "f", "v")
    d("LPUSH", "s", "x")
    d("TYPE", "s")


def test_auto_ids(r):
    ids = [r.xadd("s", {"f": str(i)}) for i in range(50)]
    assert ids == sorted(ids, key=lambda x: tuple(map(int, x.split("-"))))
    ms = int(ids[0].split("-")[0])
    assert abs(ms - time.time() * 1000) < 60000
    assert r.xlen("s") == 50
    got = r.xrange("s", count=3)
    assert [g[0] for g in got] == ids[:3] and got[0][1] == {"f": "0"}
    assert [g[0] for g in r.xrevrange("s", count=2)] == ids[:-3:-1]
    r.xadd("s", {"f": "x"}, id="99999999999999-5")
    nxt = r.xadd("s", {"f": "y"})
    assert nxt == "99999999999999-6"
    assert r.type("s") == "stream"
    assert r.object("encoding", "s") == "stream"
    assert r.copy("s", "s2")
    r.xadd("s2", {"f": "z"})
    assert r.xlen("s") == 52 and r.xlen("s2") == 53
    assert 200 < r.memory_usage("s") < 52 * 40  # packed nodes: a few bytes per small entry
    r.xtrim("s", maxlen=0)
    assert r.exists("s") == 1 and r.xlen("s") == 0


def test_benchmark_shape(r):
    # redis-benchmark's XADD: XADD mystream * myfield <value>
    for _ in range(1000):
        r.execute_command("XADD", "mystream", "*", "myfield", "xxx")
    assert r.xlen("mystream") == 1000
