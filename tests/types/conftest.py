"""Fixtures for the data-type tests: one twincache and one Debian redis-server per session,
both on free ports, stopped by PID at the end.

    TWINCACHE_BIN   the binary under test (default <repo>/build/twincache)

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/types
"""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

REPO_ROOT = Path(__file__).resolve().parents[2]
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def twincache_bin():
    p = Path(os.environ.get("TWINCACHE_BIN", "build/twincache"))
    return p if p.is_absolute() else REPO_ROOT / p


class ExactErrorParser(redis.connection.PythonParser):
    """Keep an error reply's full text as the message of a plain ResponseError."""

    def parse_error(self, response):
        return redis.exceptions.ResponseError(response)


class Server:
    def __init__(self, kind, argv, port, log):
        self.kind, self.port, self.logpath = kind, port, log
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("%s did not start:\n%s" % (kind, self.output()))
            time.sleep(0.05)

    def output(self):
        if not self.log.closed:
            self.log.flush()
        return Path(self.logpath).read_text(errors="replace")[-5000:]

    def client(self, decode=False, raw=True):
        pool = redis.ConnectionPool(host="127.0.0.1", port=self.port, decode_responses=decode,
                                    parser_class=ExactErrorParser, socket_timeout=30)
        c = redis.Redis(connection_pool=pool)
        if raw:
            c.response_callbacks = {}
        return c

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture(scope="session")
def tc_server(tmp_path_factory):
    binary = twincache_bin()
    if not binary.exists():
        pytest.exit("twincache binary %s not found (set TWINCACHE_BIN)" % binary, returncode=2)
    port = free_port()
    srv = Server("twincache", [str(binary), "--port", str(port), "--memcache-port", "0",
                               "--threads", "2"], port,
                 tmp_path_factory.mktemp("tc") / "twincache.log")
    yield srv
    code = srv.stop()
    out = srv.output()
    assert not any(m in out for m in SANITIZER_MARKERS), out
    assert code == 0, "twincache exited with %r:\n%s" % (code, out)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    port = free_port()
    d = tmp_path_factory.mktemp("redis")
    srv = Server("redis", ["redis-server", "--port", str(port), "--save", "", "--appendonly",
                           "no", "--dir", str(d)], port, d / "redis.log")
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _alive(request):
    yield
    if "tc_server" in request.fixturenames:
        srv = request.getfixturevalue("tc_server")
        if not srv.alive():
            pytest.fail("twincache died:\n" + srv.output(), pytrace=False)


@pytest.fixture
def r(tc_server):
    """redis-py client (decoded replies, redis-py's reply parsing) on a flushed twincache."""
    c = tc_server.client(decode=True, raw=False)
    c.flushall()
    yield c
    c.connection_pool.disconnect()


def call(client, *args):
    """Raw reply of one command, or ('error', text)."""
    try:
        return client.execute_command(*args)
    except redis.exceptions.ResponseError as e:
        return ("error", str(e))


def canon(x):
    """Order-insensitive form of a reply (for replies whose order Redis leaves unspecified)."""
    if isinstance(x, list):
        return sorted((canon(v) for v in x), key=repr)
    return x


class Diff:
    """Run every command on twincache and redis-server and compare the replies."""

    def __init__(self, tc, rs):
        self.tc, self.rs = tc, rs

    def __call__(self, *args, unordered=False, pairs=False):
        a, b = call(self.tc, *args), call(self.rs, *args)
        if pairs and isinstance(a, list) and isinstance(b, list):
            a = sorted(zip(a[::2], a[1::2]))
            b = sorted(zip(b[::2], b[1::2]))
        elif unordered:
            a, b = canon(a), canon(b)
        assert a == b, "%r:\n twincache: %r\n redis:     %r" % (args, a, b)
        return a

    def both(self, *args):
        """Run on both, compare nothing (random replies)."""
        return call(self.tc, *args), call(self.rs, *args)


@pytest.fixture
def d(tc_server, redis_server):
    tc, rs = tc_server.client(), redis_server.client()
    tc.flushall()
    rs.flushall()
    yield Diff(tc, rs)
    tc.connection_pool.disconnect()
    rs.connection_pool.disconnect()
