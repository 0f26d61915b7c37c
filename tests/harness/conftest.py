"""Tests of the one test harness (tests/tcharness.py) itself: no twincache needed.

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/harness
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
