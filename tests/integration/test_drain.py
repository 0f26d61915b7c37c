"""Big pipelined replies and graceful shutdown: replies that reference large values (written
with writev, without copying) stay intact however the output buffer is reused while they wait,
a pipeline paused at the output threshold goes on by itself once the client reads, and SIGTERM
answers every request received before it, then exits 0 and refuses new connections."""

import os
import signal
import socket
import time

import pytest

from harness import start_server

pytestmark = pytest.mark.sanitize

IS_REDIS = os.environ.get("TC_SERVER") == "redis"
VALUE = b"x" * 100000
ONE = b"$100000\r\n" + VALUE + b"\r\n"


def set_big(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n" % (len(VALUE), VALUE))
        assert s.recv(16) == b"+OK\r\n"


def read_all(sock, want, timeout=60):
    data = bytearray()
    sock.settimeout(timeout)
    while len(data) < want:
        d = sock.recv(1 << 20)
        if not d:
            break
        data += d
    return bytes(data)


@pytest.fixture
def srv():
    s = start_server(["--threads", "2"])
    yield s
    s.stop(check=True)


def test_pipelined_big_replies_intact(srv):
    """300 GETs of a 100 kB value in one write: 30 MB of replies, far past the 4 MiB at which
    input pauses. Every reply arrives whole and in order, without the client sending more."""
    set_big(srv.port)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as c:
        c.sendall(b"GET k\r\n" * 300)
        time.sleep(0.5)  # let the output pile up and the server pause
        data = read_all(c, len(ONE) * 300)
        assert len(data) == len(ONE) * 300
        assert data == ONE * 300


def test_sigterm_answers_what_was_received():
    if IS_REDIS:
        pytest.skip("Redis closes clients at shutdown without answering what they sent")
    s = start_server(["--threads", "2", "--save", ""])
    set_big(s.port)
    c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    c.sendall(b"GET k\r\n" * 200)
    time.sleep(0.3)
    os.kill(s.pid, signal.SIGTERM)
    time.sleep(0.3)
    with pytest.raises(OSError):  # no longer listening while it drains
        socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
    data = read_all(c, len(ONE) * 200 + 1)  # up to EOF
    c.close()
    assert data == ONE * 200
    assert s.wait_exit(10) == 0
    s.stop(check=True)
