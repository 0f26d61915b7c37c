"""Bitmaps: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO compared with Debian's
redis-server (replies and error texts), on every way a string can be stored (set by SET, by
INCR, appended, large refcounted values, with a TTL), randomized differential runs, RESP3,
MULTI/EXEC and WATCH, and the proto-max-bulk-len limit."""
import random
import socket
import time

import pytest
import redis

BIG_OFFSETS = (4294967296, 4294967295 + 8, -1, "x", "", "1.5", "+1", "01", "-0", " 1",
               "99999999999999999999", 9223372036854775807, -9223372036854775808)


def test_setbit_getbit_basic(d):
    d("SETBIT", "k", 7, 1)
    d("GET", "k")
    d("SETBIT", "k", 7, 1)
    d("SETBIT", "k", 7, 0)
    d("SETBIT", "k", 0, 1)
    d("SETBIT", "k", 100, 1)
    d("GET", "k")
    d("STRLEN", "k")
    for off in (0, 1, 7, 8, 100, 101, 1000, 4294967295):
        d("GETBIT", "k", off)
    d("GETBIT", "nokey", 0)
    d("GETBIT", "nokey", 4294967295)
    d("EXISTS", "nokey")


def test_bit_errors(d):
    d("SET", "s", "abc")
    d("LPUSH", "l", "a")
    for off in BIG_OFFSETS:
        d("SETBIT", "s", off, 1)
        d("SETBIT", "nokey", off, 1)
        d("GETBIT", "s", off)
        d("GETBIT", "l", off)
    for bit in (2, -1, "x", "", "01", "-0", "1 ", 9223372036854775807):
        d("SETBIT", "s", 0, bit)
        d("SETBIT", "l", 0, bit)
    d("SETBIT", "l", 0, 1)
    d("GETBIT", "l", 0)
    d("SETBIT", "l", "x", 2)
    d("EXISTS", "nokey")
    d("GET", "s")
    for cmd in (("SETBIT", "k"), ("SETBIT", "k", 0), ("SETBIT", "k", 0, 1, 2), ("GETBIT", "k"),
                ("GETBIT", "k", 0, 1), ("BITCOUNT",), ("BITPOS", "k"), ("BITOP", "and", "d"),
                ("BITFIELD",), ("BITFIELD_RO",)):
        d(*cmd)


def test_setbit_on_every_string_encoding(d, r):
    d("SET", "int", 123)
    d("SETBIT", "int", 100, 1)
    d("GET", "int")
    d("SET", "neg", -5)
    d("SETBIT", "neg", 3, 1)
    d("GET", "neg")
    d("INCR", "ctr")
    d("INCRBY", "ctr", 41)
    d("SETBIT", "ctr", 6, 0)
    d("GET", "ctr")
    d("INCR", "ctr")  # "22" after the bit change, as in Redis
    d("GET", "ctr")
    d("SET", "f", "3.5")
    d("INCRBYFLOAT", "f", 1)
    d("SETBIT", "f", 2, 1)
    d("GET", "f")
    d("APPEND", "ap", "hello")
    d("SETBIT", "ap", 47, 1)
    d("APPEND", "ap", "x")
    d("GET", "ap")
    d("SETRANGE", "sr", 5, "z")
    d("SETBIT", "sr", 1, 1)
    d("GET", "sr")
    d("SET", "e", "")
    d("SETBIT", "e", 0, 0)
    d("GET", "e")
    d("GETRANGE", "int", 0, -1)
    # growth in place and by copy, small values through large (refcounted) ones
    for off in (9, 63, 64, 200, 1000, 8 * 16000, 8 * 16383 + 7, 8 * 16384, 8 * 20000, 8 * 70000):
        d("SETBIT", "grow", off, 1)
        d("STRLEN", "grow")
        d("BITCOUNT", "grow")
    d("GET", "grow")
    d("SET", "big", "x" * 20000)
    d("SETBIT", "big", 5, 1)
    d("SETBIT", "big", 8 * 30000, 1)
    d("GET", "big")
    d("BITFIELD", "big", "INCRBY", "u8", "#40000", 7)
    d("GET", "big")
    # a TTL and the key's other state survive growth
    r.setex("ttl", 1000, "ab")
    r.setbit("ttl", 8 * 5000, 1)
    assert 990 < r.ttl("ttl") <= 1000
    r.bitfield("ttl").set("u8", "#9000", 255).execute()
    assert 990 < r.ttl("ttl") <= 1000
    assert r.strlen("ttl") == 9001


