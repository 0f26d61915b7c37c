"""The script time limit against redis-server 7.0, side by side: busy-reply-threshold (alias
lua-time-limit), -BUSY for other clients, the commands still allowed (allow_busy), SCRIPT KILL
with its OK / NOTBUSY / UNKILLABLE replies, the killed script's error text, a pcall that cannot
catch the kill, SHUTDOWN refused and SHUTDOWN NOSAVE obeyed while a script is busy.

Each scenario runs on a fresh server of each kind started with busy-reply-threshold 200 ms,
twincache with its default threads and again with --threads 1: there every client is served
by the script's own worker, from inside the script's Lua hook, as Redis does."""
import socket
import threading
import time

import pytest
import redis

import tcharness
from conftest import CLIENT

LOOP = "local i = 0 while true do i = i + 1 end"
WRITE_LOOP = "redis.call('SET', 'w', '1') " + LOOP
PCALL_LOOP = "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end"


def call(client, *args):
    try:
        return client.execute_command(*args)
    except redis.exceptions.ConnectionError as e:
        return ("closed", type(e).__name__)
    except redis.exceptions.ResponseError as e:
        return ("error", str(e))


def servers(*tc_args):
    tc = tcharness.start_twincache("--busy-reply-threshold", "200", *tc_args, check=True,
                                   client_defaults=CLIENT)
    rs = tcharness.start_redis("--busy-reply-threshold", "200", client_defaults=CLIENT)
    return tc, rs


class Background:
    """EVAL body in a thread on its own connection; .result once it returns."""

    def __init__(self, srv, body):
        self.client = srv.client(socket_timeout=30)
        assert self.client.ping()  # connected (accepted) before anyone else connects
        self.result = None
        self.thread = threading.Thread(target=self.run, args=(body,), daemon=True)
        self.thread.start()
        time.sleep(0.05)  # the script runs: its worker accepts no other connection now

    def run(self, body):
        self.result = call(self.client, "EVAL", body, 0)

    def join(self):
        self.thread.join(30)
        assert not self.thread.is_alive(), "the script never returned"
        return self.result


