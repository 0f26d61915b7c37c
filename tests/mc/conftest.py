"""Fixtures for the memcached-protocol tests (mcharness.py starts the servers, on the one harness
tests/tcharness.py).

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
    """After every test that used the module's twincache: fail if it died or wrote a sanitizer
    report."""
    yield
    if "tc" in request.fixturenames:
        try:
            request.getfixturevalue("tc").check_running()
        except AssertionError as e:
            pytest.fail(str(e), pytrace=False)


@pytest.fixture
def raw(tc):
    c = Raw(tc.mc_port)
    c.sync(b"flush_all\r\n")
    yield c
    c.close()
