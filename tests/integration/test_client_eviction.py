"""Client eviction (maxmemory-clients) as Redis 7.0 does it: a client's memory (query buffer,
output buffer, MULTI queue, ...) counts towards the limit, the largest evictable clients are
closed first, CLIENT NO-EVICT exempts one, CONFIG SET applies a lower limit at once, INFO
counts evicted_clients (reset by CONFIG RESETSTAT). Runs against redis-server too
(TC_SERVER=redis)."""

import socket
import time

import pytest

from harness import start_server
from itutil import wait_until

KB = 1024
MB = 1024 * KB


@pytest.fixture
def srv():
    s = start_server()
    yield s
    s.stop()


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)


def client_row(r, name):
    for line in r.execute_command("CLIENT", "LIST").splitlines():
        f = fields(line)
        if f.get("name") == name:
            return f
    return None


def half_sent_client(port, name, size):
    """A connection named name that sent a SET whose value (size bytes) never completes."""
    s = socket.create_connection(("127.0.0.1", port))
    cmd = b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$%d\r\n%s\r\n" % (len(name), name.encode())
    s.sendall(cmd)
    assert s.recv(16) == b"+OK\r\n"
    try:
        s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % size + b"v" * (size - 1))
    except (BrokenPipeError, ConnectionResetError):
        pass  # evicted while it was still sending (as Redis closes it): the caller checks that
    return s


def test_big_query_buffer_is_evicted(srv):
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    r.execute_command("CONFIG", "SET", "maxmemory-clients", str(1 * MB))
    s = half_sent_client(srv.port, "big", 2 * MB)
    wait_until(lambda: client_row(r, "big") is None, timeout=10)
    assert int(r.info("stats")["evicted_clients"]) == 1
    s.settimeout(5)
    try:
        data = s.recv(16)
    except OSError:
        data = b""
    assert data == b""  # closed by the server
    s.close()
    r.execute_command("CONFIG", "RESETSTAT")
    assert int(r.info("stats")["evicted_clients"]) == 0


def test_no_evict_client_stays_and_counts(srv):
    r = srv.client()
    r.execute_command("CLIENT", "NO-EVICT", "on")
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$4\r\nkeep\r\n"
              b"*3\r\n$6\r\nCLIENT\r\n$8\r\nNO-EVICT\r\n$2\r\non\r\n")
    time.sleep(0.1)
    assert s.recv(64) == b"+OK\r\n+OK\r\n"
    s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (2 * MB) + b"v" * (MB + 5))
    wait_until(lambda: int(client_row(r, "keep")["tot-mem"]) > MB, timeout=10)
    r.execute_command("CONFIG", "SET", "maxmemory-clients", str(512 * KB))
    row = client_row(r, "keep")
    assert row is not None and "e" in row["flags"]
    assert int(row["tot-mem"]) > 512 * KB
    wait_until(lambda: int(r.info("memory")["mem_clients_normal"]) > MB, timeout=5)
    s.close()


def test_lower_limit_evicts_largest_first(srv):
    r = srv.client()
    r.execute_command("CLIENT", "SETNAME", "control")
    r.execute_command("CLIENT", "NO-EVICT", "on")
    socks = [half_sent_client(srv.port, "small%d" % i, 256 * KB) for i in range(3)]
    socks.append(half_sent_client(srv.port, "large", 2 * MB))
    wait_until(lambda: int(client_row(r, "large")["tot-mem"]) >= 2 * MB - 1, timeout=10)
    for i in range(3):
        wait_until(lambda: int(client_row(r, "small%d" % i)["tot-mem"]) >= 256 * KB - 1,
                   timeout=10)
    total = sum(int(fields(line)["tot-mem"])
                for line in r.execute_command("CLIENT", "LIST").splitlines())
    # room for everything but the large client: exactly that one goes, at once
    r.execute_command("CONFIG", "SET", "maxmemory-clients", str(total - 2 * MB + 64 * KB))
    assert client_row(r, "large") is None
    for i in range(3):
        assert client_row(r, "small%d" % i) is not None
    assert int(r.info("stats")["evicted_clients"]) == 1
    for s in socks:
        s.close()


def test_big_argument_query_buffer_is_sized_exactly(srv):
    """Redis sizes a big argument's query buffer for the whole argument once its header is
    parsed and shows qbuf from the argument's start: tot-mem counts the argument at once."""
    r = srv.client()
    s = half_sent_client(srv.port, "arg", 3 * MB)
    wait_until(lambda: int(client_row(r, "arg")["tot-mem"]) >= 3 * MB, timeout=10)
    row = client_row(r, "arg")
    assert int(row["tot-mem"]) < 4 * MB  # not rounded up to a power of two
    assert int(row["qbuf"]) + int(row["qbuf-free"]) >= 3 * MB
    s.close()


@pytest.fixture
def dsrv():
    s = start_server(["--enable-debug-command", "yes"])
    yield s
    s.stop()


def test_reply_buffer_resizing(dsrv):
    """As Redis's clientsCronResizeOutputBuffer (DEBUG REPLYBUFFER): an idle client's reply
    buffer shrinks towards 1 KiB, a busy one grows up to 16 KiB; CLIENT LIST rbs shows it."""
    r = dsrv.client()
    r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100")
    tc = dsrv.client()
    tc.execute_command("CLIENT", "SETNAME", "rb")
    wait_until(lambda: 1024 <= int(client_row(r, "rb")["rbs"]) < 2046, timeout=5)
    r.set("bigval", "x" * 32768)
    r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never")
    wait_until(lambda: tc.get("bigval") and 16384 <= int(client_row(r, "rb")["rbs"]) < 32768,
               timeout=5)
    r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset")
