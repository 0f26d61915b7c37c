"""CLIENT REPLY ON|OFF|SKIP against redis-server 7.0: the bytes a client receives for the same
pipeline (replies and errors suppressed while OFF and for the command after SKIP, CLIENT
REPLY ON answering +OK) are identical."""
import socket
import time

import pytest

PIPE = [
    ["CLIENT", "REPLY", "OFF"], ["SET", "a", "1"], ["GET", "a"], ["NOSUCH"], ["GET"],
    ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "ON"], ["GET", "a"],
    ["CLIENT", "REPLY", "SKIP"], ["GET", "a"], ["PING"],
    ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "SKIP"], ["ECHO", "x"], ["ECHO", "y"],
    ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "OFF"], ["ECHO", "z"],
    ["CLIENT", "REPLY", "BOGUS"], ["CLIENT", "REPLY", "ON"], ["CLIENT", "REPLY", "BOGUS"],
    ["MULTI"], ["INCR", "a"], ["EXEC"], ["PING", "end"],
]


def encode(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def exchange(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"".join(encode(a) for a in PIPE))
    data = b""
    end = time.time() + 5
    while not data.endswith(b"$3\r\nend\r\n") and time.time() < end:
        data += s.recv(65536)
    s.close()
    return data


def test_client_reply_as_redis(tc_server, redis_server):
    for srv in (tc_server, redis_server):
        srv.client().flushall()
    a, b = exchange(tc_server.port), exchange(redis_server.port)
    assert a == b, "\n twincache: %r\n redis:     %r" % (a, b)
