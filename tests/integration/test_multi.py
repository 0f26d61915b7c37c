"""MULTI/EXEC/DISCARD/WATCH/UNWATCH with Redis semantics, atomic across worker threads."""

import threading
import time

import pytest
import redis

from itutil import raises_exact

pytestmark = pytest.mark.sanitize


def test_pipeline_transaction(r):
    p = r.pipeline()  # redis-py wraps it in MULTI/EXEC by default
    p.set("a", 1).incr("a").get("a").delete("a").exists("a")
    assert p.execute() == [True, 2, "2", 1, 0]


def test_queued_replies_and_exec(server):
    c = server.client(single_connection_client=True)
    assert c.execute_command("MULTI") == "OK"
    assert c.execute_command("ECHO", "x") == "QUEUED"
    assert c.execute_command("ECHO", "y") == "QUEUED"
    assert c.execute_command("EXEC") == ["x", "y"]
    assert c.execute_command("MULTI") == "OK"
    assert c.execute_command("EXEC") == []


def test_errors(server):
    c = server.client(single_connection_client=True)
    with raises_exact("ERR EXEC without MULTI"):
        c.execute_command("EXEC")
    with raises_exact("ERR DISCARD without MULTI"):
        c.execute_command("DISCARD")
    c.execute_command("MULTI")
    with raises_exact("ERR MULTI calls can not be nested"):
        c.execute_command("MULTI")
    with raises_exact("ERR WATCH inside MULTI is not allowed"):
        c.execute_command("WATCH", "k")
    assert c.execute_command("DISCARD") == "OK"


def test_queue_time_errors_abort(server):
    c = server.client(single_connection_client=True)
    c.execute_command("MULTI")
    c.execute_command("SET", "qa", "1")
    with raises_exact("ERR wrong number of arguments for 'get' command"):
        c.execute_command("GET")
    with raises_exact("EXECABORT Transaction discarded because of previous errors."):
        c.execute_command("EXEC")
    assert c.execute_command("EXISTS", "qa") == 0
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError):
        c.execute_command("NOSUCHCOMMAND", "x")
    with raises_exact("EXECABORT Transaction discarded because of previous errors."):
        c.execute_command("EXEC")


def test_runtime_errors_do_not_abort(server):
    c = server.client(single_connection_client=True)
    c.execute_command("MULTI")
    c.execute_command("SET", "rs", "str")
    c.execute_command("INCR", "rs")
    c.execute_command("SET", "rt", "1")
    res = c.execute_command("EXEC")
    assert res[0] == "OK" and res[2] == "OK"
    assert isinstance(res[1], redis.ResponseError)
    assert str(res[1]) == "ERR value is not an integer or out of range"
    assert c.execute_command("GET", "rt") == "1"


def test_discard(server):
    c = server.client(single_connection_client=True)
    c.execute_command("MULTI")
    c.execute_command("SET", "dk", "1")
    assert c.execute_command("DISCARD") == "OK"
    assert c.execute_command("EXISTS", "dk") == 0


def test_watch_detects_write_by_other_client(server):
    a = server.client(single_connection_client=True)
    b = server.client()
    b.set("w", "1")
    assert a.execute_command("WATCH", "w") is True  # redis-py maps +OK to True
    b.set("w", "2")
    a.execute_command("MULTI")
    a.execute_command("SET", "w", "3")
    assert a.execute_command("EXEC") is None
    assert b.get("w") == "2"
    # unmodified: EXEC runs
    a.execute_command("WATCH", "w")
    a.execute_command("MULTI")
    a.execute_command("SET", "w", "4")
    assert a.execute_command("EXEC") == ["OK"]
    # in-place modifications count too
    b.rpush("wl", "x")
    a.execute_command("WATCH", "wl")
    b.rpush("wl", "y")
    a.execute_command("MULTI")
    a.execute_command("ECHO", "wl")
    assert a.execute_command("EXEC") is None
    # UNWATCH forgets
    a.execute_command("WATCH", "w")
    b.set("w", "5")
    a.execute_command("UNWATCH")
    a.execute_command("MULTI")
    a.execute_command("GET", "w")
    assert a.execute_command("EXEC") == ["5"]


def test_watch_detects_expiry_and_delete(server):
    a = server.client(single_connection_client=True)
    b = server.client()
    b.set("we", "1", px=100)
    a.execute_command("WATCH", "we")
    time.sleep(0.3)
    a.execute_command("MULTI")
    a.execute_command("GET", "we")
    assert a.execute_command("EXEC") is None
    b.set("wd", "1")
    a.execute_command("WATCH", "wd")
    b.delete("wd")
    a.execute_command("MULTI")
    a.execute_command("GET", "wd")
    assert a.execute_command("EXEC") is None


