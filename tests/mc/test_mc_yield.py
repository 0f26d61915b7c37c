"""-R (requests per event): a connection that has run its share of requests yields to the
worker's other connections and goes on at the end of the turn; memcached counts each yield in
conn_yields (t/issue_61.t). Replies stay complete and in order, however deep the pipeline."""

import socket
import threading

import pytest

from mcharness import Raw
from test_cmdline import start_mc, start_tc

pytestmark = pytest.mark.sanitize


def yields(c):
    for line in c.call(b"stats\r\n", b"END\r\n").split(b"\r\n"):
        if line.startswith(b"STAT conn_yields "):
            return int(line.split(b" ")[2])
    raise AssertionError("no conn_yields")


@pytest.mark.parametrize("start", [start_mc, start_tc])
def test_yields_counted(start):
    srv = start("-R", "1")
    try:
        c = Raw(srv.mc_port)
        c.send(b"set foobar 0 0 5\r\nBubba\r\n" * 6)
        assert c.read_until(b"STORED\r\n" * 6) == b"STORED\r\n" * 6
        assert yields(c) >= 5
        c.close()
    finally:
        srv.stop()


def test_deep_pipeline_and_a_second_client():
    srv = start_tc("-R", "2")
    try:
        c = Raw(srv.mc_port)
        assert c.call(b"set k 0 0 3\r\nabc\r\n") == b"STORED\r\n"
        n = 20000
        one = b"VALUE k 0 3\r\nabc\r\nEND\r\n"
        t = threading.Thread(target=c.send, args=(b"get k\r\nmn\r\n" * n,))
        t.start()
        other = Raw(srv.mc_port)  # served while the pipeline yields
        assert other.call(b"get k\r\n", b"END\r\n") == one
        assert c.read_until((one + b"MN\r\n") * n, timeout=30) == (one + b"MN\r\n") * n
        t.join()
        assert yields(other) >= n - 1  # two requests per share
        other.close()
        c.close()
    finally:
        srv.stop()
