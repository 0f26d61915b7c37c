"""The HTML report: self-contained, SVG charts are valid XML, and it opens in
headless Chromium (Debian's chromium) without errors; a screenshot is taken."""
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import run_tb


@pytest.fixture(scope="module")
def report(twinbench, redis_server, memcached_server, tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    html = d / "report.html"
    run_tb(twinbench, "--target", f"redis=redis://127.0.0.1:{redis_server.port}",
           "--target", f"memcached=memcache://127.0.0.1:{memcached_server.port}",
           "--preset", "seed002", "--scale", "0.005", "--html", str(html))
    return html


def test_html_self_contained_and_valid_svg(report):
    page = report.read_text()
    assert not re.search(r"<(script|link|img)\b", page)  # nothing external
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(svgs) == 3
    for s in svgs:
        root = ET.fromstring(s)
        assert root.tag.endswith("svg")
    assert page.count("<polyline") == 4  # histogram + CDF, one line per target
    assert page.count('class="bar"') == 10  # 5 thread counts x 2 targets
    for needle in ("redis_version:", "STAT version", "STAT maxconns", "cpu_model:", "kernel:", "--preset seed002",
                   "threads=300,repeats="):
        assert needle in page, needle


def test_html_opens_in_headless_chromium(report, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium not installed (apt-get install chromium)")
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(base + ["--dump-dom", report.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") == 3 and "polyline" in dom.stdout
    assert "Uncaught" not in dom.stderr
    png = tmp_path / "report.png"
    shot = subprocess.run(base + ["--window-size=1280,2400", f"--screenshot={png}", report.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert shot.returncode == 0, shot.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
