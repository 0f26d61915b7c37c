"""bench/compare starts the servers, runs a preset, prints CPU per request and
ratios, and stops exactly the servers it started."""
import os
import re
import subprocess

from conftest import ROOT


def test_compare_seed003(twinbench, tmp_path):
    js = tmp_path / "c.json"
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "compare"), "--preset", "seed003",
                        "--scale", "0.002", "--skip", "twincache", "--json", str(js),
                        "--twinbench", twinbench],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert re.search(r"^\|  \| redis \| memcached \|$", out, re.M)
    assert re.search(r"^redis\s+\d+\s+[\d.]+\s+[\d.]+$", out, re.M)  # CPU us/op measured
    assert re.search(r"^memcached\s+\d+\s+[\d.]+\s+[\d.]+$", out, re.M)
    assert "ratios: n/a" in out
    pids = [int(p) for p in re.findall(r"--server-pid \S+=(\d+)", out)]
    assert len(pids) == 2
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    assert js.exists()
