"""The memcached-protocol suite's servers, on the one harness (tests/tcharness.py), and a raw
socket client.

twincache: TWINCACHE_BIN (default build/twincache) with --port/--memcache-port on free ports,
--threads 2 and TC_SERVER_ARGS. memcached: Debian's /usr/bin/memcached started the same way (for
differential tests). Both are stopped by PID; twincache must exit 0 without a sanitizer report.
"""

import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402
from tcharness import free_port, twincache_bin  # noqa: E402,F401


def jvm_skip_reason():
    """Why the JVM client scenarios skip this run, or None. tests/mc also runs against the TSan
    build and with TC_SERVER_ARGS (--io-uring no); a JVM scenario runs once per CI, on the
    plain release run (a JVM start costs seconds, and the client's bytes are the same)."""
    binary = str(twincache_bin())
    if "build-tsan" in binary or "build-asan" in binary:
        return "JVM clients run on the release build only (TWINCACHE_BIN=%s)" % binary
    if os.environ.get("TC_SERVER_ARGS"):
        return "JVM clients run once, without TC_SERVER_ARGS"
    return None


def start_twincache(*extra):
    """A started twincache with a RESP (.port) and a memcached port (.mc_port); stop() checks a
    clean exit by default."""
    tcharness.require_twincache()
    return tcharness.start_twincache(*extra, mc=True, check=True)


def start_memcached(*extra):
    return tcharness.start_memcached(*extra)


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
