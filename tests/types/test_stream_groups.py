"""Stream consumer groups (XGROUP XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO), compared
with redis-server 7.0 reply by reply. Idle times and delivery times depend on the clock, so
they are masked where they appear; everything else (PEL contents, delivery counts, owners,
entries-read, lag, error texts) must be equal."""
import threading
import time

import pytest
import redis

from conftest import call


def fill(d, key="s", n=5):
    for i in range(1, n + 1):
        d("XADD", key, "%d-1" % i, "f", str(i))


def masked_pending(rows):
    """XPENDING extended rows with the idle time (3rd field) masked."""
    if not isinstance(rows, list):
        return rows
    return [[r[0], r[1], "idle", r[3]] for r in rows]


def pend(d, *args):
    a, b = call(d.tc, "XPENDING", *args), call(d.rs, "XPENDING", *args)
    assert masked_pending(a) == masked_pending(b), (args, a, b)
    return a


def kv(reply):
    """A RESP2 flat map as a dict."""
    return dict(zip(reply[::2], reply[1::2]))


def consumers(d, key, group):
    a, b = call(d.tc, "XINFO", "CONSUMERS", key, group), call(d.rs, "XINFO", "CONSUMERS", key, group)
    if isinstance(a, list) and isinstance(b, list):
        a = [{k: v for k, v in kv(x).items() if k != b"idle"} for x in a]
        b = [{k: v for k, v in kv(x).items() if k != b"idle"} for x in b]
    assert a == b, (a, b)
    return a


