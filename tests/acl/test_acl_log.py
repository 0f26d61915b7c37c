"""ACL LOG against redis-server 7.0: failed AUTH / HELLO AUTH attempts logged with Redis's
fields (count, reason, context, object, username, age-seconds, client-info), grouped,
newest first, COUNT and RESET, the same errors. client-info and age-seconds differ between
the servers by nature: they are checked for shape only."""

import pytest
import redis
from conftest import reply

FIELDS = [b"count", b"reason", b"context", b"object", b"username", b"age-seconds", b"client-info"]


def fail(srv, *args):
    c = srv.client(single_connection_client=True)
    try:
        r = reply(c, *args)
        assert r[0] == "error" and r[1].startswith("WRONGPASS"), r
    finally:
        c.close()


def comparable(log):
    out = []
    for e in log:
        assert e[0::2] == FIELDS
        d = dict(zip(e[0::2], e[1::2]))
        age = float(d.pop(b"age-seconds"))
        assert 0 <= age < 60
        info = d.pop(b"client-info")
        assert info.startswith(b"id=") and b" addr=" in info, info
        out.append(d)
    return out


@pytest.fixture
def pair(tc_server, redis_server):
    admins = [s.client() for s in (tc_server, redis_server)]
    for a in admins:
        a.cmd("CONFIG", "SET", "requirepass", "pw")
        a.cmd("AUTH", "pw")
        a.cmd("ACL", "LOG", "RESET")
    yield admins
    for a in admins:
        a.cmd("ACL", "LOG", "RESET")
        a.cmd("CONFIG", "SET", "requirepass", "")
        a.close()


def test_log_entries(tc_server, redis_server, pair):
    for srv in (tc_server, redis_server):
        fail(srv, "AUTH", "bad")
        fail(srv, "AUTH", "bob", "bad")
        fail(srv, "HELLO", "2", "AUTH", "bob", "bad")
        fail(srv, "AUTH", "bob", "bad")
        fail(srv, "AUTH", "DEFAULT", "pw")
    tc, rs = pair
    for args in (("ACL", "LOG"), ("ACL", "LOG", "1"), ("ACL", "LOG", "2"), ("ACL", "LOG", "100")):
        a, b = comparable(tc.cmd(*args)), comparable(rs.cmd(*args))
        assert a == b, args
    assert len(tc.cmd("ACL", "LOG")) == 4
    for args in (("ACL", "LOG", "0"), ("ACL", "LOG", "-1"), ("ACL", "LOG", "x"),
                 ("ACL", "LOG", "reset", "x"), ("ACL", "LOG", "1", "2")):
        assert reply(tc, *args) == reply(rs, *args), args
    assert tc.cmd("ACL", "LOG", "RESET") == rs.cmd("ACL", "LOG", "RESET")
    assert tc.cmd("ACL", "LOG") == rs.cmd("ACL", "LOG") == []


def test_log_bounded(tc_server, redis_server, pair):
    """More distinct failing users than the log holds: the newest 128 stay (Redis's
    acllog-max-len default), and a repeated failure only counts."""
    for srv in (tc_server, redis_server):
        c = srv.client(single_connection_client=True)
        pipe_args = [("AUTH", "u%d" % i, "bad") for i in range(150)] + [("AUTH", "u149", "bad")] * 50
        for args in pipe_args:
            reply(c, *args)
        c.close()
    tc, rs = pair
    a, b = comparable(tc.cmd("ACL", "LOG", "1000")), comparable(rs.cmd("ACL", "LOG", "1000"))
    assert len(a) == 128
    assert a == b


def test_log_concurrent_count(tc_server, pair):
    """Failures on many connections (spread over the worker threads) add to one entry's count:
    none lost."""
    import threading

    def worker():
        c = tc_server.client(single_connection_client=True)
        for _ in range(250):
            reply(c, "AUTH", "racer", "bad")
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log = comparable(pair[0].cmd("ACL", "LOG"))
    assert [(e[b"username"], e[b"count"]) for e in log] == [(b"racer", 1000)]
