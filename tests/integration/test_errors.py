"""Exact Redis 7 error texts: wrong type, wrong arity, unknown command, non-integer argument,
syntax error. Clients match on these strings, so they must be byte-for-byte Redis's."""

import pytest

from itutil import call_error, raises_exact, skip_if_unknown, unknown_command_error
from resp import Error, encode

pytestmark = pytest.mark.sanitize

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "ERR value is not an integer or out of range"
SYNTAX = "ERR syntax error"


def arity(name):
    return "ERR wrong number of arguments for '%s' command" % name


@pytest.fixture
def listkey(r):
    """A key holding a list. The list family may not exist yet in twincache's first version:
    then the WRONGTYPE tests skip (and only then)."""
    skip_if_unknown(r, "LPUSH", "lst", "a", "b")
    return "lst"


@pytest.mark.parametrize("cmd", [
    ["GET", "lst"],
    ["GETSET", "lst", "v"],
    ["GETDEL", "lst"],
    ["GETEX", "lst"],
    ["GETEX", "lst", "EX", "100"],
    ["SET", "lst", "v", "GET"],
    ["INCR", "lst"],
    ["DECR", "lst"],
    ["INCRBY", "lst", "1"],
    ["DECRBY", "lst", "1"],
    ["INCRBYFLOAT", "lst", "1.5"],
    ["APPEND", "lst", "x"],
    ["STRLEN", "lst"],
    ["GETRANGE", "lst", "0", "-1"],
    ["SETRANGE", "lst", "0", "x"],
])
def test_wrongtype(r, listkey, cmd):
    with raises_exact(WRONGTYPE):
        r.cmd(*cmd)
    # the list is untouched
    assert r.type("lst") == "list"
    assert r.ttl("lst") == -1
    assert r.cmd("LLEN", "lst") == 2


def test_wrongtype_non_errors(r, listkey):
    """Commands that work on any type, or treat another type as absent."""
    assert r.mget("lst", "nokey") == [None, None]
    assert r.exists("lst") == 1
    assert r.type("lst") == "list"
    assert r.setnx("lst", "v") is False
    assert r.msetnx({"lst": "v", "other": "v"}) is False
    assert r.expire("lst", 100) is True and r.ttl("lst") > 0
    assert r.persist("lst") is True
    assert r.copy("lst", "lst2") is True and r.type("lst2") == "list"
    assert r.rename("lst2", "lst3") is True and r.type("lst3") == "list"
    assert sorted(r.keys("lst*")) == ["lst", "lst3"]
    assert set(r.scan_iter(_type="list")) == {"lst", "lst3"}
    assert r.exists("other") == 0
    assert list(r.scan_iter(_type="string")) == []
    assert r.memory_usage("lst") > 0
    assert r.delete("lst3") == 1
    # SET without GET and MSET simply replace the value whatever its type
    assert r.set("lst", "now a string") is True
    assert r.type("lst") == "string"
    skip_if_unknown(r, "LPUSH", "lst4", "a")
    assert r.mset({"lst4": "s"}) is True and r.get("lst4") == "s"


@pytest.mark.parametrize("cmd,name", [
    (["GET"], "get"), (["GET", "a", "b"], "get"), (["get"], "get"), (["gEt"], "get"),
    (["SET", "k"], "set"), (["SET"], "set"), (["SETNX", "k"], "setnx"),
    (["SETEX", "k", "10"], "setex"), (["PSETEX", "k", "10"], "psetex"),
    (["GETSET", "k"], "getset"), (["GETDEL"], "getdel"), (["GETDEL", "a", "b"], "getdel"),
    (["GETEX"], "getex"), (["MGET"], "mget"), (["MSET"], "mset"), (["MSET", "k"], "mset"),
    (["MSET", "a", "1", "b"], "mset"), (["MSETNX", "k"], "msetnx"),
    (["INCR"], "incr"), (["INCR", "a", "b"], "incr"), (["DECR"], "decr"),
    (["INCRBY", "k"], "incrby"), (["DECRBY", "k"], "decrby"),
    (["INCRBYFLOAT", "k"], "incrbyfloat"), (["APPEND", "k"], "append"),
    (["STRLEN"], "strlen"), (["GETRANGE", "k", "0"], "getrange"),
    (["SETRANGE", "k", "0"], "setrange"),
    (["DEL"], "del"), (["UNLINK"], "unlink"), (["EXISTS"], "exists"), (["TYPE"], "type"),
    (["EXPIRE", "k"], "expire"), (["PEXPIRE", "k"], "pexpire"),
    (["EXPIREAT", "k"], "expireat"), (["PEXPIREAT", "k"], "pexpireat"),
    (["EXPIRETIME"], "expiretime"), (["PEXPIRETIME"], "pexpiretime"),
    (["TTL"], "ttl"), (["PTTL", "a", "b"], "pttl"), (["PERSIST"], "persist"),
    (["RENAME", "k"], "rename"), (["RENAMENX", "k"], "renamenx"), (["KEYS"], "keys"),
    (["SCAN"], "scan"), (["RANDOMKEY", "x"], "randomkey"), (["TOUCH"], "touch"),
    (["COPY", "k"], "copy"), (["ECHO"], "echo"), (["PING", "a", "b"], "ping"),
    (["SELECT"], "select"), (["DBSIZE", "x"], "dbsize"), (["TIME", "x"], "time"),
    (["AUTH"], "auth"), (["RESET", "x"], "reset"),
    (["OBJECT", "ENCODING"], "object|encoding"), (["CONFIG", "GET"], "config|get"),
    (["CONFIG", "SET", "port"], "config|set"), (["CONFIG", "RESETSTAT", "x"], "config|resetstat"),
    (["CLIENT", "SETNAME"], "client|setname"), (["CLIENT", "ID", "x"], "client|id"),
    (["CLIENT", "GETNAME", "x"], "client|getname"), (["MEMORY", "USAGE"], "memory|usage"),
    (["SLOWLOG", "LEN", "x"], "slowlog|len"), (["COMMAND", "COUNT", "x"], "command|count"),
    (["OBJECT"], "object"), (["CONFIG"], "config"), (["CLIENT"], "client"),
])
def test_wrong_arity(r, cmd, name):
    r.set("k", "v")
    with raises_exact(arity(name)):
        r.cmd(*cmd)
    assert r.get("k") == "v"


