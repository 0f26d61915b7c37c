"""Fixtures for the data-type tests: one twincache and one Debian redis-server per session,
both on free ports, stopped by PID at the end (servers: the one harness tests/tcharness.py).

    TWINCACHE_BIN   the binary under test (default <repo>/build/twincache)

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/types
"""

import os
import sys

import pytest
import redis

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402
from tcharness import ExactErrorParser, free_port, twincache_bin  # noqa: E402,F401

# client(): bytes replies, exact error texts, no redis-py reply conversions
CLIENT = {"decode": False, "exact_errors": True, "raw": True}


def Server(kind, argv, port, log):  # noqa: N802 (was a class)
    """A started server from a full command line (kept for tests written before tc_factory),
    its output in log; stop() returns the exit code."""
    return tcharness.Server(argv, port=port, kind=kind, logfile=log, dir=os.path.dirname(log),
                            client_defaults=CLIENT).start()


@pytest.fixture
def tc_factory():
    """tc_factory(*args) -> a started twincache (--memcache-port 0 --threads 2, then args),
    stopped after the test: it must exit 0 without a sanitizer report."""
    started = []

    def start(*args):
        srv = tcharness.start_twincache(*args, check=True, client_defaults=CLIENT)
        started.append(srv)
        return srv

    yield start
    errors = []
    for srv in started:
        try:
            srv.stop()
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)


@pytest.fixture(scope="session")
def tc_server():
    tcharness.require_twincache()
    srv = tcharness.start_twincache(check=True, client_defaults=CLIENT)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def redis_server():
    srv = tcharness.start_redis(client_defaults=CLIENT)
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _alive(request):
    """After every test that used the session's twincache: fail if it died or wrote a sanitizer
    report."""
    yield
    if "tc_server" in request.fixturenames:
        try:
            request.getfixturevalue("tc_server").check_running()
        except AssertionError as e:
            pytest.fail(str(e), pytrace=False)


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
