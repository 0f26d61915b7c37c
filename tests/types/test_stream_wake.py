"""A blocked XREAD woken by writes, against redis-server 7.0: an XADD whose entry is trimmed
away at once (MAXLEN 0) still serves the reader (the stream with no entries), while XDEL,
XTRIM and DEL leave it blocked until its timeout."""
import threading
import time

import pytest

from conftest import call

CASES = [("XADD", "s", "MAXLEN", "0", "*", "f", "v"), ("XDEL", "s", "1-1"),
         ("XTRIM", "s", "MAXLEN", "0"), ("DEL", "s"), ("XADD", "s", "*", "f", "v")]


def blocked_call(srv, args, meanwhile):
    """args's reply on a new connection of srv, with meanwhile() run while it blocks."""
    got = []
    reader = srv.client(socket_timeout=10)
    t = threading.Thread(target=lambda: got.append(call(reader, *args)))
    t.start()
    time.sleep(0.2)
    meanwhile()
    t.join(10)
    return got[0]


@pytest.mark.parametrize("cmd", CASES)
def test_blocked_xread_woken_as_redis(tc_server, redis_server, cmd):
    out = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        call(c, "FLUSHALL")
        call(c, "XADD", "s", "1-1", "a", "1")
        r = blocked_call(srv, ("XREAD", "BLOCK", "600", "STREAMS", "s", "$"),
                         lambda: call(c, *cmd))
        if cmd[-2:] == ("f", "v") and cmd[2] == "*" and isinstance(r, list) and r and r[0][1]:
            r = [[r[0][0], [[b"<id>", e[1]] for e in r[0][1]]]]
        out.append(r)
    assert out[0] == out[1]


def dry_stream(srv):
    """XREAD BLOCK on a stream that ran dry (its last ID past the one asked, no entry after
    it): it waits for its timeout, then a new entry serves it."""
    c = srv.client()
    call(c, "FLUSHALL")
    call(c, "XADD", "d", "666", "k", "v")
    call(c, "XDEL", "d", "666")
    call(c, "XADD", "e", "666", "f", "v")
    call(c, "XADD", "e", "667", "f", "v")
    call(c, "XDEL", "e", "667")
    out = []
    for key, last in (("d", "665"), ("e", "666")):
        t0 = time.time()
        out.append(call(c, "XREAD", "BLOCK", "100", "STREAMS", key, last))
        out.append(time.time() - t0 >= 0.09)
    return out + [blocked_call(srv, ("XREAD", "BLOCK", "0", "STREAMS", "d", "665"),
                               lambda: call(c, "XADD", "d", "667", "k", "v"))]


def test_xread_on_a_dry_stream_blocks_as_redis(tc_server, redis_server):
    got = dry_stream(tc_server)
    assert got == dry_stream(redis_server)
    assert got[:4] == [None, True, None, True]


def group_destroyed(srv):
    """XGROUP DESTROY unblocks an XREADGROUP with NOGROUP, counted in errorstats and in the
    command's failed_calls."""
    c = srv.client()
    call(c, "FLUSHALL")
    call(c, "CONFIG", "RESETSTAT")
    call(c, "XGROUP", "CREATE", "g", "grp", "$", "MKSTREAM")
    got = []
    reader = srv.client(socket_timeout=10)

    def read():
        try:
            got.append(call(reader, "XREADGROUP", "GROUP", "grp", "a", "BLOCK", "0",
                            "STREAMS", "g", ">"))
        except Exception as e:  # the error reply
            got.append(str(e))
    t = threading.Thread(target=read)
    t.start()
    time.sleep(0.2)
    call(c, "XGROUP", "DESTROY", "g", "grp")
    t.join(10)
    info = call(c, "INFO", "stats").decode() + call(c, "INFO", "errorstats").decode() + \
        call(c, "INFO", "commandstats").decode()
    lines = [l for l in info.splitlines()
             if l.startswith(("total_error_replies", "errorstat_NOGROUP"))]
    xrg = [l for l in info.splitlines() if l.startswith("cmdstat_xreadgroup")]
    return got, lines, [x.split("failed_calls=")[1] for x in xrg]


def test_group_destroyed_unblocks_with_nogroup_as_redis(tc_server, redis_server):
    got = group_destroyed(tc_server)
    assert got == group_destroyed(redis_server)
    assert got[1] == ["total_error_replies:1", "errorstat_NOGROUP:count=1"]
