"""Geo commands compared with Debian's redis-server: scores (52-bit geohashes), GEOPOS/GEOHASH/
GEODIST bytes, every error text, and a fixed-seed differential run of GEOSEARCH/GEORADIUS*
(results and their order, distances, coordinates, hashes, the STORE variants' zsets) over a
few hundred points near the poles, the antimeridian and the latitude limits. Also hostile
arguments and scores, RESP3 bytes, MULTI/EXEC and WATCH."""
import math
import random
import socket

import pytest
import redis

LAT = 85.05112878
UNITS = ("m", "km", "ft", "mi", "KM", "Mi")


def test_geoadd_and_reads(d):
    d("GEOADD", "g", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
    d("GEOADD", "g", -180, -LAT, "sw", 180, LAT, "ne", 0, 0, "zero", -0.0, "-0", "mz")
    d("GEOADD", "g", "NX", 1, 1, "Palermo", 2, 2, "new")
    d("GEOADD", "g", "XX", "CH", 1, 1, "Palermo", 2, 2, "new2")
    d("GEOADD", "g", "CH", "NX", "CH", 3, 3, "Palermo", 4, 4, "n3")
    d("GEOADD", "g", "ch", 5, 5, "Palermo", 4, 4, "n3")
    d("GEOADD", "xx", "XX", 1, 1, "a")
    d("EXISTS", "xx")
    d("ZRANGE", "g", 0, -1, "WITHSCORES")
    members = ["Palermo", "Catania", "sw", "ne", "zero", "mz", "new", "n3", "nope"]
    d("GEOPOS", "g", *members)
    d("GEOHASH", "g", *members)
    d("GEOPOS", "nokey", "a", "b")
    d("GEOHASH", "nokey", "a")
    d("GEOPOS", "g")
    d("GEOHASH", "g")
    for u in UNITS:
        d("GEODIST", "g", "Palermo", "Catania", u)
        d("GEODIST", "g", "sw", "ne", u)
    d("GEODIST", "g", "Palermo", "Catania")
    d("GEODIST", "g", "Palermo", "Palermo")
    d("GEODIST", "g", "Palermo", "nope")
    d("GEODIST", "g", "nope", "Palermo", "km")
    d("GEODIST", "nokey", "a", "b")
    d("GEODIST", "g", "Palermo", "Catania", "yd")
    d("GEODIST", "nokey", "a", "b", "yd")
    d("GEODIST", "g", "Palermo", "Catania", "km", "x")
    d("OBJECT", "ENCODING", "g")
    d("GEOADD", "long", 1, 1, "x" * 100)
    d("OBJECT", "ENCODING", "long")


def test_geoadd_errors(d):
    d("SET", "str", "v")
    for args in (("g", 200, 100, "a"), ("g", 1, 2), ("g", "NX", "XX", 1, 2, "a"),
                 ("g", "NX", "CH", "XX"), ("g", "CH", "CH", "NX"), ("g", 1, 2, "a", 3),
                 ("g", "nan", 1, "a"), ("g", "inf", 1, "a"), ("g", 1, "-inf", "a"),
                 ("g", 1, "abc", "a"), ("g", "", 1, "a"), ("g", " 1", 1, "a"),
                 ("g", 180.000001, 0, "a"), ("g", 0, 85.05112879, "a"),
                 ("g", 0, -85.05112879, "a"), ("g", "1e400", 0, "a"), ("g", "GT", 1, 1, "a"),
                 ("g", 1, 1, "a", 1e300, 0, "b"), ("str", 1, 1, "a"), ("str", 1, 100, "a"),
                 ("g",), ("g", 1, 1)):
        d("GEOADD", *args)
    d("EXISTS", "g")
    d("GEOPOS", "str", "a")
    d("GEOHASH", "str", "a")
    d("GEODIST", "str", "a", "b")
    d("GEODIST", "str", "a", "b", "yd")
    d("GEOSEARCH", "str", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "m")
    d("GEORADIUS", "str", 200, 0, "x", "m")
    d("GEOSEARCHSTORE", "dst", "str", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "m")


SEARCH_ERRORS = [
    ("GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", 10, "km"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", 10, "km"),
    ("GEOSEARCH", "g", "BYRADIUS", 10, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 10, "km", "BYBOX", 1, 1, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "FROMLONLAT", 1, 1, "BYRADIUS", 10, "km"),
    ("GEOSEARCH", "g", "FROMLONLAT", 1, 1, "FROMMEMBER", "a", "BYRADIUS", 10, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", 1, 1, "km", "BYRADIUS", 10, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", -1, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "x", "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "nan", "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "yd"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", "x", 1, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", 1, "x", "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", -1, 1, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", 1, -1, "km"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", 1, 1, "kmx"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", 1, 1),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "COUNT", 0),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "COUNT", -5),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "COUNT", "x"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "COUNT", "99999999999999999999"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "COUNT"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "ANY"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "ANY", "COUNT", 1),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "STORE", "x"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "STOREDIST"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "WITHDIST", "WITHDIST", "foo"),
    ("GEOSEARCH", "g", "byradius", 10, "km", "withdist", "asc"),
    ("geosearch", "g", "frommember", "a", "withdist", "asc", "desc"),
    ("GeoSearch", "g", "FROMLONLAT", 1, "x", "BYRADIUS", 1, "km"),
    ("GEOSEARCH", "g", "FROMLONLAT", 1, 100, "BYRADIUS", 1, "km"),
    ("GEOSEARCH", "g", "FROMLONLAT", "inf", 0, "BYRADIUS", 1, "km"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "x", "FROMMEMBER", "y", "BYRADIUS", 1, "km"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "x", "km"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYBOX", 1, 1, "km", "WITHDIST", "ANY"),
    ("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "WITHDIST"),
    ("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "a", "ASC", "DESC", "WITHHASH"),
    ("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "a", "ASC", "DESC", "STOREDIST"),
    ("GEOSEARCHSTORE", "d", "g", "BYRADIUS", 1, "km", "ASC", "DESC"),
    ("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "km", "STORE", "x"),
    ("GEORADIUS", "g", 13, 38, 100, "km", "STORE", "d", "WITHDIST"),
    ("GEORADIUS", "g", 13, 38, 100, "km", "WITHCOORD", "STOREDIST", "d"),
    ("GEORADIUS_RO", "g", 13, 38, 100, "km", "STORE", "d"),
    ("GEORADIUS", "g", 13, 38, 100, "km", "STORE"),
    ("GEORADIUS", "g", 13, 38, -1, "km"),
    ("GEORADIUS", "g", 13, 38, 1, "kmm"),
    ("GEORADIUS", "g", 200, 38, 1, "km"),
    ("GEORADIUS", "g", 13, 38, 1, "km", "FROMMEMBER", "a"),
    ("GEORADIUS", "g", 13, 38, 1, "km", "ANY"),
    ("GEORADIUS", "nokey", 13, 38, "x", "km"),
    ("GEORADIUS", "nokey", 13, 38, 1, "km", "STORE", "d", "COUNT", 0),
    ("GEORADIUSBYMEMBER", "g", "nope", 1, "km"),
    ("GEORADIUSBYMEMBER", "g", "nope", "x", "km"),
    ("GEORADIUSBYMEMBER", "g", "a", "x", "km"),
    ("GEORADIUSBYMEMBER", "nokey", "nope", "x", "km"),
    ("GEORADIUSBYMEMBER", "nokey", "nope", "x", "km", "STORE", "d"),
    ("GEORADIUSBYMEMBER", "g", "a", 1, "km", "ANY"),
    ("GEORADIUSBYMEMBER_RO", "g", "a", 1, "km", "STOREDIST", "d"),
    ("GEORADIUS", "g", 13, 38, 1e300, "km", "COUNT", 3, "ANY", "DESC"),
    ("GEORADIUS", "g", 13, 38, "inf", "km", "WITHHASH"),
    ("GEOSEARCH", "g", "FROMLONLAT", 13, 38, "BYBOX", "inf", "inf", "km", "DESC"),
    ("GEOSEARCH", "g", "FROMLONLAT", 13, 38, "BYBOX", "1e308", "1e308", "mi", "ASC"),
    ("GEOSEARCH", "g", "FROMLONLAT", 13, 38, "BYBOX", 0, 0, "m", "WITHCOORD"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 0, "m", "WITHCOORD"),
    ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "5e-324", "m"),
    ("GEORADIUS", "g", 13, 38, 100, "km", "COUNT", "9223372036854775807", "ASC"),
]


def test_search_errors_and_edges(d):
    d("GEOADD", "g", 13.361389, 38.115556, "a", 15.087269, 37.502669, "b", 180, LAT, "c")
    d("SET", "d", "x")
    for args in SEARCH_ERRORS:
        d(*args)
        d("TYPE", "d")
    d("ZRANGE", "d", 0, -1, "WITHSCORES")


def test_store_variants(d):
    d("GEOADD", "g", 13.361389, 38.115556, "a", 15.087269, 37.502669, "b", 2, 2, "c")
    d("SET", "d", "string")
    d("GEORADIUS", "g", 15, 37, 200, "km", "STORE", "d")
    d("TYPE", "d")
    d("ZRANGE", "d", 0, -1, "WITHSCORES")
    d("GEORADIUS", "g", 15, 37, 200, "km", "STOREDIST", "d", "ASC", "COUNT", 1)
    d("ZRANGE", "d", 0, -1, "WITHSCORES")
    d("GEORADIUS", "g", 15, 37, 200, "km", "STOREDIST", "d", "STORE", "e")
    d("ZRANGE", "e", 0, -1, "WITHSCORES")
    d("GEORADIUSBYMEMBER", "g", "a", 500, "mi", "STOREDIST", "d")
    d("ZRANGE", "d", 0, -1, "WITHSCORES")
    d("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "b", "BYBOX", 800, 800, "km", "STOREDIST")
    d("ZRANGE", "d", 0, -1, "WITHSCORES")
    d("OBJECT", "ENCODING", "d")
    d("GEOSEARCHSTORE", "d", "g", "FROMMEMBER", "b", "BYBOX", 1, 1, "m")
    d("EXISTS", "d")
    d("SET", "d", "string")
    d("GEOSEARCHSTORE", "d", "nokey", "FROMMEMBER", "b", "BYBOX", 1, 1, "m")
    d("EXISTS", "d")
    d("GEORADIUS", "nokey", 0, 0, 1, "m", "STORE", "d")
    # the source as its own destination
    d("GEOSEARCHSTORE", "g", "g", "FROMLONLAT", 14, 38, "BYRADIUS", 300, "km", "COUNT", 2)
    d("ZRANGE", "g", 0, -1, "WITHSCORES")
    d("GEORADIUS", "g", 14, 38, 300, "km", "STOREDIST", "g")
    d("ZRANGE", "g", 0, -1, "WITHSCORES")
    d("GEOADD", "big", *sum(([i * 0.01, i * 0.01, "m%d" % i] for i in range(200)), []))
    d("GEOSEARCHSTORE", "d", "big", "FROMLONLAT", 0, 0, "BYRADIUS", 1000, "km")
    d("OBJECT", "ENCODING", "d")
    d("ZRANGE", "d", 0, -1, "WITHSCORES")


def points(rng, n):
    pts = [(180, LAT), (-180, -LAT), (180, -LAT), (-180, LAT), (0, 0), (180, 0), (-180, 0),
           (179.9999999, 85.05), (-179.9999999, -85.05), (0, LAT), (0, -LAT)]
    while len(pts) < n:
        k = rng.random()
        if k < 0.2:  # near the poles
            p = (rng.uniform(-180, 180), rng.choice((1, -1)) * rng.uniform(80, LAT))
        elif k < 0.4:  # near the antimeridian
            p = (rng.choice((1, -1)) * rng.uniform(175, 180), rng.uniform(-LAT, LAT))
        elif k < 0.6:  # a dense cluster
            p = (rng.uniform(13, 13.5), rng.uniform(38, 38.5))
        else:
            p = (rng.uniform(-180, 180), rng.uniform(-LAT, LAT))
        pts.append((round(p[0], rng.choice((2, 6, 9))), round(p[1], rng.choice((2, 6, 9)))))
    return pts


def random_center(rng, pts):
    if rng.random() < 0.5:
        return pts[rng.randrange(len(pts))]
    if rng.random() < 0.3:
        return (rng.choice((-180, 180, 0)), rng.choice((-LAT, LAT, 0, 84, -84)))
    return (rng.uniform(-180, 180), rng.uniform(-LAT, LAT))


def random_size(rng):
    k = rng.random()
    if k < 0.05:
        return 0
    if k < 0.1:
        return "inf"
    return "%.6g" % (10 ** rng.uniform(-1, 7.5))


def test_random_differential(d):
    rng = random.Random(20261203)
    pts = points(rng, 300)
    args = []
    for i, (lon, lat) in enumerate(pts):
        args += [repr(lon), repr(lat), "p%d" % i]
    d("GEOADD", "g", *args)
    d("ZRANGE", "g", 0, -1, "WITHSCORES")
    names = ["p%d" % i for i in range(len(pts))]
    d("GEOPOS", "g", *names)
    d("GEOHASH", "g", *names)
    for _ in range(150):
        d("GEODIST", "g", rng.choice(names), rng.choice(names), rng.choice(UNITS))
    for it in range(300):
        opts = []
        if rng.random() < 0.5:
            opts.append(rng.choice(("ASC", "DESC")))
        if rng.random() < 0.3:
            opts += ["COUNT", rng.randint(1, 20)]
            if rng.random() < 0.3:
                opts.append("ANY")
        withs = [w for w in ("WITHDIST", "WITHCOORD", "WITHHASH") if rng.random() < 0.4]
        unit = rng.choice(UNITS)
        if rng.random() < 0.5:
            src = ["FROMMEMBER", rng.choice(names)]
        else:
            lon, lat = random_center(rng, pts)
            src = ["FROMLONLAT", repr(lon), repr(lat)]
        if rng.random() < 0.5:
            by = ["BYRADIUS", random_size(rng), unit]
        else:
            by = ["BYBOX", random_size(rng), random_size(rng), unit]
        d("GEOSEARCH", "g", *src, *by, *opts, *withs)
        if it % 3 == 0:
            d("GEOSEARCHSTORE", "dst", "g", *src, *by, *opts,
              *(["STOREDIST"] if rng.random() < 0.5 else []))
            d("ZRANGE", "dst", 0, -1, "WITHSCORES")
        if by[0] == "BYRADIUS":
            if src[0] == "FROMMEMBER":
                cmd = ["GEORADIUSBYMEMBER", "g", src[1], by[1], unit]
            else:
                cmd = ["GEORADIUS", "g", src[1], src[2], by[1], unit]
            d(*cmd, *opts, *withs)
            d(cmd[0] + "_RO", *cmd[1:], *opts, *withs)
            if it % 3 == 1:
                d(*cmd, *opts, rng.choice(("STORE", "STOREDIST")), "dst")
                d("ZRANGE", "dst", 0, -1, "WITHSCORES")


def test_hostile_scores(d):
    """Members added with ZADD decode the way Redis decodes them, whatever their score."""
    scores = [0, -0.0, 1, -1, -5, 0.5, 2 ** 52, 2 ** 52 - 1, 2 ** 53, 2 ** 60, 2 ** 63, 2 ** 64,
              1e300, -1e300, "inf", "-inf", -2 ** 63, -2 ** 63 - 4096, 3.5e15, 4503599627370495.5]
    args = []
    for i, s in enumerate(scores):
        args += [s, "s%d" % i]
    d("ZADD", "z", *args)
    names = ["s%d" % i for i in range(len(scores))]
    d("GEOPOS", "z", *names)
    d("GEOHASH", "z", *names)
    for n in names:
        d("GEODIST", "z", n, "s0")
        d("GEOSEARCH", "z", "FROMMEMBER", n, "BYRADIUS", 1000, "km", "WITHCOORD", "WITHHASH",
          "WITHDIST", "ASC")
        d("GEOSEARCH", "z", "FROMMEMBER", n, "BYBOX", 40000, 40000, "km", "WITHHASH", "DESC")
    d("GEORADIUS", "z", 0, 0, "inf", "m", "WITHHASH", "WITHCOORD")


def test_hostile_arguments(d):
    d("GEOADD", "g", 1, 1, "a", 2, 2, "")
    d("GEOPOS", "g", "", "a")
    bad = ["", "nan", "-nan", "inf", "-inf", "1e400", "-1e400", "0x10", "1e-400", " 1", "1 ",
           "9" * 400, "\x00", "+1", "-0"]
    for v in bad:
        d("GEOADD", "h", v, 0, "m")
        d("GEOADD", "h", 0, v, "m")
        d("GEOSEARCH", "g", "FROMLONLAT", v, 0, "BYRADIUS", 1, "m")
        d("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", v, "m", "WITHDIST")
        d("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", v, 1, "km", "WITHDIST")
        d("GEOSEARCH", "g", "FROMMEMBER", "a", "BYBOX", 1, v, "km", "ASC")
        d("GEORADIUS", "g", 1, 1, v, "km", "COUNT", 1)
        d("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "m", "COUNT", v)
        d("GEODIST", "g", "a", "", v or "x")
    d("ZRANGE", "h", 0, -1, "WITHSCORES")


def test_multi_watch(d, tc_server, redis_server):
    d("GEOADD", "g", 1, 1, "a", 1.001, 1.001, "b")
    d("MULTI")
    d("GEOADD", "g", 2, 2, "c")
    d("GEOADD", "g", 200, 2, "c")
    d("GEOSEARCHSTORE", "dst", "g", "FROMMEMBER", "a", "BYRADIUS", 1000, "km")
    d("GEORADIUS", "g", 1, 1, 1000, "km", "STOREDIST", "dst2")
    d("GEOPOS", "g", "c")
    x, y = d.both("EXEC")  # errors inside: compare their text
    assert repr(x) == repr(y) and len(x) == 5, (x, y)
    d("ZRANGE", "dst2", 0, -1, "WITHSCORES")
    writes = [("GEOADD", "g", 3, 3, "d"),
              ("GEOSEARCHSTORE", "w", "g", "FROMMEMBER", "a", "BYRADIUS", 10, "km"),
              ("GEORADIUS", "g", 1, 1, 10, "km", "STORE", "w"),
              ("GEORADIUSBYMEMBER", "g", "a", 10, "km", "STOREDIST", "w")]
    for w in writes:
        watched = w[1] if w[0] == "GEOADD" else "w"
        for srv in (tc_server, redis_server):
            a, b = srv.client(), srv.client()
            a.execute_command("WATCH", watched)
            b.execute_command(*w)
            a.execute_command("MULTI")
            a.execute_command("PING")
            assert a.execute_command("EXEC") is None, (srv.kind, w)
            a.connection_pool.disconnect()
            b.connection_pool.disconnect()
    # a read does not touch the watched key
    for srv in (tc_server, redis_server):
        a, b = srv.client(), srv.client()
        a.execute_command("WATCH", "g")
        b.execute_command("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 10, "km")
        b.execute_command("GEOPOS", "g", "a")
        a.execute_command("MULTI")
        a.execute_command("PING")
        assert a.execute_command("EXEC") == [b"PONG"], srv.kind
        a.connection_pool.disconnect()
        b.connection_pool.disconnect()


def test_command_info(d):
    for name in ("geoadd", "geopos", "geohash", "geodist", "georadius", "georadius_ro",
                 "georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearchstore"):
        a = d.tc.execute_command("COMMAND", "INFO", name)[0]
        b = d.rs.execute_command("COMMAND", "INFO", name)[0]
        assert a[:2] == b[:2] and a[3:6] == b[3:6], (a, b)
        fa, fb = set(a[2]), set(b[2])
        for f in (b"write", b"readonly", b"denyoom", b"movablekeys"):
            assert (f in fa) == (f in fb), (name, fa, fb)


class Raw:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.f = self.s.makefile("rb")

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest, out = line[:1], line[1:-2], line
        if t in (b"$", b"=") and rest != b"-1":
            out += self.f.read(int(rest) + 2)
        elif t in (b"*", b"~") and rest != b"-1":
            for _ in range(int(rest)):
                out += self.read()
        elif t == b"%":
            for _ in range(2 * int(rest)):
                out += self.read()
        return out


@pytest.mark.parametrize("proto", [2, 3])
def test_reply_bytes(tc_server, redis_server, proto):
    a, b = Raw(tc_server.port), Raw(redis_server.port)
    cmds = [("FLUSHALL",), ("HELLO", proto),
            ("GEOADD", "g", 13.361389, 38.115556, "a", 15.087269, 37.502669, "b", 0, 0, "z"),
            ("GEOPOS", "g", "a", "nope", "z"), ("GEOPOS", "nokey", "a"),
            ("GEOHASH", "g", "a", "nope"), ("GEOHASH", "nokey", "a"),
            ("GEODIST", "g", "a", "b"), ("GEODIST", "g", "a", "nope"), ("GEODIST", "nokey", "a", "b"),
            ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 500, "km", "WITHDIST", "WITHCOORD",
             "WITHHASH", "ASC"),
            ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 500, "km"),
            ("GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", 1, "m", "WITHDIST"),
            ("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", 1, "m"),
            ("GEORADIUS", "g", 15, 37, 200, "km", "STORE", "d"),
            ("GEORADIUS", "g", 15, 37, 200, "mi", "WITHCOORD"),
            ("GEOADD", "g", 200, 0, "x")]
    for cmd in cmds:
        x, y = a.send(*cmd), b.send(*cmd)
        if cmd[0] == "HELLO":
            continue
        assert x == y, (cmd, x, y)


def test_high_latitudes(d):
    """Large searches far from the equator: the cells chosen (and so the unsorted order) depend
    on the box's longitude extent at its edge nearer the equator."""
    rng = random.Random(7)
    args = []
    for i in range(1000):
        args += [rng.uniform(-20, 20), rng.choice((1, -1)) * rng.uniform(60, 85.05), "p%d" % i]
    d("GEOADD", "g", *args)
    for _ in range(150):
        lon, lat = rng.uniform(-20, 20), rng.choice((1, -1)) * rng.uniform(60, 85.05)
        if rng.random() < 0.5:
            by = ["BYBOX", "%.4g" % (10 ** rng.uniform(5, 7)), "%.4g" % (10 ** rng.uniform(5, 7))]
        else:
            by = ["BYRADIUS", "%.4g" % (10 ** rng.uniform(5, 7))]
        d("GEOSEARCH", "g", "FROMLONLAT", lon, lat, *by, "m")


def test_duplicates_and_meridians(d):
    d("GEOADD", "g", 1, 1, "dup", 2, 2, "dup", 3, 3, "x", 3, 3, "x")
    d("ZRANGE", "g", 0, -1, "WITHSCORES")
    d("GEOADD", "g", "CH", 2, 2, "dup", 4, 4, "dup")
    args = []
    for i in range(60):
        args += [17.5, -85 + i * 2.8, "m%d" % i, 180, -85 + i * 2.85, "a%d" % i]
    d("GEOADD", "g", *args)
    for i in range(0, 60, 3):
        d("GEODIST", "g", "m%d" % i, "m%d" % (59 - i), "km")
        d("GEODIST", "g", "a%d" % i, "a%d" % ((i * 7) % 60))
        d("GEOSEARCH", "g", "FROMMEMBER", "m%d" % i, "BYBOX", 1000, 1000 + i * 100, "km",
          "WITHDIST", "ASC")
        d("GEOSEARCH", "g", "FROMMEMBER", "a%d" % i, "BYRADIUS", 300 * i, "km", "DESC",
          "WITHCOORD")


def test_store_wakes_blocked_client(tc_server, redis_server):
    import threading

    writes = [("GEOSEARCHSTORE", "dst", "g", "FROMLONLAT", 1, 1, "BYRADIUS", 100, "km"),
              ("GEORADIUS", "g", 1, 1, 100, "km", "STOREDIST", "dst"),
              ("GEOADD", "dst", 5, 5, "new")]
    got = {}
    for srv in (tc_server, redis_server):
        c = srv.client()
        c.execute_command("FLUSHALL")
        c.execute_command("GEOADD", "g", 1, 1, "a", 1.1, 1.1, "b")
        for w in writes:
            out = []
            t = threading.Thread(target=lambda: out.append(
                srv.client().execute_command("BZPOPMIN", "dst", 5)))
            t.start()
            for _ in range(100):
                if b"blocked_clients:1" in c.execute_command("INFO", "clients"):
                    break
                threading.Event().wait(0.02)
            c.execute_command(*w)
            t.join(6)
            got.setdefault(srv.kind, []).append(out)
            c.execute_command("DEL", "dst")
    assert got["twincache"] == got["redis"] and all(got["redis"]), got


def test_fuzz_differential(d):
    """Random geo commands, valid ones with random mutations (a token dropped, replaced or
    inserted): the same reply (or error) as redis-server."""
    rng = random.Random(99)
    words = ["FROMMEMBER", "FROMLONLAT", "BYRADIUS", "BYBOX", "ASC", "DESC", "COUNT", "ANY",
             "WITHCOORD", "WITHDIST", "WITHHASH", "STORE", "STOREDIST", "NX", "XX", "CH", "m",
             "km", "ft", "mi", "M", "KM", "yd"]
    nums = ["0", "1", "-1", "10", "100", "1000", "180", "-180", "85.05112878", "-85.05112878",
            "85.06", "1e308", "inf", "-inf", "nan", "0.5", "-0", "", " 1", "0x10", "5e-324",
            "9223372036854775807", "-9223372036854775808", "13.36", "38.11", "1e7", "20000000"]
    keys = ["k1", "k2", "k3"]
    members = ["a", "b", "c", "d", "e"]

    def num():
        return rng.choice(nums) if rng.random() < 0.3 else "%.6g" % rng.uniform(-90, 90)

    def size():
        return rng.choice(nums) if rng.random() < 0.2 else "%.4g" % (10 ** rng.uniform(0, 4))

    def unit():
        return rng.choice(("m", "km", "ft", "mi", "KM", "yd"))

    def opts(store):
        o = []
        for _ in range(rng.randint(0, 4)):
            w = rng.choice(["ASC", "DESC", "COUNT", "ANY", "WITHCOORD", "WITHDIST", "WITHHASH"] +
                           (["STORE", "STOREDIST"] if store else []))
            o.append(w)
            if w == "COUNT":
                o.append(rng.choice(["1", "2", "5", "0", "-1", "x", "100"]))
            elif w in ("STORE", "STOREDIST"):
                o.append(rng.choice(keys))
        return o

    def command():
        k = rng.choice(keys + ["str", "nokey"] if rng.random() < 0.2 else keys)
        m = rng.choice(members)
        c = rng.randrange(8)
        if c == 0:
            a = ["GEOADD", k] + rng.choice([[], ["NX"], ["XX"], ["CH"], ["XX", "CH"]])
            for _ in range(rng.randint(1, 3)):
                a += ["%.6g" % rng.uniform(-180, 180), num(), rng.choice(members)]
            return a
        if c == 1:
            return [rng.choice(["GEOPOS", "GEOHASH"]), k] + rng.sample(members, 2)
        if c == 2:
            return ["GEODIST", k, m, rng.choice(members)] + ([unit()] if rng.random() < .7 else [])
        if c in (3, 4):
            src = (["FROMMEMBER", m] if rng.random() < 0.5 else
                   ["FROMLONLAT", "%.6g" % rng.uniform(-180, 180), num()])
            by = (["BYRADIUS", size(), unit()] if rng.random() < 0.5 else
                  ["BYBOX", size(), size(), unit()])
            if c == 3:
                return ["GEOSEARCH", k] + src + by + opts(False)
            return (["GEOSEARCHSTORE", rng.choice(keys), k] + src + by + opts(False) +
                    (["STOREDIST"] if rng.random() < 0.5 else []))
        ro = rng.choice(["", "_RO"])
        if c in (5, 6):
            return (["GEORADIUS" + ro, k, "%.6g" % rng.uniform(-180, 180), num(), size(),
                     unit()] + opts(not ro))
        return ["GEORADIUSBYMEMBER" + ro, k, m, size(), unit()] + opts(not ro)

    for k in keys:
        d("GEOADD", k, 13.36, 38.11, "a", 15.08, 37.5, "b", -179.9, 85, "c", 0, 0, "d")
    d("SET", "str", "x")
    for _ in range(3000):
        args = command()
        for _ in range(rng.choice((0, 0, 0, 1, 2))):
            i = rng.randrange(1, len(args) + 1)
            x = rng.random()
            tok = rng.choice(words + nums + members + keys)
            if x < 0.3 and i < len(args):
                del args[i]
            elif x < 0.6 and i < len(args):
                args[i] = tok
            else:
                args.insert(i, tok)
        a, b = d.both(*args)
        assert repr(a) == repr(b), (args, a, b)
    for k in keys:
        d("ZRANGE", k, 0, -1, "WITHSCORES")