def test_xgroup_create_and_errors(d):
    d("XGROUP", "CREATE", "s", "g", "$")
    d("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    d("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    d("EXISTS", "s")
    d("TYPE", "s")
    d("XLEN", "s")
    d("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "x")
    d("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "-5")
    d("XGROUP", "CREATE", "s", "g2", "0", "ENTRIESREAD", "-1")
    d("XGROUP", "CREATE", "s", "g3", "0", "foo")
    d("XGROUP", "CREATE", "s", "g3", "x")
    d("XGROUP", "CREATE", "s", "g3", "-")
    d("XGROUP", "CREATE", "s", "g3", "+")
    d("XGROUP", "CREATE", "s", "g3", "0", "ENTRIESREAD")
    d("XGROUP", "CREATE", "s", "g4", "5-5", "ENTRIESREAD", "3", "MKSTREAM")
    d("XGROUP", "CREATE", "s", "g5", "0", "MKSTREAM", "MKSTREAM")
    d("XGROUP", "CREATE", "s", "g6", "0", "MKSTREAM", "MKSTREAM", "MKSTREAM", "MKSTREAM")
    d("XGROUP", "SETID", "s", "nog", "0")
    d("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "5", "x")
    d("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-2")
    d("XGROUP", "SETID", "s", "g", "x")
    d("XGROUP", "SETID", "s", "g", "-")
    d("XGROUP", "SETID", "s", "g", "0", "foo")
    d("XGROUP", "SETID", "s", "g", "7-7", "ENTRIESREAD", "2")
    d("XGROUP", "CREATECONSUMER", "s", "g", "c")
    d("XGROUP", "CREATECONSUMER", "s", "g", "c")
    d("XGROUP", "CREATECONSUMER", "s", "g", "b")
    d("XGROUP", "CREATECONSUMER", "s", "nog", "c")
    d("XGROUP", "DELCONSUMER", "s", "g", "c")
    d("XGROUP", "DELCONSUMER", "s", "g", "zz")
    d("XGROUP", "DELCONSUMER", "s", "nog", "zz")
    d("XINFO", "GROUPS", "s")
    d("XGROUP", "DESTROY", "s", "g2")
    d("XGROUP", "DESTROY", "s", "g2")
    d("XGROUP", "DESTROY", "nokey", "g2")
    d("XGROUP", "FOO", "s")
    d("XGROUP", "HELP")
    d("XGROUP")
    d("XGROUP", "CREATE")
    d("XGROUP", "CREATE", "s")
    d("XGROUP", "CREATE", "s", "g")
    d("XGROUP", "CREATE", "s", "g", "0", "1", "2", "3", "4")
    d("XGROUP", "DESTROY", "s")
    d("XGROUP", "DESTROY", "s", "g", "x")
    d("XGROUP", "SETID", "nokey", "g", "0")
    d("XGROUP", "CREATECONSUMER", "nokey", "g", "c")
    d("XGROUP", "CREATE", "nokey", "g", "0")
    d("SET", "str", "x")
    d("XGROUP", "CREATE", "str", "g", "0")
    d("XGROUP", "CREATE", "str", "g", "0", "MKSTREAM")
    d("XGROUP", "DESTROY", "str", "g")
    d("XINFO", "GROUPS", "s")


def test_xreadgroup_delivery_and_pel(d):
    fill(d, n=6)
    d("XGROUP", "CREATE", "s", "g", "0")
    d("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    d("XPENDING", "s", "g")
    pend(d, "s", "g", "-", "+", "10")
    pend(d, "s", "g", "-", "+", "10", "bob")
    pend(d, "s", "g", "-", "+", "10", "nobody")
    pend(d, "s", "g", "(2-1", "(5-1", "10")
    pend(d, "s", "g", "-", "+", "2")
    pend(d, "s", "g", "-", "+", "0")
    pend(d, "s", "g", "-", "+", "-3")
    pend(d, "s", "g", "IDLE", "0", "-", "+", "10")
    pend(d, "s", "g", "IDLE", "100000", "-", "+", "10")
    # history: the consumer's own pending entries after the ID; delivery counts grow
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    d("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", "1-1")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "3-1")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "18446744073709551615-18446744073709551615")
    d("XREADGROUP", "GROUP", "g", "nobody", "STREAMS", "s", "0")
    pend(d, "s", "g", "-", "+", "10")
    # a pending entry deleted from the stream comes back as the ID with a nil field list
    d("XDEL", "s", "2-1")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    pend(d, "s", "g", "-", "+", "10")
    # acknowledgements
    d("XACK", "s", "g", "1-1", "3-1", "99-1")
    d("XACK", "s", "g", "1-1")
    d("XACK", "s", "g", "x")
    d("XACK", "s", "g", "4-1", "x")
    d("XACK", "s", "nog", "1-1")
    d("XACK", "nokey", "g", "x")
    d("XPENDING", "s", "g")
    consumers(d, "s", "g")
    d("XINFO", "GROUPS", "s")
    # NOACK: delivered, not pending
    d("XADD", "s", "7-1", "f", "7")
    d("XREADGROUP", "GROUP", "g", "carol", "NOACK", "STREAMS", "s", ">")
    d("XPENDING", "s", "g")
    consumers(d, "s", "g")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")


def test_xreadgroup_multi_and_errors(d):
    fill(d, "a", 3)
    fill(d, "b", 2)
    d("XGROUP", "CREATE", "a", "g", "0")
    d("XGROUP", "CREATE", "b", "g", "$")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "0", ">")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "0", "0")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "nokey", ">", ">")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "$")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "x")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "-")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "a", ">")
    d("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "a", ">")
    d("XREADGROUP", "GROUP", "g", "c", "BLOCK", "x", "STREAMS", "a", ">")
    d("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", "a", ">")
    d("XREADGROUP", "COUNT", "1", "BLOCK", "1", "STREAMS", "a", ">")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a")
    d("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "a", ">")
    d("XREAD", "STREAMS", "a", ">")
    d("XREAD", "GROUP", "g", "c", "STREAMS", "a", "0")
    d("XREAD", "NOACK", "STREAMS", "a", "0")
    d("XREAD", "STREAMS", "a", "-")
    d("SET", "str", "x")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "0", "STREAMS", "a", "0")
    d("XPENDING", "a", "g")
    d("XPENDING", "b", "g")
    # nothing new: a null reply, and no consumer is created
    d("XREADGROUP", "GROUP", "g", "newc", "STREAMS", "a", ">")
    consumers(d, "a", "g")


def test_xpending_errors(d):
    d("XPENDING", "s", "g")
    fill(d, n=2)
    d("XGROUP", "CREATE", "s", "g", "0")
    for args in [("-", "+", "x"), ("-", "+"), ("IDLE", "x", "-", "+", "10"),
                 ("IDLE", "5", "-", "+"), ("x", "+", "10"), ("-", "(1", "10"),
                 ("(18446744073709551615-18446744073709551615", "+", "10"),
                 ("-", "(0-0", "10"), ("-", "+", "10", "c", "extra"),
                 ("-", "+", "10", "c", "extra", "more", "andmore"), ("a",), ("a", "b", "c"),
                 ("IDLE", "-5", "-", "+", "10")]:
        d("XPENDING", "s", "g", *args)
    d("XPENDING", "s", "nog")
    d("XPENDING", "s", "nog", "-", "+", "10")
    d("XPENDING", "s")
    d("SET", "str", "x")
    d("XPENDING", "str", "g")


def test_xclaim(d):
    fill(d, n=6)
    d("XGROUP", "CREATE", "s", "g", "0")
    d("XREADGROUP", "GROUP", "g", "alice", "COUNT", "4", "STREAMS", "s", ">")
    d("XCLAIM", "s", "g", "bob", "0", "1-1", "2-1")
    d("XCLAIM", "s", "g", "bob", "3600000", "3-1")
    d("XCLAIM", "s", "g", "bob", "0", "3-1", "JUSTID")
    d("XCLAIM", "s", "g", "bob", "0", "4-1", "RETRYCOUNT", "7")
    d("XCLAIM", "s", "g", "bob", "0", "4-1", "IDLE", "5000", "JUSTID")
    pend(d, "s", "g", "-", "+", "10")
    # not pending: only FORCE creates it (and ignores min-idle-time)
    d("XCLAIM", "s", "g", "bob", "0", "5-1")
    d("XCLAIM", "s", "g", "carol", "3600000", "5-1", "FORCE")
    d("XCLAIM", "s", "g", "carol", "0", "99-1", "FORCE")
    d("XCLAIM", "s", "g", "carol", "0", "6-1", "FORCE", "JUSTID", "RETRYCOUNT", "3",
      "LASTID", "6-1")
    d("XCLAIM", "s", "g", "carol", "0", "1-1", "1-1")
    pend(d, "s", "g", "-", "+", "10")
    d("XINFO", "GROUPS", "s")
    d("XCLAIM", "s", "g", "dave", "0", "1-1", "LASTID", "10-1")
    d("XINFO", "GROUPS", "s")
    d("XCLAIM", "s", "g", "dave", "0", "1-1", "TIME", "1000")
    pend(d, "s", "g", "-", "+", "10")
    # a pending entry whose stream entry is gone is dropped by XCLAIM
    d("XDEL", "s", "2-1")
    d("XCLAIM", "s", "g", "dave", "0", "2-1")
    pend(d, "s", "g", "-", "+", "10")
    consumers(d, "s", "g")
    # errors
    for args in [("x", "1"), ("-5", "1"), ("0", "1", "IDLE", "x"), ("0", "1", "TIME", "x"),
                 ("0", "1", "RETRYCOUNT", "x"), ("0", "1", "RETRYCOUNT", "-1"),
                 ("0", "1", "FOO"), ("0", "x"), ("0", "1", "IDLE"), ("0", "1", "LASTID", "x"),
                 ("0", "1", "LASTID", "-"), ("0", "-"), ("0", "1-1", "2-x")]:
        d("XCLAIM", "s", "g", "eve", *args)
    d("XCLAIM", "s", "nog", "eve", "0", "1")
    d("XCLAIM", "nokey", "g", "eve", "x", "1")
    d("XCLAIM", "s", "g", "eve", "0")
    d("SET", "str", "x")
    d("XCLAIM", "str", "g", "eve", "0", "1")
    pend(d, "s", "g", "-", "+", "10")


def test_xautoclaim(d):
    fill(d, n=8)
    d("XGROUP", "CREATE", "s", "g", "0")
    d("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    d("XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "3")
    d("XAUTOCLAIM", "s", "g", "bob", "0", "(3-1", "COUNT", "2", "JUSTID")
    d("XAUTOCLAIM", "s", "g", "bob", "3600000", "0")
    d("XDEL", "s", "6-1", "7-1")
    d("XAUTOCLAIM", "s", "g", "carol", "0", "5-1", "COUNT", "2")
    d("XAUTOCLAIM", "s", "g", "carol", "0", "0")
    d("XAUTOCLAIM", "s", "g", "carol", "0", "-")
    d("XAUTOCLAIM", "s", "g", "carol", "-1", "9-1")
    pend(d, "s", "g", "-", "+", "10")
    consumers(d, "s", "g")
    for args in [("0", "0", "COUNT", "0"), ("0", "0", "COUNT", "x"), ("0", "x"),
                 ("0", "0", "FOO"), ("x", "0"), ("0", "0", "COUNT", "-1"),
                 ("0", "0", "COUNT", "9223372036854775807"), ("0", "0", "COUNT"),
                 ("0", "(18446744073709551615-18446744073709551615")]:
        d("XAUTOCLAIM", "s", "g", "x", *args)
    d("XAUTOCLAIM", "s", "nog", "x", "0", "0")
    d("XAUTOCLAIM", "nokey", "g", "x", "0", "0")
    d("XAUTOCLAIM", "nokey", "g", "x", "0", "x")
    d("XAUTOCLAIM", "s", "g", "x", "0")
    d("SET", "str", "x")
    d("XAUTOCLAIM", "str", "g", "x", "0", "0")


def test_xautoclaim_attempts_bound(d):
    # COUNT 1 looks at most 10 entries; the cursor says where to go on
    for i in range(1, 31):
        d("XADD", "s", "%d-1" % i, "f", str(i))
    d("XGROUP", "CREATE", "s", "g", "0")
    d("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    d("XAUTOCLAIM", "s", "g", "b", "3600000", "0", "COUNT", "1")
    d("XAUTOCLAIM", "s", "g", "b", "3600000", "11-1", "COUNT", "2", "JUSTID")
    for i in range(1, 30, 2):
        d("XDEL", "s", "%d-1" % i)
    d("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "4", "JUSTID")
    d("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "100", "JUSTID")
    d("XPENDING", "s", "g")


def test_xinfo(d):
    d("XINFO", "STREAM", "s")
    d("XINFO", "GROUPS", "s")
    d("XINFO", "CONSUMERS", "s", "g")
    d("XINFO", "FOO", "s")
    d("XINFO", "HELP")
    d("XINFO")
    d("XINFO", "GROUPS", "s", "x")
    d("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    d("XINFO", "STREAM", "s")
    fill(d, n=4)
    d("XGROUP", "CREATE", "s", "a", "0")
    d("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "a", "c2", "STREAMS", "s", ">")
    d("XINFO", "GROUPS", "s")
    consumers(d, "s", "g")
    consumers(d, "s", "a")
    d("XINFO", "CONSUMERS", "s", "nog")
    d("XINFO", "STREAM", "s", "FULL", "COUNT", "x")
    d("XINFO", "STREAM", "s", "FOO")
    d("XINFO", "STREAM", "s", "FULL", "FOO", "1")
    d("XINFO", "STREAM", "s", "FULL", "COUNT")
    a, b = call(d.tc, "XINFO", "STREAM", "s"), call(d.rs, "XINFO", "STREAM", "s")
    a, b = kv(a), kv(b)
    for f in (b"length", b"last-generated-id", b"max-deleted-entry-id", b"entries-added",
              b"recorded-first-entry-id", b"groups", b"first-entry", b"last-entry"):
        assert a[f] == b[f], (f, a[f], b[f])
    a, b = call(d.tc, "XINFO", "STREAM", "s", "FULL"), call(d.rs, "XINFO", "STREAM", "s", "FULL")
    a, b = kv(a), kv(b)
    assert a[b"entries"] == b[b"entries"]
    ga, gb = [kv(x) for x in a[b"groups"]], [kv(x) for x in b[b"groups"]]
    assert len(ga) == len(gb) == 2
    for x, y in zip(ga, gb):
        for f in (b"name", b"last-delivered-id", b"entries-read", b"lag", b"pel-count"):
            assert x[f] == y[f], (f, x[f], y[f])
        assert [[p[0], p[1], p[3]] for p in x[b"pending"]] == \
            [[p[0], p[1], p[3]] for p in y[b"pending"]]
        ca, cb = [kv(q) for q in x[b"consumers"]], [kv(q) for q in y[b"consumers"]]
        assert [(q[b"name"], q[b"pel-count"]) for q in ca] == \
            [(q[b"name"], q[b"pel-count"]) for q in cb]
    d("SET", "str", "x")
    d("XINFO", "STREAM", "str")
    d("XINFO", "GROUPS", "str")


def test_lag_and_entries_read(d):
    """entries-read and lag follow Redis's bookkeeping through deletions and trims."""
    fill(d, n=5)
    d("XGROUP", "CREATE", "s", "g", "0")
    d("XGROUP", "CREATE", "s", "h", "$")
    d("XGROUP", "CREATE", "s", "k", "3-1")
    d("XGROUP", "CREATE", "s", "m", "0", "ENTRIESREAD", "2")
    d("XINFO", "GROUPS", "s")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    d("XINFO", "GROUPS", "s")
    d("XDEL", "s", "4-1")
    d("XINFO", "GROUPS", "s")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "k", "c", "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "m", "c", "COUNT", "1", "STREAMS", "s", ">")
    d("XINFO", "GROUPS", "s")
    d("XADD", "s", "6-1", "f", "6")
    d("XINFO", "GROUPS", "s")
    d("XTRIM", "s", "MAXLEN", "1")
    d("XINFO", "GROUPS", "s")
    d("XREADGROUP", "GROUP", "h", "c", "STREAMS", "s", ">")
    d("XINFO", "GROUPS", "s")
    d("XGROUP", "SETID", "s", "g", "0")
    d("XINFO", "GROUPS", "s")
    d("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "6")
    d("XINFO", "GROUPS", "s")
    d("XDEL", "s", "6-1")
    d("XINFO", "GROUPS", "s")
    d("XINFO", "STREAM", "s")


def test_del_and_overwrite_free_groups(d):
    fill(d, n=3)
    d("XGROUP", "CREATE", "s", "g", "0")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    d("DEL", "s")
    d("XINFO", "GROUPS", "s")
    d("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    d("XINFO", "GROUPS", "s")
    d("XPENDING", "s", "g")
    d("SET", "s", "x")
    d("XPENDING", "s", "g")
    d("DEL", "s")
    d("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    d("UNLINK", "s")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    # COPY copies the groups and their PEL
    fill(d, "src", 2)
    d("XGROUP", "CREATE", "src", "g", "0")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", "src", ">")
    d("COPY", "src", "dst")
    d("XACK", "src", "g", "1-1")
    d("XPENDING", "dst", "g")
    d("XPENDING", "src", "g")
    d("XINFO", "GROUPS", "dst")


def test_resp3_shapes(tc_server, redis_server):
    from test_resp3 import Raw
    replies = []
    for srv in (tc_server, redis_server):
        c = Raw(srv.port)
        c.send("FLUSHALL")
        c.send("HELLO", "3")
        c.send("XADD", "s", "1-1", "f", "v")
        c.send("XGROUP", "CREATE", "s", "g", "0")
        out = [c.send("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
               c.send("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"),
               c.send("XINFO", "GROUPS", "s"),
               c.send("XPENDING", "s", "g"),
               c.send("XDEL", "s", "1-1"),
               c.send("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"),
               c.send("XAUTOCLAIM", "s", "g", "d", "0", "0"),
               c.send("XGROUP", "CREATE", "e", "g", "0", "MKSTREAM"),
               c.send("XPENDING", "e", "g"),
               c.send("XINFO", "STREAM", "e")]
        replies.append(out)
        c.s.close()
    assert replies[0] == replies[1]


def test_hostile_arguments(d):
    fill(d, n=3)
    d("XGROUP", "CREATE", "s", "g", "0")
    big = "9" * 40
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", big, "STREAMS", "s", ">")
    d("XREADGROUP", "GROUP", "g", "c", "COUNT", "9223372036854775807", "STREAMS", "s", "0")
    d("XREADGROUP", "GROUP", "g", "c", "BLOCK", big, "STREAMS", "s", ">")
    d("XPENDING", "s", "g", "-", "+", "9223372036854775807")
    d("XPENDING", "s", "g", "IDLE", "-9223372036854775808", "-", "+", "10")
    d("XPENDING", "s", "g", "IDLE", "9223372036854775807", "-", "+", "10")
    d("XCLAIM", "s", "g", "c", "9223372036854775807", "1-1")
    d("XCLAIM", "s", "g", "c", "0", "1-1", "IDLE", "-9223372036854775808", "JUSTID")
    d("XCLAIM", "s", "g", "c", "0", "1-1", "TIME", "9223372036854775807", "JUSTID")
    d("XCLAIM", "s", "g", "c", "0", "1-1", "RETRYCOUNT", "9223372036854775807", "JUSTID")
    d("XAUTOCLAIM", "s", "g", "c", "9223372036854775807", "0", "COUNT", "1000000")
    d("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "576460752303423488")
    d("XGROUP", "CREATE", "s", "x" * 10000, "0")
    d("XGROUP", "CREATECONSUMER", "s", "g", "")
    d("XGROUP", "CREATE", "s", "", "0")
    d("XREADGROUP", "GROUP", "", "", "STREAMS", "s", ">")
    d("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "9223372036854775807")
    d("XINFO", "GROUPS", "s")
    a, b = d.both("XINFO", "STREAM", "s", "FULL", "COUNT", "-9223372036854775808")
    assert kv(a)[b"entries"] == kv(b)[b"entries"]
    ids = ["%d-%d" % (i, i) for i in range(2000)]
    d("XACK", "s", "g", *ids)
    d("XCLAIM", "s", "g", "c", "0", *ids, "JUSTID")
    d("XREADGROUP", "GROUP", "g", "c", "STREAMS", *(["s"] * 500), *([">"] * 500))
    pend(d, "s", "g", "-", "+", "100")


# ---- blocking ----

def blocked(srv, args, out):
    c = srv.client()
    try:
        out.append(c.execute_command(*args))
    except redis.exceptions.ResponseError as e:
        out.append(("error", str(e)))
    finally:
        c.connection_pool.disconnect()


def run_blocked(srv, setup, action, args=None, wait=0.3):
    c = srv.client()
    c.flushall()
    for cmd in setup:
        c.execute_command(*cmd)
    out = []
    args = args or ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "5000", "STREAMS", "s", ">")
    t = threading.Thread(target=blocked, args=(srv, args, out))
    t.start()
    time.sleep(wait)
    for cmd in action:
        c.execute_command(*cmd)
    t.join(10)
    assert not t.is_alive()
    res = out[0]
    res2 = (call(c, "XPENDING", "s", "g") if c.exists("s") and c.type("s") == b"stream"
            else None)
    c.connection_pool.disconnect()
    return res, res2


BASE = [("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")]


@pytest.mark.parametrize("action", [
    [("XADD", "s", "1-1", "a", "b")],
    [("DEL", "s")],
    [("XGROUP", "DESTROY", "s", "g")],
    [("DEL", "s"), ("SET", "s", "x")],
    [("XADD", "other", "1-1", "a", "b"), ("XADD", "s", "2-1", "a", "b")],
    [("FLUSHALL",)],
    [("FLUSHDB",)],
])
def test_xreadgroup_block_wakes(tc_server, redis_server, action):
    a = run_blocked(tc_server, BASE, action)
    b = run_blocked(redis_server, BASE, action)
    assert a == b


def test_xreadgroup_block_timeout_and_consumers(tc_server, redis_server):
    for srv in (tc_server, redis_server):
        c = srv.client()
        c.flushall()
        c.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        t0 = time.time()
        assert c.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "200",
                                 "STREAMS", "s", ">") is None
        assert time.time() - t0 >= 0.18
        # history never blocks
        assert c.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0",
                                 "STREAMS", "s", "0") == [[b"s", []]]
        c.connection_pool.disconnect()


def test_xreadgroup_block_two_groups_one_entry(tc_server):
    """Two groups and two consumers of one group wait; one XADD serves one consumer of each
    group, and the other consumer of the first group gets the next entry."""
    c = tc_server.client()
    c.flushall()
    c.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c.execute_command("XGROUP", "CREATE", "s", "h", "$")
    outs = [[], [], []]
    who = [("g", "a"), ("g", "b"), ("h", "x")]
    ts = []
    for (grp, cons), out in zip(who, outs):
        args = ("XREADGROUP", "GROUP", grp, cons, "BLOCK", "5000", "STREAMS", "s", ">")
        t = threading.Thread(target=blocked, args=(tc_server, args, out))
        t.start()
        ts.append(t)
        time.sleep(0.1)
    c.execute_command("XADD", "s", "1-1", "f", "1")
    time.sleep(0.3)
    c.execute_command("XADD", "s", "2-1", "f", "2")
    for t in ts:
        t.join(10)
        assert not t.is_alive()
    got = [o[0][0][1][0][0] for o in outs]
    assert sorted(got[:2]) == [b"1-1", b"2-1"]
    assert got[2] == b"1-1"
    assert c.execute_command("XPENDING", "s", "g")[0] == 2
    assert c.execute_command("XPENDING", "s", "h")[0] == 1
    c.connection_pool.disconnect()


def test_xreadgroup_in_multi_does_not_block(d):
    d("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    for cl in (d.tc, d.rs):
        p = cl.pipeline(transaction=True)
        p.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        p.execute_command("XADD", "s", "1-1", "a", "b")
        p.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
        assert p.execute() == [None, b"1-1", [[b"s", [[b"1-1", [b"a", b"b"]]]]]]
    d("XPENDING", "s", "g")


@pytest.mark.parametrize("seed", range(6))
def test_random_group_ops(d, seed):
    """Random XADD/XDEL/XTRIM/XGROUP/XREADGROUP/XACK/XCLAIM/XAUTOCLAIM sequences: every reply
    and the groups' state (XINFO GROUPS, XPENDING) equal Redis's after each step."""
    import random
    rnd = random.Random(seed)
    groups, cons = ["g1", "g2", "g3"], ["a", "b", "c"]
    nid = [1]

    def some_id():
        return "%d-%d" % (rnd.randint(0, nid[0] + 1), rnd.randint(0, 2))

    d("XGROUP", "CREATE", "s", "g1", "0", "MKSTREAM")
    for step in range(150):
        op = rnd.randrange(12)
        if op < 3:
            nid[0] += rnd.randint(0, 2)
            d("XADD", "s", "%d-*" % nid[0], "f", str(step))
        elif op == 3:
            d("XDEL", "s", *[some_id() for _ in range(rnd.randint(1, 3))])
        elif op == 4:
            if rnd.random() < 0.5:
                d("XTRIM", "s", "MAXLEN", rnd.randint(0, 8))
            else:
                d("XTRIM", "s", "MINID", some_id())
        elif op == 5:
            g = rnd.choice(groups)
            d("XGROUP", rnd.choice(["CREATE", "SETID"]), "s", g,
              rnd.choice(["0", "$", some_id()]), *rnd.choice([[], ["ENTRIESREAD", "3"]]))
        elif op == 6:
            d("XREADGROUP", "GROUP", rnd.choice(groups), rnd.choice(cons), "COUNT",
              rnd.randint(0, 4), *rnd.choice([[], ["NOACK"]]), "STREAMS", "s",
              rnd.choice([">", ">", "0", some_id()]))
        elif op == 7:
            d("XACK", "s", rnd.choice(groups), *[some_id() for _ in range(rnd.randint(1, 3))])
        elif op == 8:
            d("XCLAIM", "s", rnd.choice(groups), rnd.choice(cons), "0",
              *[some_id() for _ in range(rnd.randint(1, 3))],
              *rnd.choice([[], ["JUSTID"], ["FORCE"], ["RETRYCOUNT", "5"], ["LASTID", some_id()]]))
        elif op == 9:
            d("XAUTOCLAIM", "s", rnd.choice(groups), rnd.choice(cons), "0", some_id(),
              "COUNT", rnd.randint(1, 4), *rnd.choice([[], ["JUSTID"]]))
        elif op == 10:
            d("XGROUP", rnd.choice(["DELCONSUMER", "CREATECONSUMER"]), "s",
              rnd.choice(groups), rnd.choice(cons))
        else:
            d("XGROUP", "DESTROY", "s", rnd.choice(groups[1:]))
        d("XINFO", "GROUPS", "s")
        for g in groups:
            d("XPENDING", "s", g)
            pend(d, "s", g, "-", "+", "100")
    a, b = call(d.tc, "XINFO", "STREAM", "s"), call(d.rs, "XINFO", "STREAM", "s")
    a, b = kv(a), kv(b)
    for f in (b"length", b"last-generated-id", b"max-deleted-entry-id", b"entries-added",
              b"recorded-first-entry-id", b"groups", b"first-entry", b"last-entry"):
        assert a[f] == b[f], (f, a[f], b[f])


def test_xreadgroup_block_group_named_streams(tc_server, redis_server):
    setup = [("XGROUP", "CREATE", "s", "streams", "$", "MKSTREAM")]
    args = ("XREADGROUP", "GROUP", "streams", "streams", "COUNT", "5", "BLOCK", "5000",
            "STREAMS", "s", ">")
    action = [("XADD", "s", "1-1", "a", "b")]
    a = run_blocked(tc_server, setup, action, args)
    b = run_blocked(redis_server, setup, action, args)
    assert a == b
    assert a[0] == [[b"s", [[b"1-1", [b"a", b"b"]]]]]


def test_large_pel_ack_orders(d):
    """A PEL of 3000 entries over three consumers, acknowledged oldest first, newest first and
    in a shuffled order, claimed back and forth: the same PEL as Redis at each stage."""
    import random
    rnd = random.Random(7)
    for cl in (d.tc, d.rs):
        p = cl.pipeline(transaction=False)
        for i in range(1, 3001):
            p.execute_command("XADD", "s", "%d-1" % i, "f", "v")
        p.execute()
    d("XGROUP", "CREATE", "s", "g", "0")
    for c in ("a", "b", "c"):
        d("XREADGROUP", "GROUP", "g", c, "COUNT", "1000", "STREAMS", "s", ">")
    ids = ["%d-1" % i for i in range(1, 3001)]
    d("XACK", "s", "g", *ids[:500])
    d("XACK", "s", "g", *reversed(ids[2500:]))
    mid = ids[500:2500]
    rnd.shuffle(mid)
    d("XACK", "s", "g", *mid[:1000])
    d("XCLAIM", "s", "g", "b", "0", *mid[1000:1500], "JUSTID")
    d("XAUTOCLAIM", "s", "g", "a", "0", "0", "COUNT", "300", "JUSTID")
    d("XPENDING", "s", "g")
    pend(d, "s", "g", "-", "+", "5000")
    for c in ("a", "b", "c"):
        pend(d, "s", "g", "-", "+", "5000", c)
    d("XGROUP", "DELCONSUMER", "s", "g", "b")
    d("XPENDING", "s", "g")


def test_xgroup_over_maxmemory(tc_factory):
    """Under noeviction over maxmemory, XGROUP CREATE/CREATECONSUMER get -OOM (denyoom in
    Redis) and DESTROY/DELCONSUMER still run (they free memory)."""
    srv = tc_factory("--maxmemory-policy", "noeviction")
    r = srv.client()
    r.execute_command("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "c")
    # the limit a little over what the server uses now, as Redis's own maxmemory tests set it
    info_mem = r.execute_command("INFO", "memory")
    used = int(info_mem.split(b"used_memory:")[1].split(b"\r\n")[0])
    r.execute_command("CONFIG", "SET", "maxmemory", used + 200000)
    big = "x" * 10000
    for i in range(400):
        if call(r, "SET", "k%d" % i, big)[0] == "error":
            break
    oom = "OOM command not allowed when used memory > 'maxmemory'."
    assert call(r, "XGROUP", "CREATE", "s", "g2", "0") == ("error", oom)
    assert call(r, "XGROUP", "CREATECONSUMER", "s", "g", "d") == ("error", oom)
    assert call(r, "XGROUP", "DELCONSUMER", "s", "g", "c") == 0
    assert call(r, "XGROUP", "DESTROY", "s", "g") == 1


@pytest.mark.parametrize("how", ["TIMEOUT", "ERROR"])
def test_xreadgroup_client_unblock(tc_server, redis_server, how):
    res = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        c.flushall()
        c.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        b = srv.client()
        cid = b.execute_command("CLIENT", "ID")
        out = []

        def run():
            try:
                out.append(b.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0",
                                             "STREAMS", "s", ">"))
            except redis.exceptions.ResponseError as e:
                out.append(("error", str(e)))

        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.3)
        unblocked = c.execute_command("CLIENT", "UNBLOCK", cid, how)
        t.join(10)
        assert not t.is_alive()
        res.append((unblocked, out, call(c, "XINFO", "CONSUMERS", "s", "g")))
        b.connection_pool.disconnect()
        c.connection_pool.disconnect()
    assert res[0][:2] == res[1][:2]
    assert len(res[0][2]) == len(res[1][2])


@pytest.mark.parametrize("seed", range(2))
def test_fuzz_group_arguments(d, seed):
    """Random argument lists for every group command from a vocabulary of keys, IDs, numbers
    (extreme ones too) and option words: the same reply or error text as Redis (replies that
    carry times are compared by shape)."""
    import random
    rnd = random.Random(seed)
    vocab = ["s", "g", "c", "0", "$", ">", "-", "+", "1-1", "2-1", "(1-1", "COUNT", "NOACK",
             "STREAMS", "GROUP", "IDLE", "TIME", "RETRYCOUNT", "FORCE", "JUSTID", "LASTID",
             "MKSTREAM", "ENTRIESREAD", "-1", "5", "x", "", "FULL", "18446744073709551615",
             "9223372036854775807", "-9223372036854775808", "1-x", "3"]
    cmds = [["XGROUP", "CREATE"], ["XGROUP", "SETID"], ["XGROUP", "DESTROY"],
            ["XGROUP", "CREATECONSUMER"], ["XGROUP", "DELCONSUMER"], ["XGROUP"],
            ["XREADGROUP"], ["XREADGROUP", "GROUP", "g", "c"], ["XACK"], ["XPENDING"],
            ["XPENDING", "s", "g"], ["XCLAIM"], ["XCLAIM", "s", "g", "c"], ["XAUTOCLAIM"],
            ["XAUTOCLAIM", "s", "g", "c"], ["XINFO", "STREAM"], ["XINFO", "GROUPS"],
            ["XINFO", "CONSUMERS"], ["XINFO"]]
    for it in range(1500):
        if it % 50 == 0:
            for cl in (d.tc, d.rs):
                cl.flushall()
                for i in range(1, 4):
                    cl.execute_command("XADD", "s", "%d-1" % i, "f", "v")
                cl.execute_command("XGROUP", "CREATE", "s", "g", "0")
                cl.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "2",
                                   "STREAMS", "s", ">")
        args = rnd.choice(cmds) + [rnd.choice(vocab) for _ in range(rnd.randint(0, 7))]
        a, b = d.both(*args)
        if args[0] in ("XINFO", "XPENDING") and isinstance(a, list) and isinstance(b, list):
            assert len(a) == len(b), (args, a, b)
        else:
            assert a == b, (args, a, b)
