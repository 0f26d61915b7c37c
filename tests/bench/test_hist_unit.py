"""Runs the C unit test of the histogram and reply parsers (tests/bench/test_hist.c)."""
import os
import subprocess

import pytest

from conftest import ROOT


def test_hist_c_unit():
    exe = os.path.join(ROOT, "build", "bench", "test_twinbench_hist")
    if not os.access(exe, os.X_OK):
        pytest.skip("build/bench/test_twinbench_hist not built")
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout
    assert "not ok" not in r.stdout
