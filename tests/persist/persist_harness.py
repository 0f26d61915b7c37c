"""The persistence suite's servers, on the one harness (tests/tcharness.py): twincache and
Debian's redis-server on free ports, each in a given directory (its working directory and
--dir), restartable there on the same ports; used by conftest.py and bench_bgsave.py.

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/persist
TWINCACHE_BIN overrides the binary (default: build/twincache of the repository).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402
from tcharness import free_port, twincache_bin  # noqa: E402,F401

# a shutdown that saves a big dataset may be slow under a sanitizer
STOP_TIMEOUT = 60
CLIENT = {"socket_timeout": 60}  # client(): bytes replies, redis-py's own error classes


def make_twincache(dir_, *extra):
    """twincache --port P --memcache-port M --threads 2 --dir dir_ [extra], not yet started:
    .start(), .stop(sig), .restart(); stop() returns the exit code (no check but sanitizers)."""
    tcharness.require_twincache()
    return tcharness.start_twincache("--dir", dir_, *extra, mc=True, dir=dir_, start=False,
                                     stop_timeout=STOP_TIMEOUT, client_defaults=CLIENT)


def make_redis(dir_, *extra):
    """redis-server --port P --dir dir_ --save '' --appendonly no [extra], not yet started."""
    return tcharness.start_redis(*extra, dir=dir_, start=False, stop_timeout=STOP_TIMEOUT,
                                 client_defaults=CLIENT)


def wait_bgsave(r, timeout=60):
    """INFO persistence once no BGSAVE is in progress on client r (fails after timeout s)."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = r.info("persistence")
        if not info["rdb_bgsave_in_progress"]:
            return info
        time.sleep(0.01)
    raise AssertionError("BGSAVE did not finish")


# ---- pytest fixtures, imported by tests/persist and tests/snapshot conftest.py ----
import shutil  # noqa: E402

import pytest  # noqa: E402


def _stop_all(started):
    """Stop every server (by PID); fail with every sanitizer report found."""
    errors = []
    for s in started:
        try:
            s.stop()
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)


def _factory(make, tmp_path):
    started = []

    def start(*args, dir=None):
        srv = make(str(dir or tmp_path), *args)
        started.append(srv)
        return srv.start()

    return start, started


@pytest.fixture
def tc_factory(tmp_path):
    """tc_factory(*args, dir=None) -> a started twincache, stopped after the test (a sanitizer
    report in its output fails the test, whenever it is stopped)."""
    start, started = _factory(make_twincache, tmp_path)
    yield start
    _stop_all(started)


@pytest.fixture
def redis_factory(tmp_path):
    """redis_factory(*args, dir=None) -> a started redis-server 7.0 in dir."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server not installed")
    start, started = _factory(make_redis, tmp_path)
    yield start
    _stop_all(started)
