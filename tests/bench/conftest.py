"""Fixtures for the twinbench tests: the binary, and Debian's redis-server and memcached (and
twincache) started on free loopback ports by the one harness tests/tcharness.py (output kept
in a log file, stopped by PID at the end)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tcharness  # noqa: E402


def twinbench_path():
    """TWINBENCH (set by ctest), else TWINBENCH_BIN (as tests/pool), else build/twinbench."""
    return str(tcharness.repo_path("TWINBENCH", os.environ.get("TWINBENCH_BIN")
                                   or "build/twinbench"))


@pytest.fixture(scope="session")
def twinbench():
    p = twinbench_path()
    if not os.access(p, os.X_OK):
        pytest.skip(f"twinbench not built at {p} (cmake --preset release && cmake --build build)")
    return p


def start_redis():
    return tcharness.start_redis()


def start_memcached(threads=1):
    return tcharness.start_memcached("-m", "256", threads=threads)


@pytest.fixture(scope="session")
def redis_server():
    if not (shutil.which("redis-server") or os.path.exists("/usr/bin/redis-server")):
        pytest.skip("redis-server not installed")
    s = start_redis()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def memcached_server():
    if not (shutil.which("memcached") or os.path.exists("/usr/bin/memcached")):
        pytest.skip("memcached not installed")
    s = start_memcached()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def memcached_pair():
    a = start_memcached()
    b = start_memcached()
    yield a, b
    a.stop()
    b.stop()


@pytest.fixture(scope="session")
def twincache_server():
    """twincache (TWINCACHE_BIN, --threads 1) with a RESP and a memcached port (.mport); it must
    exit 0 without a sanitizer report at the end."""
    if not os.access(tcharness.twincache_bin(), os.X_OK):
        pytest.skip("%s not built yet" % tcharness.twincache_bin())
    s = tcharness.start_twincache(mc=True, threads=1, check=True)
    s.mport = s.mc_port
    # only test twinbench against twincache once it does the basics on both ports
    try:
        import redis
        from pymemcache.client.base import Client
        r = redis.Redis(port=s.port, socket_timeout=2)
        assert r.set("tb:probe", "1") and r.get("tb:probe") == b"1"
        c = Client(("127.0.0.1", s.mc_port), timeout=2)
        assert c.set("tb:probe", b"1", noreply=False) and c.get("tb:probe") == b"1"
        assert s.alive()
    except Exception as e:  # noqa: BLE001
        s.stop(check=False)
        pytest.skip(f"twincache not functional yet: {e!r}")
    yield s
    s.stop()


def run_tb(twinbench, *args, timeout=300, check=True):
    r = subprocess.run([twinbench, "--no-progress", *args], capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"twinbench {' '.join(args)} failed ({r.returncode}):\n"
                             f"{r.stdout}\n{r.stderr}")
    return r
