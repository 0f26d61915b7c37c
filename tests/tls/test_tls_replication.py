"""Replication over TLS (tls-replication yes, as Redis): a twincache replica of a twincache
primary's TLS port, a twincache replica of redis-server's TLS port, and redis-server as a replica
of twincache's TLS port; full sync (the disk path: the sync child cannot write a TLS session)
and the stream, compared key by key."""

import time

import redis

import tcharness as th
from conftest import start_redis_tls, start_tc_tls


def wait_sync(primary, replica, n, timeout=20):
    end = time.time() + timeout
    p = redis.Redis(port=primary.port)
    r = redis.Redis(port=replica.port)
    while time.time() < end:
        ri, pi = r.info("replication"), p.info("replication")
        if ri.get("master_link_status") == "up" and \
                ri.get("slave_repl_offset") == pi.get("master_repl_offset") and r.dbsize() == n:
            return
        time.sleep(0.05)
    raise AssertionError("no sync over TLS: %s" % r.info("replication"))


def check(primary, replica, make_replica_follow):
    p = redis.Redis(port=primary.port)
    for i in range(500):
        p.set("k%d" % i, "v%d" % i)
    p.hset("h", mapping={"a": "1", "b": "2"})
    make_replica_follow()
    wait_sync(primary, replica, 501)
    p.set("live", "1")
    p.rpush("l", "x", "y")
    wait_sync(primary, replica, 503)
    r = redis.Redis(port=replica.port)
    assert r.get("k499") == b"v499" and r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert r.lrange("l", 0, -1) == [b"x", b"y"] and r.get("live") == b"1"


def test_tc_replica_of_tc_over_tls(certs):
    p = start_tc_tls(certs)
    r = start_tc_tls(certs, "--tls-replication", "yes")
    try:
        check(p, r, lambda: redis.Redis(port=r.port).execute_command(
            "REPLICAOF", "127.0.0.1", p.tls_port))
        # the replica's connection on the primary is a TLS one: it came in on the TLS port
        clients = redis.Redis(port=p.port).execute_command("CLIENT", "LIST", "TYPE", "replica")
        assert b"flags=S" in clients
    finally:
        r.stop()
        p.stop()


def test_tc_replica_of_redis_over_tls(certs):
    p = start_redis_tls(certs, "--repl-diskless-sync-delay", "0")
    r = start_tc_tls(certs, "--tls-replication", "yes")
    try:
        check(p, r, lambda: redis.Redis(port=r.port).execute_command(
            "REPLICAOF", "127.0.0.1", p.tls_port))
    finally:
        r.stop()
        p.stop()


def test_redis_replica_of_tc_over_tls(certs):
    p = start_tc_tls(certs)
    r = start_redis_tls(certs, "--tls-replication", "yes")
    try:
        check(p, r, lambda: redis.Redis(port=r.port).execute_command(
            "REPLICAOF", "127.0.0.1", p.tls_port))
    finally:
        r.stop()
        p.stop()
