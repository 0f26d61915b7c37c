"""Fixtures for the persistence tests (servers: persist_harness.py).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/persist
TWINCACHE_BIN overrides the binary (default: build/twincache of the repository).
"""

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persist_harness import make_redis, make_twincache  # noqa: E402


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
    for s in started:
        s.stop()
    for s in started:
        out = s.output()
        assert "AddressSanitizer" not in out and "runtime error:" not in out, out[-5000:]


@pytest.fixture
def redis_factory(tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed")
    started = []

    def start(*args, dir=None):
        d = str(dir or tmp_path)
        srv = make_redis(d, *args)
        started.append(srv)
        return srv.start()

    yield start
    for s in started:
        s.stop()
