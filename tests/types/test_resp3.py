"""RESP3 (HELLO 3) replies of the collection commands, compared byte for byte with
redis-server over raw sockets: maps, sets, doubles, nulls and nested pairs."""
import socket

import pytest


class Raw:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self.s.recv(65536)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        """One reply as its raw bytes (nested aggregates included)."""
        line = self._line()
        t, rest = line[:1], line[1:]
        out = line + b"\r\n"
        if t in (b"$", b"=", b"!") and rest != b"-1":
            out += self._exact(int(rest)) + b"\r\n"
        elif t in (b"*", b"~", b">") and rest != b"-1":
            for _ in range(int(rest)):
                out += self.read()
        elif t == b"%":
            for _ in range(2 * int(rest)):
                out += self.read()
        return out

    def close(self):
        self.s.close()


COMMANDS = [
    ("RPUSH", "l", "a", "b", "c"), ("LPOP", "l"), ("LPOP", "l", 5), ("LPOP", "l"),
    ("LPOP", "l", 2), ("LRANGE", "l", 0, -1), ("LPOS", "nokey", "a"), ("LPOS", "nokey", "a", "COUNT", 1),
    ("LMPOP", 1, "nokey", "LEFT"), ("RPUSH", "l", "x"), ("LMPOP", 1, "l", "LEFT"),
    ("LINDEX", "nokey", 0), ("RPOPLPUSH", "nokey", "l"),
    ("SADD", "s", 1, 2, 3), ("SMEMBERS", "s"), ("SMEMBERS", "nokey"), ("SPOP", "nokey"),
    ("SPOP", "nokey", 2), ("SINTER", "s", "s"), ("SUNION", "s"), ("SDIFF", "s", "nokey"),
    ("SMISMEMBER", "s", 1, 9), ("SRANDMEMBER", "nokey"), ("SRANDMEMBER", "nokey", 2),
    ("SRANDMEMBER", "s", 10), ("SRANDMEMBER", "s", 0), ("COPY", "s", "s2"), ("SPOP", "s2", 10),
    ("SINTERCARD", 1, "s"), ("SINTERSTORE", "s3", "s", "s"),
    ("SSCAN", "s", 0),
    ("HSET", "h", "f", "v", "g", "w"), ("HGETALL", "h"), ("HGETALL", "nokey"), ("HGET", "h", "x"),
    ("HMGET", "h", "f", "x"), ("HKEYS", "h"), ("HVALS", "h"), ("HRANDFIELD", "nokey"),
    ("HRANDFIELD", "h", 5, "WITHVALUES"), ("HINCRBYFLOAT", "h", "n", "1.5"), ("HSCAN", "h", 0),
    ("ZADD", "z", 1, "a", 2.5, "b", "inf", "c"), ("ZSCORE", "z", "b"), ("ZSCORE", "z", "c"),
    ("ZSCORE", "z", "x"), ("ZMSCORE", "z", "a", "x"), ("ZINCRBY", "z", 1, "a"),
    ("ZADD", "z", "INCR", 1, "a"), ("ZADD", "z", "XX", "INCR", 1, "nope"),
    ("ZRANGE", "z", 0, -1), ("ZRANGE", "z", 0, -1, "WITHSCORES"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"), ("ZREVRANGE", "z", 0, 1, "WITHSCORES"),
    ("ZRANK", "z", "b"), ("ZRANK", "z", "x"), ("ZPOPMIN", "nokey"), ("ZPOPMIN", "z"),
    ("ZADD", "z", 7, "d", 8, "e"), ("ZPOPMAX", "z", 2), ("ZMPOP", 1, "z", "MIN"),
    ("ZMPOP", 1, "nokey", "MIN"), ("ZUNION", 1, "z", "WITHSCORES"), ("ZINTER", 2, "z", "z"),
    ("ZRANDMEMBER", "nokey"), ("ZRANDMEMBER", "z", 10, "WITHSCORES"), ("ZSCAN", "z", 0),
    ("XADD", "x", "1-1", "f", "v"), ("XRANGE", "x", "-", "+"), ("XRANGE", "x", "-", "+", "COUNT", 0),
    ("XADD", "nx", "NOMKSTREAM", "*", "f", "v"), ("XLEN", "x"),
    ("SET", "str", "v"), ("LPUSH", "str", "a"),
]


@pytest.fixture
def raw_pair(tc_server, redis_server):
    a, b = Raw(tc_server.port), Raw(redis_server.port)
    for c in (a, b):
        c.send("FLUSHALL")
        c.send("HELLO", "3")
    yield a, b
    a.close()
    b.close()


def test_resp3_replies(raw_pair):
    a, b = raw_pair
    bad = []
    for cmd in COMMANDS:
        x, y = a.send(*cmd), b.send(*cmd)
        if x != y:
            bad.append("%r\n  twincache: %r\n  redis:     %r" % (cmd, x, y))
    assert not bad, "\n".join(bad)
