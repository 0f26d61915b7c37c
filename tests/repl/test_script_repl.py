"""Scripts and replication as Redis 7.0: redis.set_repl's per-consumer targets (AOF only,
replicas only), the shebang flags against a read-only or stale replica and under
min-replicas-to-write, and the forms INCRBYFLOAT and SET ... KEEPTTL take in the stream. Each
test runs against twincache and redis-server."""

import socket
import time

import pytest
import redis

from test_replication import cli, follow, wait_for

KINDS = ["tc", "redis"]


def start(servers, kind, *args):
    if kind == "tc":
        return servers.tc("--enable-debug-command", "yes", *args)
    return servers.redis(*args)


def err(fn):
    with pytest.raises(redis.ResponseError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("kind", KINDS)
def test_set_repl_targets_aof_and_replicas(servers, kind):
    """REPL_NONE reaches neither, REPL_AOF the AOF only (seen after DEBUG LOADAOF), REPL_ALL
    both; the replica gets a and d."""
    a = start(servers, kind, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    b = start(servers, kind)
    follow(b, a)
    cli(a).eval("""
        redis.call('set','a','1')
        redis.set_repl(redis.REPL_NONE)
        redis.call('set','b','2')
        redis.set_repl(redis.REPL_AOF)
        redis.call('set','c','3')
        redis.set_repl(redis.REPL_REPLICA)
        redis.call('set','e','5')
        redis.set_repl(redis.REPL_ALL)
        redis.call('set','d','4')""", 0)
    wait_for(lambda: cli(b).mget("a", "b", "c", "d", "e") == [b"1", None, None, b"4", b"5"],
             what="a, d and e on the replica")
    assert cli(a).mget("a", "b", "c", "d", "e") == [b"1", b"2", b"3", b"4", b"5"]
    assert cli(a).execute_command("DEBUG", "LOADAOF") == b"OK"
    assert cli(a).mget("a", "b", "c", "d", "e") == [b"1", None, b"3", b"4", None]


@pytest.mark.parametrize("kind", KINDS)
def test_exec_of_writing_script_on_read_only_replica(servers, kind):
    a = start(servers, kind)
    b = start(servers, kind)
    cli(a).set("x", "v")
    rr = cli(b)
    conn = rr.connection_pool.get_connection("MULTI")
    try:
        conn.send_command("MULTI")
        assert conn.read_response() == b"OK"
        conn.send_command("EVAL", "#!lua\nreturn 1", 0)
        assert conn.read_response() == b"QUEUED"
        follow(b, a)
        conn.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError) as e:
            conn.read_response()
        assert str(e.value).startswith("Transaction discarded because of: READONLY")
        # a no-writes script runs, in EXEC too
        conn.send_command("MULTI")
        conn.read_response()
        conn.send_command("EVAL", "#!lua flags=no-writes\nreturn redis.call('get',KEYS[1])",
                          1, "x")
        conn.read_response()
        conn.send_command("EXEC")
        assert conn.read_response() == [b"v"]
    finally:
        rr.connection_pool.release(conn)


@pytest.mark.parametrize("kind", KINDS)
def test_scripts_under_min_replicas_to_write(servers, kind):
    a = start(servers, kind)
    c = cli(a)
    c.set("x", "v")
    c.config_set("min-replicas-to-write", 1)
    assert c.eval("#!lua flags=no-writes\nreturn redis.call('get','x')", 1, "x") == b"v"
    assert c.eval("return redis.call('get','x')", 1, "x") == b"v"  # no shebang: may read
    assert err(lambda: c.eval("#!lua\nreturn redis.call('get','x')", 1, "x")).startswith(
        "NOREPLICAS")
    assert err(lambda: c.eval("return redis.call('set','x',1)", 1, "x")).startswith(
        "NOREPLICAS")


@pytest.mark.parametrize("kind", KINDS)
def test_script_on_stale_replica(servers, kind):
    a = start(servers, kind)
    c = cli(a)
    c.config_set("replica-serve-stale-data", "no")
    c.execute_command("REPLICAOF", "127.0.0.1", "1")
    assert err(lambda: c.eval("return 1", 0)) == (
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.")
    assert c.eval("#!lua flags=allow-stale,no-writes\nreturn 1", 0) == 1
    c.execute_command("REPLICAOF", "NO", "ONE")


def read_stream(s, want, timeout=5.0):
    data = b""
    end = time.time() + timeout
    while time.time() < end and want not in data:
        try:
            s.settimeout(0.2)
            data += s.recv(65536)
        except socket.timeout:
            pass
    return data


@pytest.mark.parametrize("kind", KINDS)
def test_incrbyfloat_and_set_keepttl_in_the_stream(servers, kind):
    a = start(servers, kind)
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    try:
        s.sendall(b"SYNC\r\n")
        read_stream(s, b"REDIS", 5)
        c = cli(a)
        c.eval("redis.call('incrbyfloat', KEYS[1], 1)", 1, "key")
        c.eval("redis.call('set', KEYS[1], '1', 'KEEPTTL')", 1, "key")
        c.set("end", "1")
        data = read_stream(s, b"$3\r\nend\r\n")
        assert (b"*4\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1\r\n1\r\n$7\r\nKEEPTTL\r\n" in data)
        assert (b"*4\r\n$3\r\nset\r\n$3\r\nkey\r\n$1\r\n1\r\n$7\r\nKEEPTTL\r\n" in data)
    finally:
        s.close()
