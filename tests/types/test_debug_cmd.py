"""DEBUG subcommands test tools use, against redis-server 7.0 (started with
enable-debug-command yes): POPULATE (keys, values, padding, existing keys kept, errors), ERROR,
LOG, SLEEP, SET-ACTIVE-EXPIRE (0 stops active expiry: an expired key stays counted until
touched; 1 resumes it)."""
import time

import pytest

import tcharness
from conftest import CLIENT, call


@pytest.fixture(scope="module")
def pair():
    tc = tcharness.start_twincache("--hz", "50", check=True, client_defaults=CLIENT)
    rs = tcharness.start_redis("--enable-debug-command", "yes", "--hz", "50",
                               client_defaults=CLIENT)
    yield tc.client(), rs.client()
    tc.stop()
    rs.stop()


def both(pair, *args):
    return [call(c, *args) for c in pair]


def test_populate_error_log_sleep(pair):
    both(pair, "FLUSHALL")
    for args in (("POPULATE", 3), ("POPULATE", 2, "pfx", 10), ("POPULATE", 2, "key", 5),
                 ("POPULATE", "x"), ("POPULATE", -1), ("POPULATE", 1, "p", "x"),
                 ("ERROR", "FOO bar"), ("LOG", "hello"), ("SLEEP", 0), ("SLEEP", "0.01"),
                 ("SET-ACTIVE-EXPIRE", 1), ("NOSUCH",)):
        a, b = both(pair, "DEBUG", *args)
        assert a == b, args
    for args in (("DBSIZE",), ("GET", "key:0"), ("GET", "key:1"), ("GET", "pfx:1"),
                 ("GET", "key:2")):
        a, b = both(pair, *args)
        assert a == b, args


def test_set_active_expire(pair):
    both(pair, "FLUSHALL")
    both(pair, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
    both(pair, "SET", "e", "v", "PX", 50)
    time.sleep(0.5)
    assert both(pair, "DBSIZE") == [1, 1]  # not expired in the background
    both(pair, "DEBUG", "SET-ACTIVE-EXPIRE", 1)
    deadline = time.time() + 5
    while time.time() < deadline and both(pair, "DBSIZE") != [0, 0]:
        time.sleep(0.05)
    assert both(pair, "DBSIZE") == [0, 0]
