"""AUTH and HELLO ... AUTH with the default user against redis-server 7.0: the same replies
and error texts (WRONGPASS, NOAUTH), user names case-sensitive, with and without requirepass."""

import pytest
import redis
from conftest import reply


CASES = [
    ("AUTH", "x"),
    ("AUTH", "default", "x"),
    ("AUTH", "DEFAULT", "x"),
    ("AUTH", "nobody", "x"),
    ("AUTH", "a", "b", "c"),
    ("AUTH", "pw"),
    ("AUTH", "default", "pw"),
    ("AUTH", "Default", "pw"),
    ("AUTH", "nobody", "pw"),
    ("HELLO", "2", "AUTH", "default", "pw"),
    ("HELLO", "2", "AUTH", "DEFAULT", "pw"),
    ("HELLO", "2", "AUTH", "default", "bad"),
    ("HELLO", "2", "AUTH", "nobody", "pw"),
    ("ACL", "WHOAMI"),
]


def per_connection(srv, args, pw):
    c = srv.client(single_connection_client=True)
    try:
        r = reply(c, *args)
        if isinstance(r, list):  # HELLO's map: only its success matters here
            r = "hello-ok"
        after = reply(c, "PING")
        return r, after
    finally:
        c.close()


@pytest.mark.parametrize("pw", ["", "pw"])
@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a))
def test_auth_same(tc_server, redis_server, pw, args):
    admins = [s.client() for s in (tc_server, redis_server)]
    try:
        for a in admins:
            a.cmd("CONFIG", "SET", "requirepass", pw)
            if pw:
                a.cmd("AUTH", pw)
        got = [per_connection(s, args, pw) for s in (tc_server, redis_server)]
        assert got[0] == got[1]
    finally:
        for a in admins:
            a.cmd("CONFIG", "SET", "requirepass", "")
            a.close()


@pytest.mark.parametrize("wrong", [b"abc", b"abc\x00", b"abc\x00deg", b"abc\x00def\x00"])
def test_binary_requirepass_same(tc_server, redis_server, wrong):
    """requirepass with a NUL byte: every byte counts (a C-string compare would let "abc" in)."""
    got = []
    for s in (tc_server, redis_server):
        a = s.client()
        try:
            a.cmd("CONFIG", "SET", "requirepass", b"abc\x00def")
            c = s.client(single_connection_client=True)
            try:
                got.append((reply(c, "AUTH", wrong), reply(c, "AUTH", b"abc\x00def"),
                            reply(c, "AUTH", "default", wrong)))
            finally:
                c.close()
        finally:
            a.cmd("AUTH", b"abc\x00def")
            a.cmd("CONFIG", "SET", "requirepass", "")
            a.close()
    assert got[0] == got[1]
    assert got[0][0][0] == "error" and got[0][1] == b"OK"


def test_unauthenticated_output_limited(tc_server):
    """A client that has not authenticated and does not read its replies is closed past 1 KiB
    of pending output (Redis's guard against NOAUTH replies piling up)."""
    import socket
    import time
    a = tc_server.client()
    a.cmd("CONFIG", "SET", "requirepass", "pw")
    s = socket.create_connection(("127.0.0.1", tc_server.port))
    try:
        s.settimeout(10)
        closed = False
        deadline = time.time() + 20
        try:
            while time.time() < deadline:
                s.sendall(b"SET x 5\r\n" * 2000)
        except socket.timeout:
            pass  # the server stopped reading but kept the connection
        except OSError:
            closed = True
        assert closed
    finally:
        s.close()
        a.cmd("AUTH", "pw")
        a.cmd("CONFIG", "SET", "requirepass", "")
        a.close()
