"""Start and stop the servers the memcached-protocol tests talk to, and a raw socket client.

twincache: TWINCACHE_BIN (default build/twincache) with --port/--memcache-port on free ports and
--threads 2. memcached: Debian's /usr/bin/memcached started the same way (for differential
tests). Both are stopped by PID; twincache must exit 0 without a sanitizer report.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMCACHED = shutil.which("memcached") or "/usr/bin/memcached"


def twincache_bin():
    path = os.environ.get("TWINCACHE_BIN", "build/twincache")
    if not os.path.isabs(path):
        path = os.path.join(ROOT, path)
    return path


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=0.5)
            s.sendall(b"version\r\n")
            s.settimeout(2)
            if s.recv(100).startswith(b"VERSION"):
                s.close()
                return True
            s.close()
        except OSError:
            time.sleep(0.05)
    return False


class Server:
    """A started server process: .mc_port (memcached protocol), .port (RESP, twincache only)."""

    def __init__(self, argv, mc_port, port=None, name="twincache"):
        self.name = name
        self.mc_port = mc_port
        self.port = port
        self.log = tempfile.NamedTemporaryFile(prefix=name + "-", suffix=".log", delete=False)
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.stopped = False
        if not wait_port(mc_port, self.proc):
            out = self.output()
            self.kill()
            raise RuntimeError("%s did not start: %s\n%s" % (name, argv, out[-3000:]))

    def output(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.stopped = True

    def stop(self, check=True):
        """SIGTERM by PID; for twincache check a clean exit and no sanitizer report."""
        if self.stopped:
            return
        self.stopped = True
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                raise AssertionError("%s did not exit on SIGTERM" % self.name)
        out = self.output()
        os.unlink(self.log.name)
        if check and self.name == "twincache":
            assert self.proc.returncode == 0, "exit code %r\n%s" % (self.proc.returncode, out[-4000:])
            assert not re.search(r"ERROR: (Address|Leak|Undefined)Sanitizer|WARNING: ThreadSanitizer|runtime error:", out), out[-6000:]


def start_twincache(*extra):
    port, mc_port = free_port(), free_port()
    argv = [twincache_bin(), "--port", str(port), "--memcache-port", str(mc_port), "--threads", "2"]
    argv += os.environ.get("TC_SERVER_ARGS", "").split()  # e.g. "--io-uring no", as tests/integration
    argv += list(extra)
    return Server(argv, mc_port, port, "twincache")


def start_memcached(*extra):
    mc_port = free_port()
    argv = [MEMCACHED, "-p", str(mc_port), "-U", "0", "-l", "127.0.0.1", "-t", "2"]
    if os.geteuid() == 0:
        argv += ["-u", "nobody"]
    argv += list(extra)
    return Server(argv, mc_port, None, "memcached")


class Raw:
    """A raw memcached-protocol connection."""

    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def read_until(self, suffix, timeout=5.0):
        """Read until the received bytes end with suffix; returns them (and clears the buffer)."""
        deadline = time.time() + timeout
        while not self.buf.endswith(suffix):
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no %r after %r" % (suffix, self.buf[-300:]))
            self.s.settimeout(left)
            d = self.s.recv(1 << 20)
            if not d:
                raise ConnectionError("closed after %r" % self.buf[-300:])
            self.buf += d
        out, self.buf = self.buf, b""
        return out

    def call(self, data, suffix=b"\r\n"):
        self.send(data)
        return self.read_until(suffix)

    def sync(self, data):
        """Send data followed by mn and return everything before the MN line."""
        self.send(data + b"mn\r\n")
        return self.read_until(b"MN\r\n")[:-4]

    def read_to_close(self, timeout=5.0):
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("still open after %r" % self.buf[-300:])
            self.s.settimeout(left)
            try:
                d = self.s.recv(1 << 20)
            except ConnectionResetError:
                d = b""
            if not d:
                out, self.buf = self.buf, b""
                return out
            self.buf += d

    def close(self):
        self.s.close()
