"""Key-space commands through redis-py, with Redis 7.0 semantics and exact error texts."""

import time

import pytest

from itutil import raises_exact

pytestmark = pytest.mark.sanitize

NOT_INT = "ERR value is not an integer or out of range"
SYNTAX = "ERR syntax error"


def test_del_unlink_exists(r):
    r.mset({"a": "1", "b": "2", "c": "3"})
    assert r.exists("a") == 1
    # EXISTS counts a repeated key each time
    assert r.exists("a", "a", "a", "nokey", "b") == 4
    assert r.delete("a", "nokey", "a") == 1
    assert r.exists("a") == 0
    assert r.unlink("b", "c", "nokey") == 2
    assert r.exists("b", "c") == 0
    assert r.delete("nokey") == 0
    assert r.dbsize() == 0


def test_type(server, r):
    r.set("s", "v")
    r.set("i", "123")
    assert r.type("s") == "string"
    assert r.type("i") == "string"
    assert r.type("nokey") == "none"
    assert r.cmd("TYPE", "s") == "string"  # a simple string, not a bulk


def test_ttl_pttl_persist(r):
    assert r.ttl("nokey") == -2
    assert r.pttl("nokey") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert 99000 < r.pttl("k") <= 100000
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    assert r.persist("nokey") is False


def test_expire_family(r):
    r.set("k", "v")
    assert r.expire("nokey", 10) is False
    assert r.pexpire("k", 100000) is True
    assert 99000 < r.pttl("k") <= 100000
    now = int(time.time())
    assert r.expireat("k", now + 500) is True
    assert 498 <= r.ttl("k") <= 500
    assert r.pexpireat("k", (now + 600) * 1000) is True
    assert 598 <= r.ttl("k") <= 600
    assert r.cmd("EXPIRETIME", "k") == now + 600
    assert r.cmd("PEXPIRETIME", "k") == (now + 600) * 1000
    assert r.cmd("EXPIRETIME", "nokey") == -2
    r.set("p", "v")
    assert r.cmd("EXPIRETIME", "p") == -1
    assert r.cmd("PEXPIRETIME", "p") == -1
    # a non-positive relative time or a past absolute time deletes the key
    assert r.expire("k", 0) is True
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.pexpire("k", -5) is True
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.expireat("k", 1) is True
    assert r.exists("k") == 0


def test_expire_nx_xx_gt_lt(r):
    r.set("k", "v")
    assert r.cmd("EXPIRE", "k", "100", "XX") == 0  # no TTL yet
    assert r.cmd("EXPIRE", "k", "100", "NX") == 1
    assert r.cmd("EXPIRE", "k", "50", "NX") == 0
    assert r.cmd("EXPIRE", "k", "50", "GT") == 0
    assert r.cmd("EXPIRE", "k", "200", "GT") == 1
    assert r.cmd("EXPIRE", "k", "300", "LT") == 0
    assert r.cmd("EXPIRE", "k", "10", "LT") == 1
    assert 9 <= r.ttl("k") <= 10
    assert r.cmd("EXPIRE", "k", "20", "XX") == 1
    assert 19 <= r.ttl("k") <= 20
    r.persist("k")
    # a key without TTL counts as an infinite TTL for GT/LT
    assert r.cmd("EXPIRE", "k", "10", "GT") == 0
    assert r.ttl("k") == -1
    assert r.cmd("EXPIRE", "k", "10", "LT") == 1
    assert 9 <= r.ttl("k") <= 10
    assert r.cmd("PEXPIRE", "k", "5000", "lt") == 1  # options are case-insensitive
    assert r.cmd("PEXPIREAT", "k", str(int(time.time() * 1000) + 3000), "GT") == 0
    assert r.cmd("EXPIREAT", "k", str(int(time.time()) + 1000), "GT") == 1
    assert r.cmd("EXPIRE", "nokey", "10", "NX") == 0


@pytest.mark.parametrize("args,err", [
    (["10", "NX", "XX"], "ERR NX and XX, GT or LT options at the same time are not compatible"),
    (["10", "NX", "GT"], "ERR NX and XX, GT or LT options at the same time are not compatible"),
    (["10", "GT", "LT"], "ERR GT and LT options at the same time are not compatible"),
    (["10", "FOO"], "ERR Unsupported option FOO"),
    (["abc"], NOT_INT),
    (["1.5"], NOT_INT),
    (["9223372036854775807"], "ERR invalid expire time in 'expire' command"),
])
def test_expire_errors(r, args, err):
    r.set("k", "v")
    with raises_exact(err):
        r.cmd("EXPIRE", "k", *args)
    assert r.ttl("k") == -1


def test_pexpire_overflow(r):
    r.set("k", "v")
    with raises_exact("ERR invalid expire time in 'pexpire' command"):
        r.cmd("PEXPIRE", "k", "9223372036854775807")
    with raises_exact("ERR invalid expire time in 'expireat' command"):
        r.cmd("EXPIREAT", "k", "9223372036854775807")
    assert r.ttl("k") == -1


