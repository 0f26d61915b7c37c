"""A small RESP2/RESP3 client over a raw socket, for tests that must see the exact wire format.

Replies are parsed into tagged Python values so that a test can tell a RESP3 map from a RESP2
flat array, a double from a bulk string, a null from an empty string:

    +OK            -> Simple("OK")            -ERR x   -> Error("ERR x")
    :1             -> 1 (int)                 $3 abc   -> b"abc"
    $-1 / *-1 / _  -> None                    *2 ...   -> list
    %1 ...         -> Map (a dict subclass)   ~2 ...   -> Set (a list subclass)
    ,1.5           -> Double(1.5)             #t       -> Bool(True)
    =7 txt:abc     -> Verbatim(b"abc", "txt") (2 big ints) (bignum) -> BigNum
    >3 ...         -> Push (a list subclass)  |1 ...   -> attributes are skipped
"""

import socket
import time


class Simple(str):
    """A RESP simple string (+...)."""


class Error(str):
    """A RESP error (-...) or RESP3 blob error (!...)."""


class Map(dict):
    """A RESP3 map (%...)."""


class Set(list):
    """A RESP3 set (~...)."""


class Push(list):
    """A RESP3 push (>...)."""


class Double(float):
    """A RESP3 double (,...)."""


class Bool(int):
    """A RESP3 boolean (#t / #f)."""


class BigNum(int):
    """A RESP3 big number (( ...)."""


class Verbatim(bytes):
    """A RESP3 verbatim string (=...); .fmt is the three-letter format."""
    fmt = ""


class Closed(Exception):
    """The server closed the connection (EOF or reset) before a full reply arrived."""


class ProtocolViolation(Exception):
    """The server sent bytes that are not valid RESP."""


def encode(*args):
    """Encode a command as a RESP multibulk array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RespConn:
    """One TCP connection. read_reply() blocks until one complete reply is parsed."""

    def __init__(self, host, port, timeout=5.0, nodelay=True):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if nodelay:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0
        self.closed = False
        self.timeout = timeout

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def send_slowly(self, data, chunk=1, delay=0.0):
        """Send data in chunks of `chunk` bytes, each its own write (TCP_NODELAY is on)."""
        for i in range(0, len(data), chunk):
            self.sock.sendall(data[i:i + chunk])
            if delay:
                time.sleep(delay)

    def call(self, *args):
        """Send one command and return its parsed reply."""
        self.send(encode(*args))
        return self.read_reply()

    # -- receiving ---------------------------------------------------------------------------

    def _fill(self):
        try:
            d = self.sock.recv(1 << 16)
        except ConnectionResetError:
            d = b""
        if not d:
            self.closed = True
            raise Closed("connection closed by server")
        if self.pos:
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += d

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i]
                self.pos = i + 2
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        data = self.buf[self.pos:self.pos + n]
        if self.buf[self.pos + n:self.pos + n + 2] != b"\r\n":
            raise ProtocolViolation("bulk not terminated by CRLF: %r" % self.buf[self.pos:][:80])
        self.pos += n + 2
        return data

    def read_reply(self):
        line = self._line()
        if not line:
            raise ProtocolViolation("empty reply line")
        t, rest = line[:1], line[1:]
        if t == b"+":
            return Simple(rest.decode("utf-8", "replace"))
        if t == b"-":
            return Error(rest.decode("utf-8", "replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n == -1:
                return None
            if n < 0:
                raise ProtocolViolation("negative bulk length %d" % n)
            return self._exact(n)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n == -1 and t == b"*":
                return None
            items = [self.read_reply() for _ in range(n)]
            return {b"*": list, b"~": Set, b">": Push}[t](items)
        if t == b"%":
            n = int(rest)
            m = Map()
            for _ in range(n):
                k = self.read_reply()
                if isinstance(k, list):
                    k = tuple(k)
                m[k] = self.read_reply()
            return m
        if t == b"|":
            n = int(rest)
            for _ in range(2 * n):
                self.read_reply()
            return self.read_reply()
        if t == b"_":
            if rest:
                raise ProtocolViolation("null with payload %r" % rest)
            return None
        if t == b",":
            return Double(float(rest))
        if t == b"#":
            if rest not in (b"t", b"f"):
                raise ProtocolViolation("bad boolean %r" % rest)
            return Bool(rest == b"t")
        if t == b"(":
            return BigNum(int(rest))
        if t == b"=":
            data = self._exact(int(rest))
            if data[3:4] != b":":
                raise ProtocolViolation("verbatim without format: %r" % data[:10])
            v = Verbatim(data[4:])
            v.fmt = data[:3].decode()
            return v
        if t == b"!":
            return Error(self._exact(int(rest)).decode("utf-8", "replace"))
        raise ProtocolViolation("unknown reply type %r in %r" % (t, line[:80]))

    def read_raw(self, n):
        """Read exactly n raw bytes (buffered data first)."""
        while len(self.buf) - self.pos < n:
            self._fill()
        data = self.buf[self.pos:self.pos + n]
        self.pos += n
        return data

    def read_all(self, timeout=0.3):
        """Return every byte that arrives until the server closes or `timeout` passes with
        nothing new; second value tells whether the connection was closed."""
        data = self.buf[self.pos:]
        self.buf, self.pos = b"", 0
        self.sock.settimeout(timeout)
        closed = False
        try:
            while True:
                try:
                    d = self.sock.recv(1 << 16)
                except ConnectionResetError:
                    d = b""
                if not d:
                    closed = True
                    break
                data += d
        except socket.timeout:
            pass
        finally:
            self.sock.settimeout(self.timeout)
        self.closed = closed
        return data, closed

    def wait_closed(self, timeout=2.0):
        """True if the server closes the connection within `timeout` (pending bytes dropped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            data, closed = self.read_all(timeout=min(0.2, timeout))
            if closed:
                return True
        return False
