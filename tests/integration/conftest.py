"""Fixtures for the Redis-protocol integration tests (harness.py starts the servers, on the one
harness tests/tcharness.py).

Each test module gets its own freshly started server (fixture `server`), so one module's crash
or leftover configuration never hides in another's results, and teardown checks that exactly
that process exits cleanly on SIGTERM (exit code 0, no sanitizer report). After each test, a
server that died or wrote a sanitizer report fails that test.

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/integration
Against Debian's redis-server:  TC_SERVER=redis /usr/bin/python3 -m pytest tests/integration
"""

import subprocess

import pytest

pytest.register_assert_rewrite("itutil", "resp", "harness")

from harness import IS_REDIS, start_server, twincache_bin  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sanitize: also run against the ASan+UBSan build (scripts/test.sh selects "
        "these with -m sanitize): protocol, hostile input, concurrency")


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server():
    """The module's server: started before the module's first test, stopped (and checked for a
    clean exit) after its last."""
    srv = start_server()
    yield srv
    srv.stop(check=True)


@pytest.fixture(autouse=True)
def _server_still_alive(request):
    """After every test that used the module server, fail loudly if the server died or wrote a
    sanitizer report."""
    yield
    if "server" in request.fixturenames:
        try:
            request.getfixturevalue("server").check_running()
        except AssertionError as e:
            pytest.fail(str(e), pytrace=False)


@pytest.fixture
def start_extra_server():
    """Factory: start_extra_server("--requirepass", "pw", config_file=None) starts a dedicated
    server that is stopped and checked for a clean exit after the test (unless the test
    already stopped it)."""
    started = []

    def start(*args, config_file=None):
        srv = start_server(args, config_file=config_file)
        started.append(srv)
        return srv

    yield start
    errors = []
    for srv in started:
        try:
            srv.stop(check=True)
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)


@pytest.fixture
def r(server):
    """redis-py client (str replies, exact error texts) on a flushed server, db 0."""
    c = server.client()
    c.flushall()
    yield c
    c.close()
    c.connection_pool.disconnect()


@pytest.fixture
def rb(server):
    """redis-py client returning bytes (exact error texts); does not flush."""
    c = server.client(decode=False)
    yield c
    c.connection_pool.disconnect()


@pytest.fixture
def raw(server):
    """Factory of raw RESP connections to the module server, all closed after the test."""
    conns = []

    def make(timeout=5.0):
        c = server.raw(timeout=timeout)
        conns.append(c)
        return c

    yield make
    for c in conns:
        c.close()


def pytest_report_header(config):
    if IS_REDIS:
        try:
            v = subprocess.run(["redis-server", "--version"], capture_output=True, text=True,
                               timeout=5).stdout.strip()
        except OSError as e:
            v = "redis-server not runnable: %s" % e
        return "integration server: redis (%s)" % v
    return "integration server: twincache (%s)" % twincache_bin()
