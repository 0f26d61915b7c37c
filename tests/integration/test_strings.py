"""String commands through redis-py, with Redis 7.0 semantics and exact error texts."""

import time

import pytest

from itutil import raises_exact

pytestmark = pytest.mark.sanitize

NOT_INT = "ERR value is not an integer or out of range"
SYNTAX = "ERR syntax error"
OVERFLOW = "ERR increment or decrement would overflow"
NOT_FLOAT = "ERR value is not a valid float"
I64_MAX = 9223372036854775807
I64_MIN = -9223372036854775808


def test_get_set_basic(r):
    assert r.get("nokey") is None
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.set("k", "v2") is True
    assert r.get("k") == "v2"
    assert r.set("empty", "") is True
    assert r.get("empty") == ""
    assert r.exists("empty") == 1


def test_binary_safe_keys_and_values(server, r):
    rb = server.client(decode=False)
    key = b"bin\x00key\r\n\xff"
    val = bytes(range(256)) * 4 + b"\r\n$3\r\n*1\r\n"
    assert rb.set(key, val) is True
    assert rb.get(key) == val
    assert rb.strlen(key) == len(val)
    assert rb.exists(key) == 1
    assert rb.get(b"bin\x00key") is None  # prefix up to NUL is another key


@pytest.mark.parametrize("size", [16 * 1024 - 1, 64 * 1024 + 7, 1024 * 1024, 8 * 1024 * 1024 + 3])
def test_large_values(server, r, size):
    rb = server.client(decode=False)
    val = (b"0123456789abcdef" * (size // 16 + 1))[:size]
    assert rb.set(b"big", val) is True
    assert rb.strlen(b"big") == size
    assert rb.get(b"big") == val
    assert rb.getrange(b"big", size - 5, -1) == val[-5:]


def test_set_ex_px(r):
    assert r.set("k", "v", ex=100) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.set("k", "v", px=100000) is True
    assert 99000 < r.pttl("k") <= 100000
    # plain SET removes the TTL
    assert r.set("k", "v") is True
    assert r.ttl("k") == -1


def test_set_exat_pxat(r):
    now = int(time.time())
    assert r.set("k", "v", exat=now + 100) is True
    assert 98 <= r.ttl("k") <= 100
    assert r.cmd("EXPIRETIME", "k") == now + 100
    assert r.set("k", "v", pxat=(now + 200) * 1000 + 123) is True
    assert r.cmd("PEXPIRETIME", "k") == (now + 200) * 1000 + 123
    # an absolute time in the past: OK, and the key is gone
    assert r.set("k", "v", exat=1) is True
    assert r.exists("k") == 0
    assert r.set("k", "v", pxat=1) is True
    assert r.get("k") is None


def test_set_nx_xx(r):
    assert r.set("k", "v1", xx=True) is None
    assert r.exists("k") == 0
    assert r.set("k", "v1", nx=True) is True
    assert r.set("k", "v2", nx=True) is None
    assert r.get("k") == "v1"
    assert r.set("k", "v3", xx=True) is True
    assert r.get("k") == "v3"


def test_set_keepttl(r):
    r.set("k", "v", ex=100)
    assert r.set("k", "v2", keepttl=True) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.get("k") == "v2"
    assert r.cmd("SET", "k", "v3", "KEEPTTL", "KEEPTTL") == "OK"
    assert r.ttl("k") > 0


def test_set_get_option(r):
    assert r.set("k", "v1", get=True) is None
    assert r.set("k", "v2", get=True) == "v1"
    assert r.get("k") == "v2"
    # Redis 7.0 allows NX together with GET: returns the old value, sets nothing
    assert r.cmd("SET", "k", "v3", "NX", "GET") == "v2"
    assert r.get("k") == "v2"
    assert r.cmd("SET", "new", "v", "NX", "GET") is None
    assert r.get("new") == "v"
    assert r.cmd("SET", "k", "v4", "XX", "GET", "EX", "100") == "v2"
    assert r.get("k") == "v4" and r.ttl("k") > 0


@pytest.mark.parametrize("args,err", [
    (["EX", "0"], "ERR invalid expire time in 'set' command"),
    (["EX", "-1"], "ERR invalid expire time in 'set' command"),
    (["PX", "0"], "ERR invalid expire time in 'set' command"),
    (["EXAT", "0"], "ERR invalid expire time in 'set' command"),
    (["PXAT", "-5"], "ERR invalid expire time in 'set' command"),
    (["EX", str(I64_MAX)], "ERR invalid expire time in 'set' command"),
    (["PX", str(I64_MAX)], "ERR invalid expire time in 'set' command"),
    (["EX", "abc"], NOT_INT),
    (["EX", "1.5"], NOT_INT),
    (["EX"], SYNTAX),
    (["NX", "XX"], SYNTAX),
    (["EX", "10", "PX", "100"], SYNTAX),
    (["EX", "10", "EXAT", "100"], SYNTAX),
    (["KEEPTTL", "EX", "10"], SYNTAX),
    (["PX", "10", "KEEPTTL"], SYNTAX),
    (["FOO"], SYNTAX),
    (["v2"], SYNTAX),
])
def test_set_option_errors(r, args, err):
    r.set("k", "orig")
    with raises_exact(err):
        r.cmd("SET", "k", "v", *args)
    assert r.get("k") == "orig"
    assert r.ttl("k") == -1


def test_setnx_setex_psetex(r):
    assert r.setnx("k", "v1") is True
    assert r.setnx("k", "v2") is False
    assert r.get("k") == "v1"
    assert r.setex("k", 100, "v3") is True
    assert r.get("k") == "v3" and 99 <= r.ttl("k") <= 100
    assert r.psetex("k", 100000, "v4") is True
    assert r.get("k") == "v4" and 99000 < r.pttl("k") <= 100000
    with raises_exact("ERR invalid expire time in 'setex' command"):
        r.cmd("SETEX", "k", "0", "v")
    with raises_exact("ERR invalid expire time in 'setex' command"):
        r.cmd("SETEX", "k", "-10", "v")
    with raises_exact("ERR invalid expire time in 'psetex' command"):
        r.cmd("PSETEX", "k", "-5", "v")
    with raises_exact(NOT_INT):
        r.cmd("SETEX", "k", "ten", "v")
    assert r.get("k") == "v4"


def test_getset_getdel(r):
    assert r.getset("k", "v1") is None
    assert r.getset("k", "v2") == "v1"
    r.expire("k", 100)
    assert r.getset("k", "v3") == "v2"
    assert r.ttl("k") == -1  # GETSET discards the TTL like SET
    assert r.getdel("k") == "v3"
    assert r.exists("k") == 0
    assert r.getdel("k") is None


def test_getex(r):
    assert r.getex("nokey") is None
    r.set("k", "v")
    assert r.getex("k") == "v"
    assert r.ttl("k") == -1
    assert r.getex("k", ex=100) == "v"
    assert 99 <= r.ttl("k") <= 100
    assert r.getex("k", px=200000) == "v"
    assert 199000 < r.pttl("k") <= 200000
    now = int(time.time())
    assert r.getex("k", exat=now + 300) == "v"
    assert 298 <= r.ttl("k") <= 300
    assert r.getex("k", pxat=(now + 400) * 1000) == "v"
    assert 398 <= r.ttl("k") <= 400
    assert r.getex("k", persist=True) == "v"
    assert r.ttl("k") == -1
    with raises_exact("ERR invalid expire time in 'getex' command"):
        r.cmd("GETEX", "k", "EX", "0")
    with raises_exact("ERR invalid expire time in 'getex' command"):
        r.cmd("GETEX", "k", "PX", "-1")
    with raises_exact(SYNTAX):
        r.cmd("GETEX", "k", "EX", "10", "PX", "10")
    with raises_exact(SYNTAX):
        r.cmd("GETEX", "k", "PERSIST", "EX", "10")
    with raises_exact(SYNTAX):
        r.cmd("GETEX", "k", "FOO")
    with raises_exact(NOT_INT):
        r.cmd("GETEX", "k", "EX", "x")
    assert r.ttl("k") == -1
    # an EXAT in the past deletes the key, returning the value
    assert r.getex("k", exat=1) == "v"
    assert r.exists("k") == 0


def test_mget_mset_msetnx(r):
    assert r.mset({"a": "1", "b": "2", "c": "3"}) is True
    assert r.mget("a", "nokey", "c", "a") == ["1", None, "3", "1"]
    # MSET with a repeated key: the last value wins
    assert r.cmd("MSET", "d", "x", "d", "y") == "OK"
    assert r.get("d") == "y"
    with raises_exact("ERR wrong number of arguments for 'mset' command"):
        r.cmd("MSET", "a", "1", "b")
    assert r.msetnx({"e": "5", "f": "6"}) is True
    # all or nothing
    assert r.msetnx({"g": "7", "a": "changed"}) is False
    assert r.exists("g") == 0
    assert r.get("a") == "1"
    with raises_exact("ERR wrong number of arguments for 'msetnx' command"):
        r.cmd("MSETNX", "a", "1", "b")
    # MSET removes TTLs
    r.expire("a", 100)
    r.mset({"a": "9"})
    assert r.ttl("a") == -1


def test_incr_decr(r):
    assert r.incr("n") == 1
    assert r.incr("n") == 2
    assert r.decr("n") == 1
    assert r.incrby("n", 100) == 101
    assert r.decrby("n", 1000) == -899
    assert r.incrby("n", -1) == -900
    assert r.get("n") == "-900"
    assert r.decr("new") == -1
    r.set("n", "  5")
    with raises_exact(NOT_INT):
        r.incr("n")
    for bad in ["abc", "1.5", "01", "5 ", "", "99999999999999999999", "1e3"]:
        r.set("n", bad)
        with raises_exact(NOT_INT):
            r.incr("n")
        assert r.get("n") == bad
    r.set("n", "10")
    with raises_exact(NOT_INT):
        r.cmd("INCRBY", "n", "x")
    with raises_exact(NOT_INT):
        r.cmd("INCRBY", "n", "1.0")
    with raises_exact(NOT_INT):
        r.cmd("DECRBY", "n", str(I64_MAX + 1))
    # INCR keeps the TTL
    r.set("t", "1", ex=100)
    r.incr("t")
    assert r.ttl("t") > 0 and r.get("t") == "2"


def test_incr_overflow(r):
    r.set("n", str(I64_MAX))
    with raises_exact(OVERFLOW):
        r.incr("n")
    with raises_exact(OVERFLOW):
        r.incrby("n", 1)
    with raises_exact(OVERFLOW):
        r.decrby("n", -1)
    assert r.get("n") == str(I64_MAX)
    assert r.incrby("n", I64_MIN) == -1
    r.set("n", str(I64_MIN))
    with raises_exact(OVERFLOW):
        r.decr("n")
    with raises_exact(OVERFLOW):
        r.incrby("n", -1)
    assert r.get("n") == str(I64_MIN)
    r.set("n", "5")
    with raises_exact("ERR decrement would overflow"):
        r.cmd("DECRBY", "n", str(I64_MIN))
    assert r.get("n") == "5"


def test_incrbyfloat(r):
    # examples of the INCRBYFLOAT documentation
    r.set("f", "10.50")
    assert r.cmd("INCRBYFLOAT", "f", "0.1") == "10.6"
    assert r.cmd("INCRBYFLOAT", "f", "-5") == "5.6"
    r.set("f", "5.0e3")
    assert r.cmd("INCRBYFLOAT", "f", "2.0e2") == "5200"
    assert r.get("f") == "5200"
    assert r.cmd("INCRBYFLOAT", "new", "3") == "3"
    assert r.cmd("INCRBYFLOAT", "new", "-3") == "0"
    r.set("i", "7")
    assert r.cmd("INCRBYFLOAT", "i", "0.5") == "7.5"
    for bad in ["abc", "1.5.5", "", "nan"]:
        r.set("f", bad)
        with raises_exact(NOT_FLOAT):
            r.cmd("INCRBYFLOAT", "f", "1")
    r.set("f", "1")
    with raises_exact(NOT_FLOAT):
        r.cmd("INCRBYFLOAT", "f", "x")
    with raises_exact(NOT_FLOAT):
        r.cmd("INCRBYFLOAT", "f", "nan")
    with raises_exact("ERR increment would produce NaN or Infinity"):
        r.cmd("INCRBYFLOAT", "f", "inf")
    assert r.get("f") == "1"


def test_append_strlen(r):
    assert r.strlen("k") == 0
    assert r.append("k", "Hello") == 5
    assert r.append("k", " World") == 11
    assert r.get("k") == "Hello World"
    assert r.strlen("k") == 11
    r.set("n", "12")
    assert r.append("n", "34") == 4
    assert r.incr("n") == 1235
    assert r.strlen("n") == 4
    r.set("t", "a", ex=100)
    r.append("t", "b")
    assert r.ttl("t") > 0  # APPEND keeps the TTL


@pytest.mark.parametrize("start,end,expect", [
    (0, 3, "This"),
    (-3, -1, "ing"),
    (0, -1, "This is a string"),
    (10, 100, "string"),
    (5, 3, ""),
    (-1, -5, ""),
    (15, 15, "g"),
    (16, 20, ""),
    (-100, 3, "This"),
    (0, 0, "T"),
    # a Redis 7.0 quirk: both negative and clamped to 0 gives the first byte
    (-100, -50, "T"),
])
def test_getrange(r, start, end, expect):
    r.set("k", "This is a string")
    assert r.getrange("k", start, end) == expect


def test_getrange_edges(r):
    assert r.getrange("nokey", 0, -1) == ""
    r.set("n", "12345")  # an integer-encoded value
    assert r.getrange("n", 1, 2) == "23"
    r.set("e", "")
    assert r.getrange("e", 0, -1) == ""
    with raises_exact(NOT_INT):
        r.cmd("GETRANGE", "n", "a", "1")


def test_setrange(server, r):
    rb = server.client(decode=False)
    r.set("k", "Hello World")
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == "Hello Redis"
    # past the end: zero padding
    assert r.setrange("pad", 5, "x") == 6
    assert rb.get(b"pad") == b"\x00\x00\x00\x00\x00x"
    assert r.setrange("k", 11, "!") == 12
    assert r.get("k") == "Hello Redis!"
    # empty value: no change, and a missing key is not created
    assert r.setrange("k", 100, "") == 12
    assert r.get("k") == "Hello Redis!"
    assert r.setrange("nokey", 0, "") == 0
    assert r.exists("nokey") == 0
    r.set("n", "12345")
    assert r.setrange("n", 1, "x") == 5
    assert r.get("n") == "1x345"
    r.set("t", "abc", ex=100)
    r.setrange("t", 0, "z")
    assert r.ttl("t") > 0
    with raises_exact("ERR offset is out of range"):
        r.setrange("k", -1, "x")
    with raises_exact(NOT_INT):
        r.cmd("SETRANGE", "k", "x", "v")
    with raises_exact("ERR string exceeds maximum allowed size (proto-max-bulk-len)"):
        r.setrange("k", 512 * 1024 * 1024, "x")
    with raises_exact("ERR string exceeds maximum allowed size (proto-max-bulk-len)"):
        r.setrange("nokey", 512 * 1024 * 1024 - 1, "xy")
    assert r.exists("nokey") == 0
    assert r.get("k") == "Hello Redis!"
