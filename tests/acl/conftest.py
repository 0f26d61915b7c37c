"""Fixtures for the ACL tests: one twincache and one Debian redis-server 7.0 per session, side
by side on free ports, stopped by PID (the one harness tests/tcharness.py).

    TWINCACHE_BIN   the binary under test (default <repo>/build/twincache)

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/acl
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402

# bytes replies, exact error texts, no redis-py reply conversions
CLIENT = {"decode": False, "exact_errors": True, "raw": True}


def reply(c, *args):
    """A command's reply, ("error", text) or ("closed",): comparable across servers."""
    import redis
    try:
        return c.cmd(*args)
    except redis.exceptions.ResponseError as e:
        return ("error", str(e))
    except (redis.exceptions.ConnectionError, OSError):
        return ("closed",)


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


@pytest.fixture
def tc(tc_server):
    c = tc_server.client()
    yield c
    c.close()


@pytest.fixture
def rs(redis_server):
    c = redis_server.client()
    yield c
    c.close()
