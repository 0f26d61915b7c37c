"""A blocked XREAD woken by writes, against redis-server 7.0: an XADD whose entry is trimmed
away at once (MAXLEN 0) still serves the reader (the stream with no entries), while XDEL,
XTRIM and DEL leave it blocked until its timeout."""
import threading
import time

import pytest

from conftest import call

CASES = [("XADD", "s", "MAXLEN", "0", "*", "f", "v"), ("XDEL", "s", "1-1"),
         ("XTRIM", "s", "MAXLEN", "0"), ("DEL", "s"), ("XADD", "s", "*", "f", "v")]


@pytest.mark.parametrize("cmd", CASES)
def test_blocked_xread_woken_as_redis(tc_server, redis_server, cmd):
    out = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        call(c, "FLUSHALL")
        call(c, "XADD", "s", "1-1", "a", "1")
        got = []
        reader = srv.client(socket_timeout=10)
        t = threading.Thread(target=lambda: got.append(
            call(reader, "XREAD", "BLOCK", "600", "STREAMS", "s", "$")))
        t.start()
        time.sleep(0.2)
        call(c, *cmd)
        t.join(10)
        r = got[0]
        if cmd[-2:] == ("f", "v") and cmd[2] == "*" and isinstance(r, list) and r and r[0][1]:
            r = [[r[0][0], [[b"<id>", e[1]] for e in r[0][1]]]]
        out.append(r)
    assert out[0] == out[1]
