"""Lazy freeing as Redis 7.0: UNLINK, FLUSHALL/FLUSHDB ASYNC and the lazyfree-lazy-* settings
hand values whose free effort is above 64 allocations to the background thread, counted by
INFO's lazyfree_pending_objects and lazyfreed_objects (zeroed by CONFIG RESETSTAT). Runs
against redis-server as well (TC_SERVER=redis)."""

import socket

import pytest

from itutil import wait_until

pytestmark = pytest.mark.sanitize


def mem(r):
    return r.info("memory")


def settled(r):
    wait_until(lambda: mem(r)["lazyfree_pending_objects"] == 0, what="lazy free done")
    return mem(r)["lazyfreed_objects"]


@pytest.fixture
def lr(r):
    settled(r)
    r.config_resetstat()
    yield r
    r.config_set("lazyfree-lazy-user-del", "no")
    r.config_set("lazyfree-lazy-user-flush", "no")
    r.config_set("lazyfree-lazy-server-del", "no")
    r.config_set("lazyfree-lazy-expire", "no")


def big_set(r, key, n=1000):
    r.sadd(key, *range(n))


def test_unlink_big_value_is_freed_in_background(lr):
    big_set(lr, "big")
    lr.sadd("small", 1, 2, 3)
    assert lr.unlink("big", "small", "nokey") == 2
    assert lr.exists("big", "small") == 0
    assert settled(lr) == 1  # only the big one went to the thread
    lr.config_resetstat()
    assert mem(lr)["lazyfreed_objects"] == 0


@pytest.mark.parametrize("kind", ["set", "hash", "zset", "list", "stream"])
def test_unlink_each_type(lr, kind):
    if kind == "set":
        big_set(lr, "k")
    elif kind == "hash":
        lr.hset("k", mapping={"f%d" % i: i for i in range(1000)})
    elif kind == "zset":
        lr.zadd("k", {"m%d" % i: i for i in range(1000)})
    elif kind == "list":
        lr.rpush("k", *["x" * 200 for _ in range(20000)])  # many chunks
    else:
        lr.config_set("stream-node-max-entries", 5)
        for i in range(500):
            lr.xadd("k", {"f": i})
        lr.config_set("stream-node-max-entries", 100)
    assert lr.unlink("k") == 1
    assert settled(lr) == 1


def test_del_follows_lazyfree_lazy_user_del(lr):
    big_set(lr, "a")
    assert lr.delete("a") == 1
    assert settled(lr) == 0
    lr.config_set("lazyfree-lazy-user-del", "yes")
    big_set(lr, "a")
    assert lr.delete("a") == 1
    assert settled(lr) == 1


def test_overwrite_follows_lazyfree_lazy_server_del(lr):
    lr.config_set("lazyfree-lazy-server-del", "yes")
    big_set(lr, "a")
    lr.set("a", "string now")
    assert settled(lr) == 1
    assert lr.get("a") == "string now"


def test_expire_follows_lazyfree_lazy_expire(lr):
    lr.config_set("lazyfree-lazy-expire", "yes")
    big_set(lr, "a")
    lr.pexpire("a", 1)
    wait_until(lambda: lr.exists("a") == 0, what="expiry")
    assert settled(lr) == 1


def test_flush_async_counts_keys(lr):
    for i in range(3):
        big_set(lr, "s%d" % i, 10)
    lr.flushall(asynchronous=True)
    assert lr.dbsize() == 0
    assert settled(lr) == 3
    lr.config_resetstat()
    # FLUSHDB SYNC frees at once even with lazyfree-lazy-user-flush
    lr.config_set("lazyfree-lazy-user-flush", "yes")
    big_set(lr, "x")
    lr.execute_command("FLUSHDB", "SYNC")
    assert settled(lr) == 0
    big_set(lr, "x")
    lr.flushdb()
    assert settled(lr) == 1
    big_set(lr, "x")
    lr.sadd("y", 1)
    lr.execute_command("FLUSHDB", "ASYNC")
    assert settled(lr) == 3
    assert lr.dbsize() == 0


def test_memory_returns_after_unlink_of_huge_command(server, lr):
    """The lazyfree unit's scenario: a 100000-member SADD in one command; after UNLINK,
    used_memory falls below twice what it was (the command's argument arrays are not kept
    by the connection either)."""
    orig = mem(lr)["used_memory"]
    s = socket.create_connection(("127.0.0.1", server.port))
    try:
        args = [b"SADD", b"myset"] + [str(i).encode() for i in range(100000)]
        out = [b"*%d\r\n" % len(args)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in args]
        s.sendall(b"".join(out))
        f = s.makefile("rb")
        assert f.readline() == b":100000\r\n"
        peak = mem(lr)["used_memory"]
        assert peak > orig + 1000000
        s.sendall(b"*2\r\n$6\r\nUNLINK\r\n$5\r\nmyset\r\n")
        assert f.readline() == b":1\r\n"
        wait_until(lambda: mem(lr)["used_memory"] < orig * 2, what="memory reclaimed")
    finally:
        s.close()


def test_flushall_with_save_rules_leaves_no_changes(start_extra_server, tmp_path):
    """FLUSHALL with save rules saves, and its own change is counted before that save, so
    rdb_changes_since_last_save is 0 after it (the Redis unit/other test); without save rules
    the change stays counted."""
    srv = start_extra_server("--dir", str(tmp_path))
    c = srv.client()
    c.set("key", "value")
    c.flushall()
    assert c.info("persistence")["rdb_changes_since_last_save"] > 0
    c.config_set("save", "3600 1 300 100 60 10000")
    c.set("key", "value")
    c.flushall()
    assert c.info("persistence")["rdb_changes_since_last_save"] == 0
    c.set("key", "value")
    assert c.info("persistence")["rdb_changes_since_last_save"] == 1
    c.config_set("save", "")
    c.close()
