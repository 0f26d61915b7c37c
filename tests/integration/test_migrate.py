"""MIGRATE: 10,000 keys twincache -> twincache and twincache -> redis-server, COPY / REPLACE /
AUTH / AUTH2 / KEYS / destination db, and the errors (NOKEY, IOERR, target errors), each
compared with what Debian's redis-server answers as the source of the same MIGRATE."""

import socket
import threading

import pytest

import tcharness
from harness import IS_REDIS

N = 10000


@pytest.fixture
def src(start_extra_server):
    s = start_extra_server()
    c = s.client(decode=False)
    yield c
    c.connection_pool.disconnect()


@pytest.fixture
def redis_src():
    s = tcharness.start_redis(client_defaults={"decode": False, "exact_errors": True})
    c = s.client()
    yield c
    c.connection_pool.disconnect()
    s.stop()


@pytest.fixture
def redis_target_factory():
    started = []

    def start(*args):
        s = tcharness.start_redis(*args, client_defaults={"decode": False, "exact_errors": True})
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def populate(c, n=N):
    p = c.pipeline(transaction=False)
    for i in range(n):
        k = "key:%d" % i
        m = i % 5
        if m == 0:
            p.set(k, "value-%d" % i)
        elif m == 1:
            p.rpush(k, "a", i, "c")
        elif m == 2:
            p.hset(k, mapping={"f": i, "g": "x"})
        elif m == 3:
            p.sadd(k, i, "s")
        else:
            p.zadd(k, {"m": i})
        if i % 100 == 0:
            p.pexpire(k, 1000000)
    p.execute()


def check_copy(c, n=N):
    assert c.dbsize() == n
    for i in list(range(0, n, 97)) + [n - 1]:
        k = "key:%d" % i
        m = i % 5
        if m == 0:
            assert c.get(k) == b"value-%d" % i
        elif m == 1:
            assert c.lrange(k, 0, -1) == [b"a", b"%d" % i, b"c"]
        elif m == 2:
            assert c.hgetall(k) == {b"f": b"%d" % i, b"g": b"x"}
        elif m == 3:
            assert c.smembers(k) == {b"%d" % i, b"s"}
        else:
            assert c.zscore(k, "m") == float(i)
        if i % 100 == 0:
            assert 900000 < c.pttl(k) <= 1000000
        else:
            assert c.pttl(k) == -1


def migrate(c, target, *args):
    try:
        return c.execute_command("MIGRATE", "127.0.0.1", target.port, *args)
    except Exception as e:  # noqa: BLE001 (the reply under test)
        return ("error", str(e))


def test_10k_keys_to_twincache(src, start_extra_server):
    target = start_extra_server()
    populate(src)
    keys = ["key:%d" % i for i in range(N)]
    assert migrate(src, target, "", 0, 5000, "KEYS", *keys) == b"OK"
    assert src.dbsize() == 0
    check_copy(target.client(decode=False))


def test_10k_keys_to_redis(src, redis_target_factory):
    target = redis_target_factory()
    populate(src)
    for b in range(0, N, 2500):  # in four commands
        keys = ["key:%d" % i for i in range(b, b + 2500)]
        assert migrate(src, target, "", 0, 5000, "KEYS", *keys) == b"OK"
    assert src.dbsize() == 0
    check_copy(target.client())


def test_copy_replace_db(src, start_extra_server):
    target = start_extra_server()
    t = target.client(decode=False)
    src.set("a", "1")
    src.rpush("l", "x")
    assert migrate(src, target, "a", 0, 1000, "COPY") == b"OK"
    assert src.get("a") == b"1" and t.get("a") == b"1"
    err = migrate(src, target, "a", 0, 1000)
    assert err == ("error", "ERR Target instance replied with error: BUSYKEY Target key name "
                   "already exists.")
    assert src.get("a") == b"1"
    src.set("a", "2")
    assert migrate(src, target, "a", 0, 1000, "REPLACE") == b"OK"
    assert src.exists("a") == 0 and t.get("a") == b"2"
    assert migrate(src, target, "l", 3, 1000, "COPY", "REPLACE") == b"OK"
    t.select(3)
    assert t.lrange("l", 0, -1) == [b"x"]
    assert src.lrange("l", 0, -1) == [b"x"]
    # some keys missing: the others move, OK; all missing: NOKEY
    assert migrate(src, target, "", 5, 1000, "KEYS", "nope", "l") == b"OK"
    assert src.exists("l") == 0
    assert migrate(src, target, "", 5, 1000, "KEYS", "nope", "nope2") == b"NOKEY"
    assert migrate(src, target, "nope", 5, 1000) == b"NOKEY"