def test_setbit_while_large_value_is_read(tc_server):
    """A reader may hold a large value's reference while its reply is written: changing bits
    then must not alter what that reader receives."""
    a = tc_server.client()
    a.flushall()
    n = 8 << 20
    v = b"\xaa" * n
    a.set("k", v)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 18)  # no autotuning: < 1 value
    s.connect(("127.0.0.1", tc_server.port))
    s.sendall(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" * 3)
    time.sleep(0.2)
    for i in range(0, n * 8, n):
        a.setbit("k", i + 1, 1)  # a clear bit of 0xaa
    a.bitfield("k").set("u8", 0, 0).execute()
    final = a.get("k")
    hdr = b"$%d\r\n" % n
    m = len(hdr) + n + 2
    got = bytearray()
    s.settimeout(10)
    while len(got) < 3 * m:
        chunk = s.recv(1 << 20)
        assert chunk
        got += chunk
    s.close()
    # the first GET ran before the writes; the server may hold back the others while the
    # client does not read, but each shows one whole state: never bytes changed under it
    replies = [bytes(got[i * m:(i + 1) * m]) for i in range(3)]
    assert replies[0] == hdr + v + b"\r\n"
    for x in replies[1:]:
        assert x in (hdr + v + b"\r\n", hdr + final + b"\r\n")
    assert a.strlen("k") == n
    assert a.getbit("k", n + 1) == 1 and a.getrange("k", 0, 0) == b"\x00"


def test_bitcount(d):
    d("SET", "k", "foobar\x00\xff\x81" * 7)
    d("BITCOUNT", "k")
    d("BITCOUNT", "nokey")
    for a, b in ((0, 0), (1, 1), (0, -1), (-1, -1), (-5, -1), (2, 1), (-100, 100), (5, 3),
                 (-5, -10), (-10, -5), (1, -10), (0, 10 ** 12), (-10 ** 12, 0),
                 (9223372036854775807, -9223372036854775808),
                 (-9223372036854775808, 9223372036854775807)):
        d("BITCOUNT", "k", a, b)
        d("BITCOUNT", "k", a, b, "BYTE")
        d("BITCOUNT", "k", a, b, "bit")
        d("BITCOUNT", "k", a, b, "BiT")
    for i in range(-80, 80, 3):
        for j in range(-80, 80, 7):
            d("BITCOUNT", "k", i, j, "BIT")
    d("SET", "e", "")
    d("BITCOUNT", "e")
    d("BITCOUNT", "e", 0, -1)
    d("BITCOUNT", "e", 0, -1, "BIT")
    d("LPUSH", "l", "a")
    for args in (("k", 0), ("k", "a", "b"), ("k", 0, 1, "foo"), ("k", "a", "b", "foo"),
                 ("k", 0, 1, "bit", "x"), ("k", 0, 1, 2, 3), ("nokey", 0), ("nokey", "a", "b"),
                 ("nokey", 0, 1, "foo"), ("l",), ("l", 0), ("l", "a", "b"), ("l", 0, 1, "foo"),
                 ("k", 0, "1.5"), ("k", "", 1)):
        d("BITCOUNT", *args)


def test_bitpos(d):
    d("SET", "k", "\x00\x00\x0f\xff\xff\xf0\x00")
    d("SET", "ones", "\xff" * 20)
    d("SET", "zeros", "\x00" * 20)
    d("SET", "e", "")
    for key in ("k", "ones", "zeros", "e", "nokey"):
        for bit in (0, 1):
            d("BITPOS", key, bit)
            for a in (0, 1, 2, -1, -3, -100, 100, 5):
                d("BITPOS", key, bit, a)
                for b in (0, 1, -1, -2, 3, 100, -100):
                    d("BITPOS", key, bit, a, b)
                    d("BITPOS", key, bit, a, b, "BYTE")
                    d("BITPOS", key, bit, a, b, "BIT")
        for a in range(-60, 60, 7):
            for b in range(-60, 60, 9):
                d("BITPOS", key, 1, a, b, "bit")
                d("BITPOS", key, 0, a, b, "bit")
    d("LPUSH", "l", "a")
    for args in (("k", 2), ("k", -1), ("k", "x"), ("nokey", 2), ("l", 2), ("l", 1), ("l", 1, "a"),
                 ("nokey", 1, "a"), ("nokey", 1, 0, 1, "foo"), ("l", 1, 0, 1, "foo"),
                 ("k", 1, "a", 1, "foo"), ("k", 1, 0, "a", "foo"), ("k", 1, 0, "a"),
                 ("k", 1, 0, 1, "foo"), ("k", 1, 0, 1, "bit", 5), ("nokey", 1, 0, 1, "bit", 5),
                 ("k", 1, "a", "b", "c", "d", "e"), ("nokey", 0, 0, 1, "bit")):
        d("BITPOS", *args)


def test_bitpos_long_runs(d):
    """Word-at-a-time skipping: the first hit at every position of a long run."""
    for n in (1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200):
        for pos in (0, 1, n * 8 - 1, n * 4 + 3):
            d("DEL", "a", "b")
            d("SETBIT", "a", n * 8 - 1, 0)
            d("SETBIT", "a", pos, 1)
            d("BITPOS", "a", 1)
            d("BITPOS", "a", 1, 1)
            d("BITPOS", "a", 1, 0, -1, "BIT")
            d("BITPOS", "a", 1, 3, -2, "BIT")
            d("SET", "b", "\xff" * n)
            d("SETBIT", "b", pos, 0)
            d("BITPOS", "b", 0)
            d("BITPOS", "b", 0, 1)
            d("BITPOS", "b", 0, 0, -1)
            d("BITPOS", "b", 0, 2, -3, "BIT")


def test_bitop(d):
    d("SET", "a", "foobar")
    d("SET", "b", "abcdefghijklmnopqrstu")
    d("SET", "c", "\xff\x00\x55")
    for op in ("AND", "OR", "XOR", "and", "Or", "xOr"):
        d("BITOP", op, "dest", "a", "b", "c")
        d("GET", "dest")
        d("BITOP", op, "dest", "b", "nokey")
        d("GET", "dest")
        d("BITOP", op, "dest", "nokey", "c")
        d("GET", "dest")
        d("BITOP", op, "dest", "a")
        d("GET", "dest")
        d("BITOP", op, "a2", "a", "a")
        d("GET", "a2")
    d("BITOP", "NOT", "dest", "b")
    d("GET", "dest")
    d("BITOP", "not", "dest", "dest")
    d("GET", "dest")
    d("BITOP", "XOR", "b", "b", "a")  # destkey among the sources
    d("GET", "b")
    d("BITOP", "AND", "dest", "a", "b", "c", "a", "b", "c", "a")
    d("GET", "dest")
    # empty result deletes destkey, whatever it held
    d("SET", "e", "")
    d("BITOP", "OR", "dest", "nokey", "nokey2")
    d("EXISTS", "dest")
    d("LPUSH", "lst", "x")
    d("BITOP", "AND", "lst", "e")
    d("EXISTS", "lst")
    d("LPUSH", "lst", "x")
    d("BITOP", "NOT", "lst", "a")
    d("TYPE", "lst")
    d("GET", "lst")
    # TTL of destkey is dropped
    d("SET", "t", "v", "EX", 1000)
    d("BITOP", "OR", "t", "a")
    d("TTL", "t")
    d("LPUSH", "l", "a")
    for args in (("NOT", "dest", "a", "b"), ("NOT", "dest", "l", "b"), ("NOT", "dest", "l"),
                 ("AND", "dest", "l", "nokey"), ("AND", "dest", "nokey", "l"),
                 ("AND", "dest", "a", "l"), ("FOO", "dest", "a"), ("", "dest", "a"),
                 ("ANDX", "dest", "a"), ("OR", "l", "a")):
        d("BITOP", *args)
    d("GET", "dest")
    d("TYPE", "l")
    # long operands: every length around the word size
    rnd = random.Random(7)
    for n in (1, 7, 8, 9, 16, 17, 31, 33, 100, 1000):
        d("SET", "x", bytes(rnd.getrandbits(8) for _ in range(n)))
        d("SET", "y", bytes(rnd.getrandbits(8) for _ in range(n + rnd.randrange(10))))
        for op in ("AND", "OR", "XOR"):
            d("BITOP", op, "z", "x", "y", "x")
            d("GET", "z")
        d("BITOP", "NOT", "z", "y")
        d("GET", "z")


def test_bitfield(d):
    d("SET", "k", "\x81\x02\xfe\x7f\x00\xffhello")
    for t in ("i1", "u1", "i5", "u5", "i8", "u8", "i13", "u13", "i32", "u32", "i63", "u63", "i64"):
        for off in (0, 1, 3, 7, 8, 13, 40, 100, "#0", "#1", "#3", "#100"):
            d("BITFIELD", "k", "GET", t, off)
            d("BITFIELD_RO", "k", "GET", t, off)
    d("BITFIELD", "k", "SET", "i8", 0, -100, "GET", "i8", 0, "INCRBY", "i8", 0, 10, "GET", "u8", 0)
    d("BITFIELD", "k", "set", "u4", "#1", 15, "incrby", "u4", "#1", 1, "get", "u4", "#1")
    d("GET", "k")
    # overflow policies for signed and unsigned, SET and INCRBY
    for ow in ("WRAP", "SAT", "FAIL", "wrap", "Sat", "fail"):
        for t in ("i1", "u1", "i8", "u8", "i16", "u16", "i63", "u63", "i64"):
            for v in (0, 1, -1, 127, 128, -128, -129, 255, 256, 300, -300, 2 ** 62,
                      2 ** 63 - 1, -2 ** 63, -2 ** 62):
                d("BITFIELD", "o", "OVERFLOW", ow, "SET", t, 3, v, "GET", t, 3)
                d("BITFIELD", "o", "OVERFLOW", ow, "INCRBY", t, 3, v, "GET", t, 3)
    d("GET", "o")
    d("BITFIELD", "c", "INCRBY", "i64", 0, 9223372036854775807, "INCRBY", "i64", 0, 10)
    d("BITFIELD", "c", "OVERFLOW", "SAT", "INCRBY", "i64", 0, 9223372036854775807,
      "INCRBY", "i64", 0, 10, "OVERFLOW", "FAIL", "INCRBY", "i64", 0, 1,
      "OVERFLOW", "WRAP", "INCRBY", "i64", 0, 1)
    d("BITFIELD", "c", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 5, "OVERFLOW", "WRAP",
      "INCRBY", "u2", 0, 5)
    # a key made by writes that all fail still exists (zero bytes), as in Redis
    d("BITFIELD", "nk", "OVERFLOW", "FAIL", "SET", "u8", 16, -1)
    d("GET", "nk")
    d("BITFIELD", "nokey", "GET", "u8", 0)
    d("BITFIELD", "nokey")
    d("BITFIELD_RO", "nokey", "GET", "u8", 0, "OVERFLOW", "WRAP")
    d("BITFIELD", "nokey", "OVERFLOW", "FAIL")
    d("EXISTS", "nokey")
    d("BITFIELD", "g", "GET", "u8", 0, "SET", "u8", 100, 1)  # grows only for the writes
    d("STRLEN", "g")


def test_bitfield_errors(d):
    d("SET", "k", "abc")
    d("LPUSH", "l", "a")
    bad = [
        ("GET", "u64", 0), ("GET", "i65", 0), ("GET", "i0", 0), ("GET", "u0", 0), ("GET", "u", 0),
        ("GET", "I8", 0), ("GET", "i08", 0), ("GET", "i+8", 0), ("GET", "x8", 0), ("GET", "", 0),
        ("GET", "i-1", 0), ("GET", "i99999999999999999999", 0),
        ("GET", "i8", "#-1"), ("GET", "i8", "#x"), ("GET", "i8", "#"), ("GET", "i8", "-1"),
        ("GET", "i8", "+1"), ("GET", "i8", "-0"), ("GET", "i8", " 1"), ("GET", "i8", "1.0"),
        ("GET", "i8", 4294967288), ("GET", "i8", 4294967296), ("GET", "i8", "#536870911"),
        ("GET", "i8", "#536870912"), ("GET", "i8", "#2305843009213693952"),
        ("GET", "i64", "#1152921504606846976"), ("GET", "i8", "##1"),
        ("GET", "i8"), ("SET", "i8", 0), ("SET", "i8", 0, "x"), ("SET", "i8", 0, "1.5"),
        ("INCRBY", "i8", 0, "99999999999999999999"), ("INCRBY", "i8"), ("FOO",), ("OVERFLOW",),
        ("OVERFLOW", "foo"), ("OVERFLOW", "sat", "GET", "u8"), ("GET", "i8", 0, "SET"),
        ("SET", "i8", 0, 1, "foo"), ("SET", "i8", 0, 1, "SET", "x", 0, 1),
        ("SET", "i8", 9, 1, "SET", "i8", 0, "x"), ("GET", "i8", 0, "OVERFLOW", "x", "GET", "x", 0),
    ]
    for args in bad:
        d("BITFIELD", "k", *args)
        d("BITFIELD", "l", *args)
        d("BITFIELD", "nokey", *args)
        d("BITFIELD_RO", "k", *args)
    ro_bad = [("SET", "u8", 0, 1), ("INCRBY", "u8", 0, 1), ("GET", "u8", 0, "SET", "u8", 0, 1),
              ("GET", "x", 0, "SET", "u8", 0, 1), ("SET", "x", 0, 1), ("SET", "u8", 0, "x"),
              ("SET", "u8", 0), ("INCRBY", "u8", "#x", 1), ("foo",), ("OVERFLOW", "wrap"),
              ("OVERFLOW", "bad"), ()]
    for args in ro_bad:
        d("BITFIELD_RO", "k", *args)
        d("BITFIELD_RO", "l", *args)
    d("BITFIELD", "l")
    d("BITFIELD", "l", "GET", "u8", 0)
    d("BITFIELD", "l", "SET", "u8", 0, 1)
    d("BITFIELD_RO", "l", "GET", "u8", 0)
    d("GET", "k")
    d("EXISTS", "nokey")


def test_random_differential(d):
    """A few hundred random bitmap operations on a few keys, compared step by step."""
    rnd = random.Random(20261203)
    keys = ["a", "b", "c", "d"]
    types = ["i1", "u1", "i3", "u7", "i8", "u8", "i16", "u16", "i31", "u32", "i63", "u63", "i64"]

    def off():
        return rnd.choice([rnd.randrange(64), rnd.randrange(400), rnd.randrange(3000)])

    def rint():
        return rnd.choice([rnd.randrange(-3, 4), rnd.randrange(-300, 300),
                           rnd.randrange(-2 ** 63, 2 ** 63)])

    for step in range(600):
        k = rnd.choice(keys)
        x = rnd.randrange(14)
        if x == 0:
            d("SETBIT", k, off(), rnd.randrange(2))
        elif x == 1:
            d("GETBIT", k, off())
        elif x == 2:
            d("BITCOUNT", k)
        elif x == 3:
            d("BITCOUNT", k, rnd.randrange(-60, 60), rnd.randrange(-60, 60),
              rnd.choice(["BYTE", "BIT"]))
        elif x == 4:
            d("BITPOS", k, rnd.randrange(2))
        elif x == 5:
            d("BITPOS", k, rnd.randrange(2), rnd.randrange(-60, 60))
        elif x == 6:
            d("BITPOS", k, rnd.randrange(2), rnd.randrange(-400, 400), rnd.randrange(-400, 400),
              rnd.choice(["BYTE", "BIT"]))
        elif x == 7:
            op = rnd.choice(["AND", "OR", "XOR", "NOT"])
            srcs = rnd.sample(keys + ["nokey"], 1 if op == "NOT" else rnd.randrange(1, 4))
            d("BITOP", op, rnd.choice(keys), *srcs)
        elif x in (8, 9):
            args = []
            for _ in range(rnd.randrange(1, 5)):
                y = rnd.randrange(4)
                t = rnd.choice(types)
                o = off() if rnd.randrange(2) else "#%d" % rnd.randrange(20)
                if y == 0:
                    args += ["GET", t, o]
                elif y == 1:
                    args += ["SET", t, o, rint()]
                elif y == 2:
                    args += ["INCRBY", t, o, rint()]
                else:
                    args += ["OVERFLOW", rnd.choice(["WRAP", "SAT", "FAIL"])]
            d("BITFIELD", k, *args)
        elif x == 10:
            t = rnd.choice(types)
            d("BITFIELD_RO", k, "GET", t, off(), "GET", t, "#%d" % rnd.randrange(30))
        elif x == 11:
            d(rnd.choice(["SET", "APPEND"]), k, rnd.choice(["", "1", "123", "-7", "hello",
                                                          "\xff" * rnd.randrange(40)]))
        elif x == 12:
            d(rnd.choice(["INCR", "DECR"]), k)
        else:
            d("GET", k)
    for k in keys:
        d("GET", k)


def test_multi_exec_and_watch(tc_server, redis_server):
    for srv in (tc_server, redis_server):
        c = srv.client()
        c.flushall()
        other = srv.client()
        p = c.pipeline(transaction=True)
        p.setbit("k", 3, 1).bitfield("k").incrby("u8", 8, 200).execute()
        p.bitcount("k").bitpos("k", 1).execute_command("BITOP", "NOT", "n", "k")
        assert p.execute() == [0, [200], 4, 3, 2]
        # each write command invalidates a WATCH on the key it writes
        for cmd in (("SETBIT", "k", 1, 1), ("BITFIELD", "k", "SET", "u8", 0, 1),
                    ("BITOP", "OR", "k", "n"), ("BITOP", "AND", "k", "nokey")):
            with c.pipeline(transaction=True) as p:
                p.watch("k")
                other.execute_command(*cmd)
                p.multi()
                p.get("k")
                with pytest.raises(redis.exceptions.WatchError):
                    p.execute()
        # reads do not
        other.set("k", "abc")
        with c.pipeline(transaction=True) as p:
            p.watch("k")
            other.execute_command("BITCOUNT", "k")
            other.execute_command("GETBIT", "k", 3)
            other.execute_command("BITFIELD_RO", "k", "GET", "u8", 0)
            other.execute_command("BITPOS", "k", 1)
            p.multi()
            p.get("k")
            assert p.execute() == [b"abc"]
        c.connection_pool.disconnect()
        other.connection_pool.disconnect()


class Raw:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            assert chunk
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        out = line + b"\r\n"
        if t in (b"$", b"=", b"!") and rest != b"-1":
            n = int(rest)
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(65536)
            out += self.buf[:n + 2]
            self.buf = self.buf[n + 2:]
        elif t in (b"*", b"~", b">", b"%") and rest != b"-1":
            for _ in range(int(rest) * (2 if t == b"%" else 1)):
                out += self.read()
        return out


def test_resp3(tc_server, redis_server):
    a, b = Raw(tc_server.port), Raw(redis_server.port)
    cmds = [("FLUSHALL",), ("HELLO", "3"), ("SETBIT", "k", 9, 1), ("GETBIT", "k", 9),
            ("BITCOUNT", "k"), ("BITPOS", "k", 1, 0, -1, "BIT"),
            ("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 9, "GET", "u8", 0),
            ("BITFIELD", "nokey"), ("BITFIELD_RO", "k", "GET", "i8", 0),
            ("BITOP", "NOT", "d", "k"), ("GET", "d"), ("BITFIELD", "k", "SET", "i4", 0, 99),
            ("SETBIT", "k", -1, 1), ("HELLO", "2"),
            ("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 9)]
    for cmd in cmds:
        x, y = a.send(*cmd), b.send(*cmd)
        if cmd[0] != "HELLO":
            assert x == y, (cmd, x, y)
    a.s.close()
    b.s.close()


def test_proto_max_bulk_len(d):
    """The limit is proto-max-bulk-len, checked before allocating: lowered to 1 MB here so the
    edge can be reached without allocating hundreds of MB."""
    lim = 1024 * 1024
    d("CONFIG", "SET", "proto-max-bulk-len", lim)
    try:
        d("SETBIT", "k", lim * 8, 1)
        d("GETBIT", "k", lim * 8)
        d("BITFIELD", "k", "SET", "u8", lim * 8, 1)
        d("BITFIELD", "k", "GET", "u8", "#%d" % lim)
        d("BITFIELD", "k", "SET", "u8", "#%d" % lim, 1)
        d("EXISTS", "k")
        d("SETBIT", "k", lim * 8 - 1, 1)
        d("STRLEN", "k")
        d("BITCOUNT", "k")
        d("BITPOS", "k", 1)
        # a field starting in the last allowed byte may end past it, as in Redis
        d("BITFIELD", "k", "SET", "u63", lim * 8 - 1, 12345, "GET", "u63", lim * 8 - 1)
        d("STRLEN", "k")
        d("BITOP", "NOT", "n", "k")
        d("BITCOUNT", "n")
    finally:
        d("CONFIG", "SET", "proto-max-bulk-len", 512 * 1024 * 1024)
    d("SETBIT", "j", 4294967296, 1)
    d("SETBIT", "j", 2 ** 62, 1)
    d("BITFIELD", "j", "SET", "i64", "#536870912", 1)
    d("EXISTS", "j")


def test_command_info(d):
    for name in ("setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro"):
        tc, rs = d.both("COMMAND", "INFO", name)
        assert tc[0][:6] == rs[0][:6], (tc, rs)


def test_beyond_item_size(r):
    """proto-max-bulk-len may be raised past 4 GB; a bitmap that large is refused before any
    allocation instead of wrapping its length (Redis would try to allocate it)."""
    r.config_set("proto-max-bulk-len", 8 * 1024 ** 3)
    try:
        for cmd in (("SETBIT", "k", 1 << 35, 1), ("BITFIELD", "k", "SET", "u8", 1 << 35, 1)):
            with pytest.raises(redis.exceptions.ResponseError, match="proto-max-bulk-len"):
                r.execute_command(*cmd)
        assert r.exists("k") == 0
        assert r.getbit("k", 1 << 35) == 0
        assert r.execute_command("BITFIELD_RO", "k", "GET", "u8", 1 << 35) == [0]
    finally:
        r.config_set("proto-max-bulk-len", 512 * 1024 * 1024)
