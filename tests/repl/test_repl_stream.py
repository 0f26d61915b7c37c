"""Replication: the database a stream continues in across promotions, chains and full syncs
from a replica; CLIENT KILL of the link to the primary; blocking commands while writes are
propagated. Each test fails on the bug it was written for."""

import time

import redis

from test_replication import cli, follow, info, in_sync, wait_for


def db(srv, n):
    return redis.Redis(host="127.0.0.1", port=srv.port, db=n, socket_timeout=10)


def test_full_sync_from_a_replica_continues_in_its_links_database(servers):
    """A -> B -> C, A writing in db 9: C's full sync from B records the database B's link is
    in (repl-stream-db), so A's next write, which sends no SELECT, lands in db 9 on C."""
    a = servers.tc()
    b = servers.tc()
    c = servers.tc()
    follow(b, a)
    db(a, 9).set("k1", "1")
    wait_for(lambda: in_sync(a, b), what="B")
    follow(c, b)
    db(a, 9).set("k2", "2")  # no SELECT in A's stream: it is still in db 9
    wait_for(lambda: in_sync(a, b) and in_sync(b, c), what="the chain")
    assert db(c, 9).get("k2") == b"2"
    assert db(c, 0).get("k2") is None


def test_promoted_again_selects_before_its_first_write(servers):
    """A writes in db 9, B takes over and writes in db 0 (A follows it with PSYNC), then A is
    promoted again: its first write SELECTs db 9, though A's last own SELECT was 9."""
    a = servers.tc()
    b = servers.tc()
    follow(b, a)
    db(a, 9).set("x", "1")
    wait_for(lambda: in_sync(a, b), what="B")
    assert cli(b).execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    follow(a, b)
    db(b, 0).set("y", "1")
    wait_for(lambda: in_sync(b, a) and db(a, 0).get("y") == b"1", what="A under B")
    assert cli(a).execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    follow(b, a)
    db(a, 9).set("z", "1")
    wait_for(lambda: in_sync(a, b), what="B under A")
    assert db(b, 9).get("z") == b"1"
    assert db(b, 0).get("z") is None
    assert info(a, "stats")["sync_full"] == 1  # B's first sync only: the rest continued


def test_client_kill_reaches_the_link_to_the_primary(servers):
    """CLIENT KILL TYPE MASTER (and by the primary's address) closes the link; it reconnects
    and continues with a partial resync."""
    a = servers.tc()
    b = servers.tc()
    follow(b, a)
    before = info(a, "stats")["sync_partial_ok"]
    assert cli(b).execute_command("CLIENT", "KILL", "TYPE", "master") == 1
    wait_for(lambda: info(a, "stats")["sync_partial_ok"] == before + 1, what="a partial resync")
    wait_for(lambda: in_sync(a, b), what="B back")
    assert cli(b).execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") == 0
    assert cli(b).execute_command("CLIENT", "KILL", "127.0.0.1:%d" % a.port) == b"OK"
    wait_for(lambda: info(a, "stats")["sync_partial_ok"] == before + 2, what="another one")
    cli(a).set("after", "1")
    wait_for(lambda: cli(b).get("after") == b"1", what="the stream")


def test_blocking_pop_blocks_with_a_replica_attached(servers):
    """BRPOP on a missing key waits for its timeout (it answered nil at once while writes were
    propagated), and the pop that wakes it reaches the replica."""
    a = servers.tc()
    b = servers.tc()
    follow(b, a)
    t0 = time.time()
    assert cli(a).brpop("nokey", 1) is None
    assert time.time() - t0 >= 0.9
    c = cli(a)
    r = c.connection_pool.get_connection("BLPOP")
    r.send_command("BLPOP", "q", 5)
    time.sleep(0.2)
    cli(a).rpush("q", "a", "b")
    assert r.read_response() == [b"q", b"a"]
    c.connection_pool.release(r)
    wait_for(lambda: in_sync(a, b), what="B")
    assert cli(b).lrange("q", 0, -1) == [b"b"]


def test_replicaof_unblocks_blocked_clients(servers):
    """A BLPOP blocked on a primary that becomes a replica gets Redis's UNBLOCKED error (served
    later by its new primary's RPUSH, it made the two datasets differ)."""
    a = servers.tc()
    b = servers.tc()
    c = cli(b)
    conn = c.connection_pool.get_connection("BLPOP")
    conn.send_command("BLPOP", "foo", 0)
    time.sleep(0.2)
    follow(b, a)
    try:
        conn.read_response()
        raise AssertionError("BLPOP was not unblocked")
    except redis.ResponseError as e:
        assert str(e).startswith("UNBLOCKED force unblock from blocking operation")
    except redis.ConnectionError:
        raise AssertionError("closed before the error reply")
    cli(a).rpush("foo", "a", "b", "c")
    wait_for(lambda: in_sync(a, b), what="B")
    assert cli(b).lrange("foo", 0, -1) == [b"a", b"b", b"c"]