def test_optimistic_counter_8_clients(server):
    r = server.client()
    r.set("cnt", 0)

    def worker():
        cl = server.client()
        for _ in range(1000):
            while True:
                with cl.pipeline() as p:
                    try:
                        p.watch("cnt")
                        v = int(p.get("cnt"))
                        p.multi()
                        p.set("cnt", v + 1)
                        p.execute()
                        break
                    except redis.WatchError:
                        continue

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.get("cnt") == "8000"


def test_exec_is_atomic_across_threads(server):
    """Two keys always moved together by transactions are never seen apart by MGET."""
    r = server.client()
    r.mset({"ta": 0, "tb": 0})
    stop = threading.Event()
    bad = []

    def writer():
        cl = server.client()
        while not stop.is_set():
            p = cl.pipeline()
            p.incr("ta").incr("tb")
            p.execute()

    def reader():
        cl = server.client()
        while not stop.is_set():
            a, b = cl.mget("ta", "tb")
            if a != b:
                bad.append((a, b))

    ts = [threading.Thread(target=writer) for _ in range(3)] + [threading.Thread(target=reader) for _ in range(2)]
    for t in ts:
        t.start()
    time.sleep(2)
    stop.set()
    for t in ts:
        t.join()
    assert bad == []
    assert int(r.get("ta")) > 0


def test_watch_ignores_keys_a_command_only_reads(server):
    """Redis invalidates WATCH only for the keys a command modifies: a source of
    SUNIONSTORE/BITOP/SORT ... STORE/ZUNIONSTORE is only read."""
    a = server.client(single_connection_client=True)
    b = server.client()
    b.sadd("src", "x")
    b.set("bsrc", "ab")
    b.rpush("lsrc", 3, 1, 2)
    b.zadd("zsrc", {"m": 1})
    for write in (("SUNIONSTORE", "dst1", "src"), ("SINTERSTORE", "dst2", "src", "src"),
                  ("BITOP", "AND", "dst3", "bsrc"), ("SORT", "lsrc", "STORE", "dst4"),
                  ("ZUNIONSTORE", "dst5", "1", "zsrc"), ("COPY", "src", "dst6"),
                  ("SMEMBERS", "src")):
        source = {"SUNIONSTORE": "src", "SINTERSTORE": "src", "BITOP": "bsrc",
                  "SORT": "lsrc", "ZUNIONSTORE": "zsrc", "COPY": "src",
                  "SMEMBERS": "src"}[write[0]]
        a.execute_command("WATCH", source)
        b.execute_command(*write)
        a.execute_command("MULTI")
        a.execute_command("ECHO", "ok")
        assert a.execute_command("EXEC") == ["ok"], write
    # the destination is modified: a WATCH on it fails
    a.execute_command("WATCH", "dst1")
    b.execute_command("SUNIONSTORE", "dst1", "src")
    a.execute_command("MULTI")
    a.execute_command("ECHO", "ok")
    assert a.execute_command("EXEC") is None


def test_watch_survives_writes_that_change_nothing(server):
    a = server.client(single_connection_client=True)
    b = server.client()
    b.sadd("ws", "m")
    b.hset("wh", "f", "v")
    b.zadd("wz", {"m": 1})
    for noop in (("SADD", "ws", "m"), ("SREM", "ws", "absent"), ("SMOVE", "nosuch", "ws", "m"),
                 ("HDEL", "wh", "absent"), ("ZREM", "wz", "absent"), ("SPOP", "ws", "0")):
        key = noop[1] if noop[0] != "SMOVE" else "ws"
        a.execute_command("WATCH", key)
        b.execute_command(*noop)
        a.execute_command("MULTI")
        a.execute_command("ECHO", "ok")
        assert a.execute_command("EXEC") == ["ok"], noop
    # and the same commands when they do change something break it
    for change in (("SADD", "ws", "new"), ("SREM", "ws", "new"), ("HDEL", "wh", "f"),
                   ("ZREM", "wz", "m"), ("SPOP", "ws")):
        a.execute_command("WATCH", change[1])
        b.execute_command(*change)
        a.execute_command("MULTI")
        a.execute_command("ECHO", "ok")
        assert a.execute_command("EXEC") is None, change


@pytest.mark.parametrize("cmd", [("SHUTDOWN",), ("SHUTDOWN", "NOSAVE"), ("SAVE",)])
def test_no_multi_commands_refused_in_transaction(server, cmd):
    c = server.client(single_connection_client=True)
    c.execute_command("MULTI")
    with raises_exact("ERR Command not allowed inside a transaction"):
        c.execute_command(*cmd)
    with raises_exact("EXECABORT Transaction discarded because of previous errors."):
        c.execute_command("EXEC")
    assert c.execute_command("PING") is True
    assert server.client().ping()


