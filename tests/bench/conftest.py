"""Fixtures for the twinbench tests: the binary, and Debian's redis-server and
memcached started on free loopback ports (stopped by PID at the end)."""
import os
import shutil
import socket
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def twinbench_path():
    p = os.environ.get("TWINBENCH") or os.path.join(ROOT, "build", "twinbench")
    return p


@pytest.fixture(scope="session")
def twinbench():
    p = twinbench_path()
    if not os.access(p, os.X_OK):
        pytest.skip(f"twinbench not built at {p} (cmake --preset release && cmake --build build)")
    return p


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open")


class Server:
    def __init__(self, argv, port):
        self.port = port
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid
        try:
            wait_port(port, self.proc)
        except Exception:
            self.stop()
            raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # signals self.pid only
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_redis():
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    return Server([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--daemonize", "no", "--logfile", ""], port)


def start_memcached(threads=1):
    exe = shutil.which("memcached") or "/usr/bin/memcached"
    port = free_port()
    return Server([exe, "-u", "root" if os.geteuid() == 0 else os.environ.get("USER", "nobody"),
                   "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", str(threads),
                   "-m", "256"], port)


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
    exe = os.path.join(ROOT, "build", "twincache")
    if not os.access(exe, os.X_OK):
        pytest.skip("build/twincache not built yet")
    port, mport = free_port(), free_port()
    s = Server([exe, "--port", str(port), "--memcache-port", str(mport), "--threads", "1"], port)
    try:
        wait_port(mport, s.proc)
    except Exception:
        s.stop()
        pytest.skip("twincache does not serve the memcached port")
    s.mport = mport
    # twincache is written concurrently: only test twinbench against it once it
    # does the basics on both ports
    try:
        import redis
        from pymemcache.client.base import Client
        r = redis.Redis(port=port, socket_timeout=2)
        assert r.set("tb:probe", "1") and r.get("tb:probe") == b"1"
        c = Client(("127.0.0.1", mport), timeout=2)
        assert c.set("tb:probe", b"1", noreply=False) and c.get("tb:probe") == b"1"
        assert s.proc.poll() is None
    except Exception as e:  # noqa: BLE001
        s.stop()
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