@pytest.mark.parametrize("cmd", [
    ["foo"],
    ["foo", "a", "b"],
    ["FOO", "a"],
    ["GETT", "k"],
    ["foo", "x" * 200, "b"],
    ["foo"] + ["arg%02d" % i for i in range(40)],
    ["f" * 200, "a"],
    ["foo", ""],
])
def test_unknown_command(r, cmd):
    with raises_exact(unknown_command_error(cmd[0], *cmd[1:])):
        r.cmd(*cmd)
    assert r.ping()


def test_unknown_command_texts_exactly(raw):
    """The wire bytes for the examples in the brief, including Redis 7's trailing space."""
    c = raw()
    c.send(encode("foo", "a", "b"))
    want = b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"
    assert c.read_raw(len(want)) == want
    c.send(b"foo\r\n")
    want = b"-ERR unknown command 'foo', with args beginning with: \r\n"
    assert c.read_raw(len(want)) == want
    c.send(encode(""))
    want = b"-ERR unknown command '', with args beginning with: \r\n"
    assert c.read_raw(len(want)) == want
    c.send(b"*2\r\n$3\r\nfoo\r\n$4\r\na\r\nb\r\n")  # a CRLF inside an argument is not echoed raw
    reply = c.read_reply()
    assert isinstance(reply, Error) and reply.startswith("ERR unknown command 'foo'")
    assert c.call("PING") == "PONG"


@pytest.mark.parametrize("cmd", [
    ["INCRBY", "k", "abc"], ["INCRBY", "k", "1.5"], ["INCRBY", "k", ""],
    ["INCRBY", "k", "9223372036854775808"], ["INCRBY", "k", " 1"], ["DECRBY", "k", "x"],
    ["SETEX", "k", "abc", "v"], ["PSETEX", "k", "1.0", "v"], ["EXPIRE", "k", "abc"],
    ["PEXPIRE", "k", "1e3"], ["EXPIREAT", "k", "x"], ["PEXPIREAT", "k", "x"],
    ["GETRANGE", "k", "a", "1"], ["GETRANGE", "k", "0", "b"], ["SETRANGE", "k", "a", "v"],
    ["SELECT", "a"], ["SELECT", "1.0"], ["SCAN", "0", "COUNT", "a"], ["COPY", "k", "d", "DB", "x"],
    ["SET", "k", "v", "EX", "a"], ["SET", "k", "v", "PX", "1.5"], ["GETEX", "k", "PX", "a"],
    ["INCR", "int-holder-that-is-a-word"],
])
def test_not_an_integer(r, cmd):
    r.set("k", "1")
    r.set("int-holder-that-is-a-word", "word")
    with raises_exact(NOT_INT):
        r.cmd(*cmd)
    assert r.get("k") == "1"


@pytest.mark.parametrize("cmd", [
    ["SET", "k", "v", "FOO"], ["SET", "k", "v", "NX", "XX"], ["SET", "k", "v", "EX"],
    ["SET", "k", "v", "EX", "10", "PX", "10"], ["SET", "k", "v", "KEEPTTL", "EX", "1"],
    ["GETEX", "k", "FOO"], ["GETEX", "k", "EX", "1", "PERSIST"], ["SCAN", "0", "FOO", "x"],
    ["SCAN", "0", "COUNT", "0"], ["SCAN", "0", "MATCH"], ["COPY", "k", "d", "FOO"],
    ["FLUSHALL", "FOO"], ["FLUSHDB", "FOO"], ["FLUSHDB", "SYNC", "ASYNC"], ["SHUTDOWN", "FOO"],
    ["MEMORY", "USAGE", "k", "FOO"], ["AUTH", "a", "b", "c"],
])
def test_syntax_error(r, cmd):
    r.set("k", "1")
    with raises_exact(SYNTAX):
        r.cmd(*cmd)
    assert r.get("k") == "1"
    assert r.ping()


def test_errors_keep_the_connection_usable(raw):
    c = raw()
    c.send(encode("GET") + encode("nosuch", "x") + encode("INCRBY", "k", "x") +
           encode("SET", "k", "v", "FOO") + encode("PING"))
    assert c.read_reply() == arity("get")
    assert c.read_reply() == unknown_command_error("nosuch", "x")
    assert c.read_reply() == NOT_INT
    assert c.read_reply() == SYNTAX
    assert c.read_reply() == "PONG"


def test_call_error_helper_detects_success(r):
    # guard for the helper itself: a command that succeeds is not an error
    with pytest.raises(AssertionError):
        call_error(r, "PING")
    assert call_error(r, "GET") == arity("get")