def test_rename(r):
    r.set("a", "1", ex=100)
    assert r.rename("a", "b") is True
    assert r.exists("a") == 0
    assert r.get("b") == "1"
    assert 99 <= r.ttl("b") <= 100  # the TTL moves with the value
    r.set("c", "3")
    assert r.rename("b", "c") is True  # overwrites, and the TTL comes along
    assert r.get("c") == "1" and r.ttl("c") > 0
    assert r.rename("c", "c") is True  # same name: OK when it exists
    assert r.get("c") == "1"
    with raises_exact("ERR no such key"):
        r.rename("nokey", "x")
    with raises_exact("ERR no such key"):
        r.rename("nokey", "nokey")
    assert r.exists("x") == 0


def test_renamenx(r):
    r.set("a", "1")
    r.set("b", "2")
    assert r.renamenx("a", "b") is False
    assert r.get("a") == "1" and r.get("b") == "2"
    assert r.renamenx("a", "c") is True
    assert r.get("c") == "1" and r.exists("a") == 0
    assert r.renamenx("c", "c") is False
    with raises_exact("ERR no such key"):
        r.renamenx("nokey", "x")


GLOB_KEYS = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h?llo", "h*llo", "h[e]llo",
             "hbllo", "hcllo"]


@pytest.mark.parametrize("pattern,expect", [
    ("h?llo", ["h*llo", "h?llo", "hallo", "hbllo", "hcllo", "hello", "hxllo"]),
    ("h*llo", sorted(GLOB_KEYS)),
    ("h[ae]llo", ["hallo", "hello"]),
    ("h[^e]llo", ["h*llo", "h?llo", "hallo", "hbllo", "hcllo", "hxllo"]),
    ("h[a-c]llo", ["hallo", "hbllo", "hcllo"]),
    ("h[c-a]llo", ["hallo", "hbllo", "hcllo"]),  # a reversed range works too
    ("h\\?llo", ["h?llo"]),
    ("h\\*llo", ["h*llo"]),
    ("h\\[e]llo", ["h[e]llo"]),
    ("h[!e]llo", ["hello"]),  # Redis has no '!' negation: [!e] is '!' or 'e'
    ("*", sorted(GLOB_KEYS)),
    ("hello", ["hello"]),
    ("HELLO", []),
    ("*ll*", sorted(GLOB_KEYS)),
    ("he*o", ["heeeello", "hello"]),
    ("nomatch*", []),
])
def test_keys_glob(r, pattern, expect):
    r.mset({k: "1" for k in GLOB_KEYS})
    assert sorted(r.keys(pattern)) == expect


def test_keys_skips_expired(r):
    r.set("live", "1")
    r.set("dead", "1", px=1)
    time.sleep(0.01)
    assert r.keys("*") == ["live"]


def test_scan_basic(r):
    r.mset({"user:%d" % i: str(i) for i in range(200)})
    r.mset({"other:%d" % i: str(i) for i in range(50)})
    seen, cursor, calls = [], 0, 0
    while True:
        cursor, keys = r.scan(cursor)
        seen += keys
        calls += 1
        if cursor == 0:
            break
    assert set(seen) == set(r.keys("*"))
    assert len(set(seen)) == 250
    assert calls > 1  # default COUNT 10 cannot return 250 keys in one call
    matched = set(r.scan_iter(match="user:1*", count=50))
    assert matched == {"user:1"} | {"user:1%d" % i for i in range(10)} | \
        {"user:1%02d" % i for i in range(100)}
    assert set(r.scan_iter(_type="string")) == set(seen)
    assert set(r.scan_iter(_type="list")) == set()
    assert set(r.scan_iter(_type="STRING", match="other:*")) == {"other:%d" % i
                                                                   for i in range(50)}
    # a big COUNT: fewer calls, same keys
    assert set(r.scan_iter(count=100000)) == set(seen)


def test_scan_reply_shape_and_errors(r):
    r.set("k", "v")
    cursor, keys, found = "0", None, []
    while True:
        reply = r.cmd("SCAN", cursor, "COUNT", "1000")
        assert isinstance(reply, list) and len(reply) == 2
        cursor, keys = reply
        assert isinstance(cursor, str) and cursor.isdigit()  # the cursor is a bulk string
        assert isinstance(keys, list)
        found += keys
        if cursor == "0":
            break
    assert found == ["k"]
    with raises_exact("ERR invalid cursor"):
        r.cmd("SCAN", "abc")
    with raises_exact("ERR invalid cursor"):
        r.cmd("SCAN", "18446744073709551616")
    with raises_exact(SYNTAX):
        r.cmd("SCAN", "0", "COUNT", "0")
    with raises_exact(NOT_INT):
        r.cmd("SCAN", "0", "COUNT", "x")
    with raises_exact(SYNTAX):
        r.cmd("SCAN", "0", "MATCH")
    with raises_exact(SYNTAX):
        r.cmd("SCAN", "0", "FOO", "bar")
    # an unknown type matches nothing in Redis 7.0 (no error)
    assert list(r.scan_iter(_type="nosuchtype", count=1000)) == []


