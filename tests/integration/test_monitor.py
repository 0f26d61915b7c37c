"""MONITOR against redis-server 7.0: the same commands (plain, inline, in MULTI, from a Lua
script, AUTH / HELLO with redacted arguments, binary arguments, SELECT, refused and admin
commands) on both servers; the monitor's lines must match once timestamps and the client's
port are masked. Also a monitor sees commands from connections on every worker."""

import re
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tcharness  # noqa: E402
from resp import RespConn, encode  # noqa: E402

pytestmark = pytest.mark.sanitize


@pytest.fixture(scope="module")
def pair():
    tcharness.require_twincache()
    tc = tcharness.start_twincache(check=True)
    rs = tcharness.start_redis()
    yield tc, rs
    rs.stop()
    tc.stop()


COMMANDS = [
    encode("SET", "a", "1"),
    encode("SET", "bin", b"x\ny\r\t\"\\\x01\xff"),
    b"GET a\r\n",  # inline
    encode("MULTI"), encode("SET", "b", "2"), encode("GET", "b"), encode("EXEC"),
    encode("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"),
    encode("AUTH", "pw"), encode("AUTH", "user", "pw"),
    encode("HELLO", "2", "AUTH", "user", "pw"), encode("HELLO", "2"),
    encode("SELECT", "1"), encode("GET", "a"), encode("SELECT", "0"),
    encode("CONFIG", "GET", "port"), encode("NOSUCHCMD"), encode("GET"),
    encode("PING"), encode("DEL", "a", "b"),
]


def transcript(srv):
    m = RespConn(srv.host, srv.port, timeout=10)
    assert m.call("MONITOR") == "OK"
    c = RespConn(srv.host, srv.port, timeout=10)
    for cmd in COMMANDS:
        c.send(cmd)
        c.read_reply()
    c.call("ECHO", "end")
    lines = []
    while True:
        line = m._line().decode("latin-1")
        lines.append(re.sub(r"^\+\d+\.\d{6} \[(\d+) (127\.0\.0\.1:\d+|lua)\]",
                            lambda mo: "+T [%s %s]" % (mo.group(1), "lua" if mo.group(2) == "lua" else "C"),
                            line))
        if '"end"' in line:
            break
    m.close()
    c.close()
    return lines


def test_monitor_lines(pair):
    tc, rs = pair
    want = transcript(rs)
    got = transcript(tc)
    assert got == want
    assert any("[0 lua]" in x for x in got)
    assert any('"(redacted)"' in x for x in got)


def test_monitor_every_worker(pair):
    tc = pair[0]
    m = RespConn(tc.host, tc.port, timeout=10)
    assert m.call("MONITOR") == "OK"
    clients = [RespConn(tc.host, tc.port, timeout=10) for _ in range(4)]
    for i, c in enumerate(clients):
        c.call("SET", "w%d" % i, "v")
    seen = set()
    while len(seen) < 4:
        line = m._line().decode()
        mo = re.search(r'"SET" "(w\d)"', line)
        if mo:
            seen.add(mo.group(1))
    assert seen == {"w0", "w1", "w2", "w3"}
    # a closed monitor costs nothing more and breaks nothing
    m.close()
    time.sleep(0.05)
    assert clients[0].call("PING") == "PONG"
    for c in clients:
        c.close()
