"""Fixtures for the snapshot suite (point-in-time BGSAVE under writers, forked and forkless):
the persistence suite's servers (tests/persist/persist_harness.py, on tests/tcharness.py).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/snapshot
TWINCACHE_BIN overrides the binary (default: build/twincache of the repository).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "persist"))
from persist_harness import redis_factory, tc_factory  # noqa: E402,F401 (fixtures)
