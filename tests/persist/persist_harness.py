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