def test_randomkey(r):
    assert r.randomkey() is None
    r.set("only", "1")
    assert r.randomkey() == "only"
    r.mset({"k%d" % i: "1" for i in range(20)})
    got = {r.randomkey() for _ in range(200)}
    assert got <= set(r.keys("*"))
    assert len(got) > 1


def test_touch(r):
    r.mset({"a": "1", "b": "2"})
    assert r.touch("a", "b", "nokey", "a") == 3
    assert r.touch("nokey") == 0


def test_copy(server, r):
    r.set("src", "v", ex=100)
    assert r.copy("src", "dst") is True
    assert r.get("dst") == "v"
    assert 99 <= r.ttl("dst") <= 100  # the TTL is copied
    assert r.copy("src", "dst") is False  # exists, no REPLACE
    r.set("src", "v2")
    assert r.copy("src", "dst", replace=True) is True
    assert r.get("dst") == "v2" and r.ttl("dst") == -1
    assert r.copy("nokey", "x") is False
    assert r.exists("x") == 0
    # to another database
    assert r.copy("src", "dst", destination_db=3) is True
    assert r.copy("src", "src", destination_db=3) is True
    assert r.copy("src", "src", destination_db=3) is False
    assert r.copy("src", "src", destination_db=3, replace=True) is True
    r3 = server.client(db=3)
    assert sorted(r3.keys("*")) == ["dst", "src"]
    assert r3.get("dst") == "v2"
    assert r3.ttl("dst") == -1
    with raises_exact("ERR source and destination objects are the same"):
        r.copy("src", "src")
    with raises_exact("ERR DB index is out of range"):
        r.cmd("COPY", "src", "x", "DB", "16")
    with raises_exact("ERR DB index is out of range"):
        r.cmd("COPY", "src", "x", "DB", "-1")
    with raises_exact(NOT_INT):
        r.cmd("COPY", "src", "x", "DB", "one")
    with raises_exact(SYNTAX):
        r.cmd("COPY", "src", "x", "FOO")


def test_copy_is_independent(r):
    r.set("a", "hello")
    r.copy("a", "b")
    r.append("b", " world")
    r.setrange("a", 0, "J")
    assert r.get("a") == "Jello"
    assert r.get("b") == "hello world"


def test_object_encoding(r):
    r.set("int", "12345")
    r.set("neg", "-7")
    r.set("embstr", "hello")
    r.set("lead0", "0123")
    r.set("bigint", "123456789012345678901234567890")
    r.set("raw", "x" * 100)
    r.set("edge44", "y" * 44)
    r.set("edge45", "y" * 45)
    assert r.object("encoding", "int") == "int"
    assert r.object("encoding", "neg") == "int"
    assert r.object("encoding", "embstr") == "embstr"
    assert r.object("encoding", "lead0") == "embstr"
    assert r.object("encoding", "bigint") == "embstr"
    assert r.object("encoding", "raw") == "raw"
    assert r.object("encoding", "edge44") == "embstr"
    assert r.object("encoding", "edge45") == "raw"
    r.incr("int")
    assert r.object("encoding", "int") == "int"
    assert r.object("encoding", "nokey") is None
    with raises_exact("ERR unknown subcommand 'foo'. Try OBJECT HELP."):
        r.cmd("OBJECT", "foo", "int")
    with raises_exact("ERR wrong number of arguments for 'object|encoding' command"):
        r.cmd("OBJECT", "ENCODING")


LFU_ERR = ("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
           "note that when switching between policies at runtime LRU and LFU data will take "
           "some time to adjust.")
LRU_ERR = ("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that "
           "when switching between policies at runtime LRU and LFU data will take some time to "
           "adjust.")


def test_object_freq_idletime(r):
    old = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.set("k", "v")
        with raises_exact(LFU_ERR):
            r.object("freq", "k")
        idle = r.object("idletime", "k")
        assert isinstance(idle, int) and 0 <= idle <= 2
        r.config_set("maxmemory-policy", "allkeys-lfu")
        r.set("f", "v")
        for _ in range(10):
            r.get("f")
        freq = r.object("freq", "f")
        assert isinstance(freq, int) and freq >= 1
        with raises_exact(LRU_ERR):
            r.object("idletime", "f")
    finally:
        r.config_set("maxmemory-policy", old)


def test_object_idletime_grows(r):
    old = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.set("k", "v")
        time.sleep(2.1)
        assert r.object("idletime", "k") >= 1
        r.get("k")
        assert r.object("idletime", "k") <= 1
    finally:
        r.config_set("maxmemory-policy", old)
