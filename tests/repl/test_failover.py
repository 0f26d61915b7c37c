"""FAILOVER (Redis 6.2+): the same answers as redis-server 7.0 for every argument error, and a
coordinated handover to a replica with the same outcome on both servers (roles swapped, the
target continues the stream with a partial resync, a write paused meanwhile then gets
-READONLY), and ABORT / TIMEOUT rolling back."""

import subprocess
import threading
import time

import pytest
import redis

import tcharness


def pair(servers, kind):
    mk = servers.tc if kind == "tc" else servers.redis
    a, b = mk(), mk()
    redis.Redis(port=b.port).execute_command("REPLICAOF", "127.0.0.1", a.port)
    end = time.time() + 20
    while True:
        i = redis.Redis(port=a.port).info("replication")
        if i.get("slave0", {}).get("state") == "online" and \
                redis.Redis(port=b.port).info("replication")["master_link_status"] == "up":
            return a, b
        assert time.time() < end
        time.sleep(0.05)


def raw(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + [str(x) for x in args],
                          capture_output=True, text=True, timeout=30).stdout.strip()


CASES = [
    [], ["TO"], ["TO", "127.0.0.1"], ["TO", "127.0.0.1", "abc"], ["TO", "127.0.0.1", "1"],
    ["TO", "127.0.0.1", "{b}", "FORCE"], ["FORCE", "TIMEOUT", "100"], ["TIMEOUT"],
    ["TIMEOUT", "-1"], ["TIMEOUT", "0"], ["TIMEOUT", "abc"], ["ABORT"],
    ["ABORT", "TIMEOUT", "5"], ["BOGUS"], ["TO", "127.0.0.1", "{b}", "TO", "127.0.0.1", "{b}"],
]


def test_failover_errors_match_redis(servers):
    got = {}
    for kind in ("redis", "tc"):
        a, b = pair(servers, kind)
        out = []
        # on the replica first, then every argument error on the primary (that fails)
        out.append(raw(b.port, "FAILOVER"))
        for case in CASES[1:]:
            args = [x.replace("{b}", str(b.port)) for x in case]
            out.append(raw(a.port, "FAILOVER", *args))
        out.append(raw(a.port, "INFO", "replication").count("master_failover_state:no-failover"))
        got[kind] = out
        a.stop()
        b.stop()
    assert got["tc"] == got["redis"]


@pytest.mark.parametrize("kind", ["redis", "tc"])
def test_failover_hands_over_to_the_replica(servers, kind):
    a, b = pair(servers, kind)
    ca, cb = redis.Redis(port=a.port), redis.Redis(port=b.port)
    for i in range(100):
        ca.set("k%d" % i, i)
    assert raw(a.port, "FAILOVER", "TO", "127.0.0.1", b.port, "TIMEOUT", "5000") == "OK"
    end = time.time() + 20
    while cb.info("replication")["role"] != "master" or \
            ca.info("replication").get("master_link_status") != "up":
        assert time.time() < end, "no handover"
        time.sleep(0.05)
    assert ca.info("replication")["master_port"] == b.port
    assert ca.info("replication")["master_failover_state"] == "no-failover"
    assert cb.info("stats")["sync_full"] == 0 and cb.info("stats")["sync_partial_ok"] == 1
    assert cb.get("k99") == b"99"
    cb.set("after", "1")
    end = time.time() + 10
    while ca.get("after") != b"1":
        assert time.time() < end
        time.sleep(0.05)
    with pytest.raises(redis.exceptions.ReadOnlyError):
        ca.set("x", "1")


@pytest.mark.parametrize("kind", ["redis", "tc"])
def test_failover_abort_and_timeout_roll_back(servers, kind):
    a, b = pair(servers, kind)
    ca = redis.Redis(port=a.port)
    # the replica cannot catch up: it is stopped
    b.proc.send_signal(19)  # SIGSTOP
    try:
        ca.set("k", "1")
        assert raw(a.port, "FAILOVER", "TIMEOUT", "60000") == "OK"
        assert ca.info("replication")["master_failover_state"] == "waiting-for-sync"
        assert raw(a.port, "FAILOVER") == "ERR FAILOVER already in progress."
        # a write waits (writes are paused) until the abort
        res = {}
        th = threading.Thread(target=lambda: res.setdefault("r", redis.Redis(
            port=a.port).set("w", "1")))
        th.start()
        time.sleep(0.3)
        assert "r" not in res
        assert raw(a.port, "FAILOVER", "ABORT") == "OK"
        th.join(10)
        assert res.get("r") is True
        assert ca.info("replication")["master_failover_state"] == "no-failover"
        assert ca.info("replication")["role"] == "master"
        # TIMEOUT without FORCE rolls back by itself
        assert raw(a.port, "FAILOVER", "TIMEOUT", "300") == "OK"
        time.sleep(1.5)
        assert ca.info("replication")["master_failover_state"] == "no-failover"
        assert ca.info("replication")["role"] == "master"
        assert ca.set("still", "writable")
    finally:
        b.proc.send_signal(18)  # SIGCONT
