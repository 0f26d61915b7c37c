"""Fixtures for the replication tests (tests/repl): servers on the one harness tests/tcharness.py,
stopped by PID after each test (a sanitizer report in a twincache's output fails the test).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/repl
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402

tcharness.require_twincache()


@pytest.fixture
def servers():
    """servers.tc(*args, mc=False) / servers.redis(*args): started servers, all stopped (by PID)
    after the test."""
    started = []

    class S:
        @staticmethod
        def tc(*args, mc=False, **kw):
            s = tcharness.start_twincache("--repl-diskless-sync-delay", "0", *args, mc=mc,
                                          **kw)
            started.append(s)
            return s

        @staticmethod
        def redis(*args, **kw):
            s = tcharness.start_redis("--repl-diskless-sync-delay", "0",
                                      "--enable-debug-command", "yes", *args, **kw)
            started.append(s)
            return s

        @staticmethod
        def track(s):
            started.append(s)
            return s

    yield S
    errors = []
    for s in reversed(started):
        try:
            if s.alive():
                s.stop(sanitizer=s.kind == "twincache")
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)