def test_auth(src, start_extra_server):
    target = start_extra_server("--requirepass", "pw")
    src.set("a", "1")
    r = migrate(src, target, "a", 0, 1000)
    assert r == ("error", "ERR Target instance replied with error: NOAUTH Authentication "
                 "required.")
    r = migrate(src, target, "a", 0, 1000, "AUTH", "wrong")
    assert r[0] == "error" and r[1].startswith("ERR Target instance replied with error: "
                                               "WRONGPASS")
    assert src.get("a") == b"1"
    assert migrate(src, target, "a", 0, 1000, "COPY", "AUTH", "pw") == b"OK"
    assert migrate(src, target, "a", 0, 1000, "REPLACE", "AUTH2", "default", "pw") == b"OK"
    assert src.exists("a") == 0
    t = target.client(decode=False, password="pw")
    assert t.get("a") == b"1"


@pytest.mark.skipif(IS_REDIS, reason="compares twincache with redis-server")
def test_errors_as_redis(src, redis_src, redis_target_factory):
    target = redis_target_factory()
    target.client().set("busy", "x")
    closed = tcharness.free_port()
    for c in (src, redis_src):
        c.set("busy", "1")
        c.set("k", "v")

    class Dead:
        port = closed

    cases = [
        (target, "busy", 0, 1000),
        (target, "k", 0, 1000, "KEYS", "a"),
        (target, "", 0, 1000, "KEYS"),
        (target, "nope", 0, 1000),
        (target, "k", 0, 1000, "BOGUS"),
        (target, "k", 0, 1000, "AUTH"),
        (target, "k", 0, 1000, "AUTH2", "u"),
        (target, "k", "x", 1000),
        (target, "k", 0, "x"),
        (target, "k", 99, 1000, "COPY"),
        (Dead, "k", 0, 1000),
    ]
    for t, *args in cases:
        assert migrate(src, t, *args) == migrate(redis_src, t, *args), args
    for c in (src, redis_src):
        assert c.get("busy") == b"1"
        assert c.get("k") == b"v"


def test_read_timeout(src):
    """A target that accepts and never answers: IOERR after the timeout, the key stays."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    held = []

    def accept():
        try:
            conn, _ = ls.accept()
            held.append(conn)
        except OSError:
            pass

    th = threading.Thread(target=accept)
    th.start()

    class T:
        port = ls.getsockname()[1]

    src.set("k", "v")
    r = migrate(src, T, "k", 0, 200)
    th.join(5)
    for s in held:
        s.close()
    ls.close()
    assert r == ("error", "IOERR error or timeout reading to target instance")
    assert src.get("k") == b"v"


def test_cached_connection(src, redis_target_factory):
    """One connection per target is kept (as Redis, 10 s): later MIGRATEs reuse it, SELECT only
    when the database changes, and a connection the target closed is replaced."""
    target = redis_target_factory()
    t = target.client()
    for i in range(4):
        src.set("k%d" % i, i)
    assert migrate(src, target, "k0", 0, 1000) == b"OK"
    assert migrate(src, target, "k1", 2, 1000) == b"OK"
    assert migrate(src, target, "k2", 0, 1000) == b"OK"
    lines = [x for x in t.execute_command("CLIENT", "LIST").split(b"\n") if x.strip()]
    assert len(lines) == 2, lines  # this client and the cached one
    assert t.get("k0") == b"0" and t.get("k2") == b"2"
    assert target.client(db=2).get("k1") == b"1"
    assert t.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == 1
    assert migrate(src, target, "k3", 2, 1000) == b"OK"
    assert target.client(db=2).get("k3") == b"3"


def test_migrate_with_aof(start_extra_server, tmp_path):
    """Under the AOF the moved keys are logged as DEL: after a restart they stay moved."""
    s = start_extra_server("--appendonly", "yes", "--dir", str(tmp_path))
    target = start_extra_server()
    c = s.client(decode=False)
    c.set("a", "1")
    c.set("b", "2")
    c.set("c", "3")
    assert migrate(c, target, "", 0, 1000, "KEYS", "a", "b") == b"OK"
    assert migrate(c, target, "c", 0, 1000, "COPY") == b"OK"
    c.connection_pool.disconnect()
    s.restart()
    c = s.client(decode=False)
    assert c.exists("a", "b") == 0
    assert c.get("c") == b"3"
    assert target.client(decode=False).mget("a", "b", "c") == [b"1", b"2", b"3"]