def wait_busy(srv):
    """Until a fresh client gets -BUSY (the script passed the threshold)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        c = srv.client(socket_timeout=10)
        r = call(c, "PING")
        c.connection_pool.disconnect()
        if isinstance(r, tuple) and r[1].startswith("BUSY"):
            return
        time.sleep(0.05)
    raise AssertionError("%s never became busy" % srv)


def scenario_kill(srv):
    bg = Background(srv, LOOP)
    wait_busy(srv)
    c = srv.client(socket_timeout=10)
    out = [call(c, "GET", "a"), call(c, "SET", "a", "1"), call(c, "PING"), call(c, "INFO"),
           call(c, "MULTI"), call(c, "GET", "a"), call(c, "EXEC"), call(c, "DISCARD"),
           call(c, "SHUTDOWN"), call(c, "SHUTDOWN", "SAVE")]
    out.append(call(c, "SCRIPT", "KILL"))
    out.append(bg.join())
    out.append(call(c, "PING"))
    out.append(call(c, "SCRIPT", "KILL"))
    out.append(call(c, "GET", "a"))
    c.connection_pool.disconnect()
    return out


def scenario_unkillable(srv):
    bg = Background(srv, WRITE_LOOP)
    wait_busy(srv)
    c = srv.client(socket_timeout=10)
    out = [call(c, "SCRIPT", "KILL"), call(c, "SCRIPT", "KILL")]
    out.append(call(c, "SHUTDOWN", "NOSAVE"))
    try:  # refused at once, as redis-server is gone when SHUTDOWN returns
        socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
        out.append("accepted")
    except OSError:
        out.append("refused")
    out.append(bg.join())
    srv.wait_exit(20)
    out.append(srv.alive())
    return out


def scenario_pcall(srv):
    bg = Background(srv, PCALL_LOOP)
    wait_busy(srv)
    c = srv.client(socket_timeout=10)
    out = [call(c, "SCRIPT", "KILL"), bg.join(), call(c, "PING")]
    c.connection_pool.disconnect()
    return out


LIB = ("#!lua name=spinlib\n"
       "redis.register_function('spin', function(keys, args) local i = 0 "
       "while true do i = i + 1 end end)")


def scenario_function(srv):
    c0 = srv.client()
    call(c0, "FUNCTION", "LOAD", "REPLACE", LIB)
    c0.connection_pool.disconnect()
    client = srv.client(socket_timeout=30)
    assert client.ping()
    result = []
    t = threading.Thread(target=lambda: result.append(call(client, "FCALL", "spin", 0, "a")),
                         daemon=True)
    t.start()
    time.sleep(0.05)
    wait_busy(srv)
    c = srv.client(socket_timeout=10)
    stats = call(c, "FUNCTION", "STATS")
    running = dict(zip(stats[1][::2], stats[1][1::2]))
    out = [call(c, "PING"), call(c, "SCRIPT", "KILL"), running[b"name"], running[b"command"],
           running[b"duration_ms"] > 0, call(c, "FUNCTION", "KILL")]
    t.join(30)
    out.append(result[0])
    out.append(call(c, "FUNCTION", "KILL"))
    out.append(call(c, "FUNCTION", "DELETE", "spinlib"))
    c.connection_pool.disconnect()
    return out


def scenario_config(srv):
    c = srv.client()
    out = [call(c, "CONFIG", "GET", "busy-reply-threshold"),
           call(c, "CONFIG", "GET", "lua-time-limit"),
           call(c, "CONFIG", "SET", "lua-time-limit", "300"),
           call(c, "CONFIG", "GET", "busy-reply-threshold"),
           call(c, "CONFIG", "SET", "busy-reply-threshold", "-1"),
           call(c, "CONFIG", "SET", "busy-reply-threshold", "200"),
           call(c, "SCRIPT", "KILL")]
    c.connection_pool.disconnect()
    return out


@pytest.mark.parametrize("threads", [(), ("--threads", "1")], ids=["threads", "one-thread"])
@pytest.mark.parametrize("scenario", [scenario_kill, scenario_unkillable, scenario_pcall,
                                      scenario_function, scenario_config])
def test_time_limit_as_redis(scenario, threads):
    tc, rs = servers(*threads)
    try:
        a, b = scenario(tc), scenario(rs)
        assert a == b, "\n twincache: %r\n redis:     %r" % (a, b)
    finally:
        for srv in (tc, rs):
            if srv.alive():
                srv.stop(check=False)
        tc.check_sanitizer()


def test_short_script_is_waited_for_not_refused():
    """Under the threshold, other clients wait for the script instead of getting -BUSY."""
    tc = tcharness.start_twincache("--busy-reply-threshold", "5000", check=True,
                                   client_defaults=CLIENT)
    try:
        c = tc.client()
        bg = Background(tc, "local t = redis.call('TIME') local s = t[1] * 1000000 + t[2] "
                            "repeat local n = redis.call('TIME') until "
                            "n[1] * 1000000 + n[2] - s > 300000 return 'done'")
        time.sleep(0.1)
        assert call(c, "SET", "k", "v") == b"OK"
        assert bg.join() == b"done"
        c.connection_pool.disconnect()
    finally:
        tc.stop()


def test_client_read_with_the_script_is_served_while_busy():
    """--threads 1: a PING sent at the same time as the EVAL (read in the same loop turn, its
    input not yet run when the script starts) is answered while the script is busy, and the
    SCRIPT KILL sent after it gets through (it waited for the script, which never ended)."""
    tc = tcharness.start_twincache("--busy-reply-threshold", "50", "--threads", "1",
                                   check=True, client_defaults=CLIENT)
    try:
        for _ in range(20):
            a = socket.create_connection(("127.0.0.1", tc.port), timeout=10)
            b = socket.create_connection(("127.0.0.1", tc.port), timeout=10)
            body = LOOP.encode()
            a.sendall(b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(body), body))
            b.sendall(b"*1\r\n$4\r\nPING\r\n")
            first = b.recv(256)
            assert first in (b"+PONG\r\n",) or first.startswith(b"-BUSY"), first
            while not first.startswith(b"-BUSY"):
                time.sleep(0.01)
                b.sendall(b"*1\r\n$4\r\nPING\r\n")
                first = b.recv(256)
            b.sendall(b"*2\r\n$6\r\nSCRIPT\r\n$4\r\nKILL\r\n")
            assert b.recv(256) == b"+OK\r\n"
            assert b"killed by user" in a.recv(512)
            a.close()
            b.close()
    finally:
        tc.stop()
