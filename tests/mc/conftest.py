"""Fixtures for the memcached-protocol tests (mcharness.py starts the servers).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/mc
Another binary:                 TWINCACHE_BIN=build-asan/twincache /usr/bin/python3 -m pytest -m sanitize tests/mc
"""

import pytest

pytest.register_assert_rewrite("mcharness")

from mcharness import Raw, start_memcached, start_twincache  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sanitize: also run against the ASan+UBSan build: protocol, hostile input, "
        "concurrency")


@pytest.fixture(scope="module")
def tc():
    """The module's twincache (stopped and checked for a clean exit after the module)."""
    srv = start_twincache()
    yield srv
    srv.stop(check=True)


@pytest.fixture(scope="module")
def memcached():
    srv = start_memcached()
    yield srv
    srv.stop(check=False)


@pytest.fixture(autouse=True)
def _tc_alive(request):
    yield
    if "tc" in request.fixturenames:
        srv = request.getfixturevalue("tc")
        if not srv.stopped and not srv.alive():
            pytest.fail("twincache died during this test:\n" + srv.output()[-4000:], pytrace=False)


@pytest.fixture
def raw(tc):
    c = Raw(tc.mc_port)
    c.sync(b"flush_all\r\n")
    yield c
    c.close()
