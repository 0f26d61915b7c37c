"""CONFIG SET with several parameters and OBJECT REFCOUNT, against redis-server 7.0: every
name is checked before anything changes (unknown, immutable, given twice), values apply all
together or not at all (a refused value puts back those set before it), hz is kept within
1..500, and small integers report Redis's shared-object refcount."""
import os
import time

import pytest

import tcharness
from conftest import call

SETTINGS = ("maxmemory-samples", "lfu-log-factor", "hz", "slowlog-max-len", "maxmemory",
            "hash-max-listpack-entries")


def state(c):
    return [call(c, "CONFIG", "GET", s) for s in SETTINGS]


@pytest.fixture
def restore(tc_server, redis_server):
    clients = [tc_server.client(), redis_server.client()]
    before = [state(c) for c in clients]
    for c in clients:  # the same starting point on both
        for name, value in zip(SETTINGS, ("5", "10", "10", "128", "0", "128")):
            call(c, "CONFIG", "SET", name, value)
    yield
    for c, b in zip(clients, before):
        for pair in b:
            call(c, "CONFIG", "SET", *pair)


CASES = [
    ("maxmemory-samples", 7, "hz", 20),
    ("maxmemory-samples", 8, "lfu-log-factor", -5),
    ("maxmemory-samples", 9, "slowlog-max-len", "x", "hz", 30),
    ("maxmemory-samples", 8, "maxmemory-samples", 9),
    ("MAXMEMORY-SAMPLES", 8, "maxmemory-samples", 9),
    ("hash-max-ziplist-entries", 100, "hash-max-listpack-entries", 120),
    ("nosuch", 1, "maxmemory-samples", 9),
    ("maxmemory-samples", 9, "databases", 3),
    ("maxmemory-samples", 9, "nosuch"),
    ("maxmemory", "10mb", "maxmemory-samples", 0),
    ("hz", 100000), ("hz", 0), ("hz", -1), ("hz", 250),
    ("slowlog-max-len", 10, "maxmemory", "1gb", "lfu-log-factor", 3),
]


@pytest.mark.parametrize("args", CASES)
def test_config_set_all_or_nothing(d, restore, args):
    d("CONFIG", "SET", *args)
    for s in SETTINGS:
        d("CONFIG", "GET", s)


@pytest.mark.parametrize("value", ["0", "1", "9999", "10000", "-1", "007", "abc", "1.5",
                                   "123456789012345678901"])
def test_object_refcount(d, value):
    d("SET", "k", value)
    d("OBJECT", "REFCOUNT", "k")
    d("OBJECT", "ENCODING", "k")
    d("RPUSH", "l", value)
    d("OBJECT", "REFCOUNT", "l")
    d("OBJECT", "REFCOUNT", "nokey")


def test_oom_score_adj(tc_server, redis_server):
    """oom-score-adj writes /proc/<pid>/oom_score_adj as Redis does: relative to the value it
    found, absolute, restored on no; out-of-range values refused with Redis's error."""
    got = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        info = call(c, "INFO", "server")
        info = info.decode() if isinstance(info, bytes) else info
        pid = int(info.split("process_id:")[1].split()[0])

        def adj():
            with open("/proc/%d/oom_score_adj" % pid) as f:
                return int(f.read())

        call(c, "CONFIG", "SET", "oom-score-adj", "no")
        with open("/proc/%d/oom_score_adj" % pid, "w") as f:
            f.write("22\n")
        seen = [call(c, "CONFIG", "SET", "oom-score-adj-values", "9 9 9", "oom-score-adj", "yes"),
                adj()]
        call(c, "CONFIG", "SET", "oom-score-adj", "absolute")
        seen.append(adj())
        call(c, "CONFIG", "SET", "oom-score-adj", "no")
        seen.append(adj())
        seen.append(call(c, "CONFIG", "SET", "oom-score-adj-values", "-2001 0 0"))
        seen.append(call(c, "CONFIG", "GET", "oom-score-adj-values"))
        call(c, "CONFIG", "SET", "oom-score-adj-values", "0 200 800")
        with open("/proc/%d/oom_score_adj" % pid, "w") as f:
            f.write("0\n")
        got.append(seen)
    assert got[0] == got[1]
    assert got[0][1:4] == [31, 9, 22]


def test_cobl_errors_as_redis(tc_server, redis_server):
    """client-output-buffer-limit: Redis's reason for each bad value."""
    bad = ["wrong number", "invalid_class 10mb 10mb 60", "master 10mb 10mb 60",
           "normal 10mbs 10mb 60", "replica 10mb 10mbs 60", "pubsub 10mb 10mb 60s"]
    got = [[call(srv.client(), "CONFIG", "SET", "client-output-buffer-limit", v) for v in bad]
           for srv in (tc_server, redis_server)]
    assert got[0] == got[1]


def child_pids(pid):
    out = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def test_oom_score_adj_follows_role_and_child():
    """As Redis's setOOMScoreAdj: REPLICAOF moves the server to the replica class and
    REPLICAOF NO ONE back; a forked background child (BGSAVE with snapshot-fork yes here,
    every BGSAVE in Redis) takes the bgchild class. Side by side with redis-server."""
    seen = {}
    servers = [("twincache", tcharness.start_twincache("--snapshot-fork", "yes")),
               ("redis", tcharness.start_redis())]
    try:
        for name, srv in servers:
            c = srv.client()

            def adj(pid=srv.pid):
                with open("/proc/%d/oom_score_adj" % pid) as f:
                    return int(f.read())

            base = adj()
            c.execute_command("CONFIG", "SET", "oom-score-adj-values", "10 20 30")
            c.execute_command("CONFIG", "SET", "oom-score-adj", "yes")
            row = [adj() - base]
            c.execute_command("REPLICAOF", "localhost", "1")
            row.append(adj() - base)
            c.execute_command("REPLICAOF", "NO", "ONE")
            row.append(adj() - base)
            c.set("key-a", "value-a")
            c.execute_command("CONFIG", "SET", "rdb-key-save-delay", "1000000")
            c.execute_command("BGSAVE")
            child = None
            for _ in range(200):
                kids = child_pids(srv.pid)
                if kids and adj(kids[0]) - base == 30:
                    child = kids[0]
                    break
                time.sleep(0.01)
            row.append(adj(child) - base if child else None)
            c.execute_command("CONFIG", "SET", "rdb-key-save-delay", "0")
            if child:
                os.kill(child, 9)
            c.execute_command("CONFIG", "SET", "oom-score-adj", "no")
            seen[name] = row
    finally:
        for _, srv in servers:
            srv.stop()
    assert seen["twincache"] == seen["redis"] == [10, 20, 10, 30]