def test_oom_rules(server):
    """Under maxmemory with no room (Redis's rules): inside MULTI anything but EXEC/DISCARD
    is refused with -OOM (the queue grows); EXEC of read commands runs; EXEC of a queued
    command that may use memory answers EXECABORT ... OOM and discards the transaction."""
    c = server.client(single_connection_client=True)
    admin = server.client()
    oom = "OOM command not allowed when used memory > 'maxmemory'."
    c.execute_command("SET", "oomx", "value")
    policy = admin.execute_command("CONFIG", "GET", "maxmemory-policy")[1]
    admin.execute_command("CONFIG", "SET", "maxmemory-policy", "noeviction")
    try:
        c.execute_command("MULTI")
        c.execute_command("GET", "oomx")
        c.execute_command("PING")
        admin.execute_command("CONFIG", "SET", "maxmemory", "1")
        assert c.execute_command("EXEC") == ["value", "PONG"]

        admin.execute_command("CONFIG", "SET", "maxmemory", "0")
        c.execute_command("MULTI")
        c.execute_command("SET", "oomx", "1")
        c.execute_command("GET", "oomx")
        admin.execute_command("CONFIG", "SET", "maxmemory", "1")
        with raises_exact("EXECABORT Transaction discarded because of: " + oom):
            c.execute_command("EXEC")
        with raises_exact("ERR EXEC without MULTI"):
            c.execute_command("EXEC")

        c.execute_command("MULTI")
        with raises_exact(oom):
            c.execute_command("GET", "oomx")
        assert c.execute_command("DISCARD") == "OK"
    finally:
        admin.execute_command("CONFIG", "SET", "maxmemory", "0")
        admin.execute_command("CONFIG", "SET", "maxmemory-policy", policy)
    assert c.execute_command("GET", "oomx") == "value"


def test_exec_noreplicas_aborts(server):
    """min-replicas-to-write set after a write was queued: EXEC answers EXECABORT NOREPLICAS
    and the write does not run; a transaction of reads is not refused."""
    c = server.client(single_connection_client=True)
    admin = server.client()
    c.execute_command("SET", "nrx", "1")
    try:
        c.execute_command("MULTI")
        c.execute_command("INCR", "nrx")
        admin.execute_command("CONFIG", "SET", "min-replicas-to-write", "2")
        with raises_exact("EXECABORT Transaction discarded because of: NOREPLICAS Not enough "
                          "good replicas to write."):
            c.execute_command("EXEC")
        c.execute_command("MULTI")
        c.execute_command("GET", "nrx")
        assert c.execute_command("EXEC") == ["1"]
    finally:
        admin.execute_command("CONFIG", "SET", "min-replicas-to-write", "0")
    assert c.execute_command("GET", "nrx") == "1"


def _attach_stream(server):
    """A raw replication stream as Redis's suite reads it: SYNC, skip the RDB, then commands."""
    import socket
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(b"SYNC\r\n")
    f = s.makefile("rb")
    while True:
        line = f.readline()
        if line.startswith(b"$"):
            f.read(int(line[1:]))
            break
    return s, f


def _next_cmd(f):
    while True:
        line = f.readline()
        if line.startswith(b"*"):
            break
    out = []
    for _ in range(int(line[1:])):
        n = int(f.readline()[1:])
        out.append(f.read(n + 2)[:-2].decode().lower())
    if out == ["ping"]:
        return _next_cmd(f)
    return " ".join(out)


def test_exec_propagation_as_redis(server):
    """Redis 7.0's stream for EXEC: one write goes alone; two or more are wrapped with the
    SELECT before MULTI; PUBLISH carries its SELECT."""
    c = server.client(single_connection_client=True)
    s, f = _attach_stream(server)
    try:
        c.execute_command("SELECT", 4)
        for cmds in ([("SET", "p1", "a"), ("GET", "p1")],
                     [("SET", "p2", "a"), ("SET", "p3", "b")]):
            c.execute_command("MULTI")
            for a in cmds:
                c.execute_command(*a)
            c.execute_command("EXEC")
        c.execute_command("SELECT", 5)
        c.execute_command("MULTI")
        c.execute_command("PUBLISH", "ch", "m")
        c.execute_command("EXEC")
        got = [_next_cmd(f) for _ in range(8)]
        assert got == ["select 4", "set p1 a", "multi", "set p2 a", "set p3 b", "exec",
                       "select 5", "publish ch m"]
    finally:
        s.close()
        c.execute_command("SELECT", 0)
