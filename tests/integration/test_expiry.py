"""Expiry with millisecond precision, lazy and active.

Active expiry is observed only through DBSIZE and INFO, which never touch a key: a key that
disappears from them was reclaimed by the server's own sweep.

This module's server runs with `--hz 100`. Redis's sweep runs hz times a second, and at its
default hz 10 a PX 100 key is reclaimed after ~200 ms (measured with Debian's redis 7.0.15:
102-204 ms), which would make "gone after 200 ms" a coin toss; with hz 100 it is ~110 ms.
"""

import time

import pytest

from harness import start_server
from itutil import keyspace, wait_until

pytestmark = pytest.mark.sanitize


@pytest.fixture(scope="module")
def server():
    srv = start_server(["--hz", "100"])
    yield srv
    srv.stop(check=True)


def expired_keys(r):
    return r.info("stats")["expired_keys"]


def keyspace_now(r):
    return keyspace(r.cmd("INFO", "keyspace"))


def test_px100_gone_after_200ms_untouched(r):
    base = expired_keys(r)
    assert r.set("k", "v", px=100) is True
    t0 = time.monotonic()
    assert r.dbsize() == 1
    assert keyspace_now(r) == {0: (1, 1)}
    time.sleep(max(0, 0.2 - (time.monotonic() - t0)))
    assert r.dbsize() == 0, "a PX 100 key is still counted 200 ms later"
    assert keyspace_now(r) == {}
    assert expired_keys(r) - base == 1


def test_many_keys_swept_actively(r):
    base = expired_keys(r)
    pipe = r.pipeline(transaction=False)
    # PX 1500: the keys outlive the pipeline that writes them even in a slow sanitizer build
    # (under ThreadSanitizer on a busy VM the 4000 SETs took over 100 ms)
    for i in range(2000):
        pipe.set("vol:%d" % i, "x" * (i % 50), px=1500)
        pipe.set("keep:%d" % i, "y")
    pipe.execute()
    assert keyspace_now(r) == {0: (4000, 2000)}
    wait_until(lambda: r.dbsize() == 2000, timeout=10.0, what="2000 volatile keys to be swept")
    assert keyspace_now(r) == {0: (2000, 0)}
    assert expired_keys(r) - base == 2000
    assert r.get("keep:1999") == "y"


def test_sweep_covers_every_database(server, r):
    base = expired_keys(r)
    clients = {db: server.client(db=db) for db in (0, 5, 15)}
    for db, c in clients.items():
        for i in range(10):
            c.set("k%d" % i, "v", px=100)
        c.set("stay", "1")
    assert keyspace_now(r) == {0: (11, 10), 5: (11, 10), 15: (11, 10)}
    wait_until(lambda: keyspace_now(r) == {0: (1, 0), 5: (1, 0), 15: (1, 0)}, timeout=1.0,
               what="keys in db 0, 5 and 15 to be swept")
    assert expired_keys(r) - base == 30


def test_millisecond_precision(r):
    r.set("k", "v", px=700)
    t0 = time.monotonic()
    time.sleep(0.2)
    assert r.get("k") == "v"
    assert 0 < r.pttl("k") <= 500
    time.sleep(max(0, 0.75 - (time.monotonic() - t0)))
    assert r.get("k") is None
    assert r.pttl("k") == -2
    assert r.ttl("k") == -2


def test_lazy_expiry_on_access(r):
    base = expired_keys(r)
    r.set("k", "v", px=20)
    time.sleep(0.03)
    # whichever reclaims it first, lazy or active, the key is gone for every command
    assert r.get("k") is None
    assert r.exists("k") == 0
    assert r.strlen("k") == 0
    assert r.mget("k") == [None]
    assert r.set("k", "new", xx=True) is None
    assert r.incr("k") == 1  # starts over from a missing key
    assert r.ttl("k") == -1
    assert expired_keys(r) - base == 1


def test_overwrite_and_persist_cancel_expiry(r):
    r.set("a", "v", px=100)
    r.set("a", "v2")  # plain SET drops the TTL
    r.set("b", "v", px=100)
    assert r.persist("b") is True
    r.set("c", "v", px=100)
    r.getex("c", persist=True)
    r.set("d", "v", ex=100)
    r.pexpire("d", 100)  # shortening works too
    time.sleep(0.3)
    assert r.mget("a", "b", "c", "d") == ["v2", "v", "v", None]
    assert keyspace_now(r) == {0: (3, 0)}


def test_expire_commands_feed_the_sweep(r):
    base = expired_keys(r)
    r.mset({"e1": "1", "e2": "2", "e3": "3", "e4": "4", "e5": "5"})
    r.pexpire("e1", 50)
    r.pexpireat("e2", int(time.time() * 1000) + 50)
    r.getex("e3", px=50)
    r.set("e4", "4", keepttl=True)
    r.pexpire("e4", 50)
    r.copy("e1", "e6")  # the copy carries the TTL
    assert keyspace_now(r) == {0: (6, 5)}
    wait_until(lambda: r.dbsize() == 1, timeout=1.0, what="expired keys to be swept")
    assert r.keys("*") == ["e5"]
    assert expired_keys(r) - base == 5


def test_past_expire_deletes_at_once(r):
    r.set("k", "v")
    assert r.expireat("k", 1) is True
    assert r.dbsize() == 0
    assert keyspace_now(r) == {}


@pytest.mark.parametrize("cmd", [("SCAN", "0"), ("RANDOMKEY",)])
def test_scan_randomkey_expire_what_they_meet(cmd):
    """SCAN and RANDOMKEY delete the expired keys they meet, as Redis's do: each a DEL in
    the replication stream (not wrapped in MULTI), and a small keyspace is scanned whole by
    SCAN 0."""
    from test_multi import _attach_stream, _next_cmd
    server = start_server(("--enable-debug-command", "yes"))
    c = server.client(single_connection_client=True)
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        c.execute_command("FLUSHALL")
        c.execute_command("SET", "foo1", "bar", "PX", "1")
        c.execute_command("SET", "foo2", "bar", "PX", "1")
        time.sleep(0.01)
        s, f = _attach_stream(server)
        try:
            c.execute_command(*cmd)
            got = sorted(_next_cmd(f) for _ in range(3))
            assert got == ["del foo1", "del foo2", "select 0"]
        finally:
            s.close()
        assert c.execute_command("DBSIZE") == 0
    finally:
        server.stop()
