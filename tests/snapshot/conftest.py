"""Fixtures for the snapshot suite (point-in-time BGSAVE under writers, forked and forkless):
the persistence suite's servers (tests/persist/persist_harness.py, on tests/tcharness.py).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/snapshot
TWINCACHE_BIN overrides the binary (default: build/twincache of the repository).
"""

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "persist"))
from persist_harness import make_redis, make_twincache  # noqa: E402


def _stop_all(started):
    errors = []
    for s in started:
        try:
            s.stop()
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)


@pytest.fixture
def tc_factory(tmp_path):
    """tc_factory(*args, dir=None) -> a started twincache, stopped after the test."""
    started = []

    def start(*args, dir=None):
        d = str(dir or tmp_path)
        srv = make_twincache(d, *args)
        started.append(srv)
        return srv.start()

    yield start
    _stop_all(started)


@pytest.fixture
def redis_factory(tmp_path):
    """redis_factory(*args, dir=None) -> a started redis-server 7.0 in dir."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed")
    started = []

    def start(*args, dir=None):
        d = str(dir or tmp_path)
        srv = make_redis(d, *args)
        started.append(srv)
        return srv.start()

    yield start
    _stop_all(started)
