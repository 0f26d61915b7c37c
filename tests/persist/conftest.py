"""Fixtures for the persistence tests (servers: persist_harness.py, on the one harness
tests/tcharness.py).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/persist
TWINCACHE_BIN overrides the binary (default: build/twincache of the repository).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persist_harness import redis_factory, tc_factory  # noqa: E402,F401 (fixtures)