def test_resetstat_zeroes_the_sync_counters(servers):
    a = servers.tc()
    b = servers.tc()
    follow(b, a)
    assert info(a, "stats")["sync_full"] == 1
    cli(a).config_resetstat()
    st = info(a, "stats")
    assert (st["sync_full"], st["sync_partial_ok"], st["sync_partial_err"]) == (0, 0, 0)


def test_client_pause_on_a_replica_holds_the_primarys_writes(servers):
    """CLIENT PAUSE WRITE on a replica holds its primary's writes as a client's: the stream is
    read (slave_read_repl_offset grows) but not applied until the pause ends."""
    a = servers.tc()
    b = servers.tc()
    follow(b, a)
    cli(a).set("foo", "bar")
    wait_for(lambda: in_sync(a, b), what="B")
    before = info(b)["slave_repl_offset"]
    cli(b).execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    cli(a).set("foo2", "bar2")
    target = info(a)["master_repl_offset"]
    wait_for(lambda: info(b)["slave_read_repl_offset"] == target, what="the read offset")
    time.sleep(0.3)
    assert info(b)["slave_repl_offset"] == before
    assert cli(b).get("foo2") is None
    cli(b).execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: cli(b).get("foo2") == b"bar2", what="the write after the pause")
    assert info(b)["slave_repl_offset"] == target


def test_masterauth_is_binary_safe(servers):
    """CONFIG SET masterauth keeps every byte: a password with a NUL in it authenticates, its
    prefix up to the NUL does not."""
    a = servers.tc()
    b = servers.tc()
    cli(a).config_set("requirepass", b"abc\x00def")
    cli(b).config_set("masterauth", b"abc")
    cli(b).execute_command("REPLICAOF", "127.0.0.1", a.port)
    time.sleep(1.5)
    assert info(b)["master_link_status"] == "down"
    cli(b).config_set("masterauth", b"abc\x00def")
    wait_for(lambda: info(b)["master_link_status"] == "up", what="the link with the password")


def test_shutdown_waits_for_a_lagging_replica_and_abort_answers_the_waiters(servers):
    """SHUTDOWN with a replica behind waits (writes paused, shutdown_in_milliseconds in INFO,
    the client blocked); SHUTDOWN ABORT answers the waiting clients with Redis's error and the
    server goes on."""
    import os
    import signal
    import socket

    a = servers.tc("--shutdown-timeout", "30")
    b = servers.tc()
    follow(b, a)
    cli(a).set("k", "1")
    wait_for(lambda: in_sync(a, b), what="B")
    os.kill(b.proc.pid, signal.SIGSTOP)
    try:
        cli(a).incr("k")
        s1 = socket.create_connection(("127.0.0.1", a.port))
        s1.sendall(b"SHUTDOWN\r\n")
        wait_for(lambda: info(a, "clients")["blocked_clients"] == 1, what="SHUTDOWN to wait")
        assert info(a, "server")["shutdown_in_milliseconds"] > 0
        assert cli(a).execute_command("SHUTDOWN", "ABORT") in (True, b"OK")
        s1.settimeout(10)
        assert s1.recv(100) == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
        assert "shutdown_in_milliseconds" not in info(a, "server")
        assert cli(a).incr("k") == 3  # writes go on
        try:
            cli(a).execute_command("SHUTDOWN", "ABORT")
            assert False, "no error"
        except redis.ResponseError as e:
            assert str(e) == "No shutdown in progress."
    finally:
        os.kill(b.proc.pid, signal.SIGCONT)


def test_replica_output_limit_below_backlog_size_counts_as_backlog_size(servers):
    """client-output-buffer-limit replica below repl-backlog-size: the hard limit is taken as
    repl-backlog-size (Redis's checkClientOutputBufferLimits), so a replica catching up on a few
    MB of stream is not cut off."""
    a = servers.tc()
    b = servers.tc()
    pa = cli(a)
    pa.config_set("repl-backlog-size", "100mb")
    pa.config_set("client-output-buffer-limit", "replica 256k 0 0")
    follow(b, a)
    import os
    import signal

    big = b"A" * (3 * 1024 * 1024)
    os.kill(b.proc.pid, signal.SIGSTOP)  # its output piles up
    try:
        for _ in range(4):
            pa.set("key", big)
        time.sleep(0.5)
    finally:
        os.kill(b.proc.pid, signal.SIGCONT)
    wait_for(lambda: in_sync(a, b), what="B after the big writes")
    st = info(a, "stats")
    assert st["sync_full"] == 1 and st["sync_partial_ok"] == 0  # never cut off


def test_link_buffer_of_a_big_command_is_freed(servers):
    """The replica's link buffer grown for a big command is freed once it is applied: the
    replica's used_memory stays near its primary's."""
    a = servers.tc()
    b = servers.tc()
    follow(b, a)
    cli(a).set("key", b"x" * (32 * 1024 * 1024))
    wait_for(lambda: in_sync(a, b), what="B")
    wait_for(lambda: info(b, "memory")["used_memory"] <=
             info(a, "memory")["used_memory"] + 10 * 1024 * 1024, timeout=5,
             what="the replica's memory to come down")
