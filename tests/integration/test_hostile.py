"""Hostile and malformed input over raw sockets.

Each case gets exactly the reply Debian's redis-server 7.0.15 gives (and is closed where Redis
closes), or — where the brief allows a stricter server — a clean close; never a crash. After
every case another connection must still get PONG, and the module's teardown checks that the
server exits cleanly (no sanitizer report).
"""

import random
import socket
import time

import pytest

from resp import Closed, RespConn, encode

pytestmark = pytest.mark.sanitize

PONG = b"+PONG\r\n"


def proto_err(text):
    return b"-ERR Protocol error: " + text.encode() + b"\r\n"


def assert_server_ok(server):
    assert server.alive(), "server died; output:\n%s" % server.output_tail(100)
    assert server.ping_raw() == PONG


# Cases where Redis replies with a protocol error and closes the connection.
CLOSING = [
    ("negative bulk length", b"*1\r\n$-5\r\n", proto_err("invalid bulk length")),
    ("null bulk inside a command", b"*1\r\n$-1\r\n", proto_err("invalid bulk length")),
    ("bulk over 512mb", b"*1\r\n$536870913\r\n", proto_err("invalid bulk length")),
    ("bulk length overflows", b"*1\r\n$99999999999999999999\r\n", proto_err("invalid bulk length")),
    ("bulk length not a number", b"*1\r\n$abc\r\n", proto_err("invalid bulk length")),
    ("bulk length empty", b"*1\r\n$\r\n", proto_err("invalid bulk length")),
    ("2^40 elements", b"*1099511627776\r\n", proto_err("invalid multibulk length")),
    ("2^31 elements", b"*2147483648\r\n", proto_err("invalid multibulk length")),
    ("element count overflows", b"*99999999999999999999\r\n", proto_err("invalid multibulk length")),
    ("element count not a number", b"*abc\r\n", proto_err("invalid multibulk length")),
    ("missing CR in multibulk", b"*1\n$4\nPING\r\n", proto_err("invalid multibulk length")),
    ("element not a bulk", b"*1\r\nfoo\r\n", proto_err("expected '$', got 'f'")),
    ("element is an integer", b"*2\r\n$3\r\nGET\r\n:1\r\n", proto_err("expected '$', got ':'")),
    ("unbalanced double quote", b'SET "a b\r\n', proto_err("unbalanced quotes in request")),
    ("unbalanced single quote", b"SET 'a b\r\n", proto_err("unbalanced quotes in request")),
    ("text right after a quote", b'SET "a"b c\r\n', proto_err("unbalanced quotes in request")),
    ("two quoted strings touching", b'ECHO "a""b"\r\n', proto_err("unbalanced quotes in request")),
    ("inline line over 64k", b"x" * 70000, proto_err("too big inline request")),
    ("element count line over 64k", b"*" + b"1" * 70000, proto_err("too big mbulk count string")),
    ("bulk length line over 64k", b"*1\r\n$" + b"1" * 70000,
     proto_err("too big bulk count string")),
    ("valid command then garbage", encode("SET", "hk", "1") + b"*x\r\n",
     b"+OK\r\n" + proto_err("invalid multibulk length")),
]


@pytest.mark.parametrize("name,payload,reply", CLOSING, ids=[c[0] for c in CLOSING])
def test_protocol_error_closes(server, name, payload, reply):
    with RespConn(server.host, server.port) as c:
        try:
            c.send(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while we were still writing: fine
        data, closed = c.read_all(timeout=3)
        assert closed, "connection left open after %r; got %r" % (name, data[:200])
        assert data in (reply, b""), "got %r, expected %r (or a clean close)" % (data, reply)
        if reply.startswith(b"+OK"):
            assert data == reply  # the valid command before the garbage was answered
    assert_server_ok(server)


# Cases where Redis answers and keeps the connection; a PING follows to prove it.
OPEN = [
    ("empty arrays are ignored", b"*0\r\n*-1\r\n*-5\r\n", b""),
    ("empty lines are ignored", b"\r\n\r\n  \r\n\n", b""),
    ("LF-only inline", b"PING\n", PONG),
    ("lowercase inline", b"ping\r\n", PONG),
    ("inline with extra spaces", b"  ECHO   hi  \r\n", b"$2\r\nhi\r\n"),
    ("tab separates inline args", b"ECHO a\tb\r\n",
     b"-ERR wrong number of arguments for 'echo' command\r\n"),
    ("bulk header as inline", b"$4\r\nPING\r\n",
     b"-ERR unknown command '$4', with args beginning with: \r\n" + PONG),
    ("simple string as inline", b"+PING\r\n",
     b"-ERR unknown command '+PING', with args beginning with: \r\n"),
    ("integer as inline", b":1\r\n", b"-ERR unknown command ':1', with args beginning with: \r\n"),
    ("empty quoted command", b'"" a\r\n',
     b"-ERR unknown command '', with args beginning with: 'a' \r\n"),
    ("empty bulk command", b"*1\r\n$0\r\n\r\n",
     b"-ERR unknown command '', with args beginning with: \r\n"),
    ("empty bulk argument", b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", b"$0\r\n\r\n"),
    ("inline double quotes and escapes", b'SET "q k" "v\\x41\\tw\\r\\n"\r\nGET "q k"\r\n',
     b"+OK\r\n$6\r\nvA\tw\r\n\r\n"),
    ("inline single quotes", b"ECHO 'it\\'s \"x\"'\r\n", b"$8\r\nit's \"x\"\r\n"),
    ("inline escaped double quote", b'ECHO "\\"quoted\\""\r\n', b'$8\r\n"quoted"\r\n'),
    ("inline empty quoted arg", b'ECHO ""\r\n', b"$0\r\n\r\n"),
    ("inline 70k argument with newline", b"ECHO " + b"a" * 70000 + b"\r\n",
     b"$70000\r\n" + b"a" * 70000 + b"\r\n"),
    ("binary inside bulk", encode("ECHO", b"\x00\r\n\xff*$-"), b"$7\r\n\x00\r\n\xff*$-\r\n"),
]


@pytest.mark.parametrize("name,payload,reply", OPEN, ids=[c[0] for c in OPEN])
def test_answered_and_kept_open(server, name, payload, reply):
    with RespConn(server.host, server.port) as c:
        c.send(payload + b"PING\r\n")
        want = reply + PONG
        got = c.read_raw(len(want))
        assert got == want
        data, closed = c.read_all(timeout=0.05)
        assert data == b"" and not closed
    assert_server_ok(server)


def test_bulk_without_crlf(server):
    """Redis reads `$4` bytes and skips the next two whatever they are, so PINGxx is a PING.
    A stricter server may instead answer a protocol error and close; both are acceptable."""
    with RespConn(server.host, server.port) as c:
        c.send(b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n")
        data, closed = c.read_all(timeout=0.5)
        if closed:
            assert data == b"" or data.startswith(b"-ERR Protocol error: "), data
        else:
            assert data == PONG + PONG
    assert_server_ok(server)


@pytest.mark.parametrize("name,payload", [
    ("inline without newline", b"PING"),
    ("half a multibulk header", b"*2\r\n$3\r\nGE"),
    ("2^31-1 elements announced", b"*2147483647\r\n"),
    ("512mb bulk announced", b"*1\r\n$536870912\r\n"),
])
def test_incomplete_input_waits(server, name, payload):
    """The server keeps waiting for the rest (no reply yet), and survives the client leaving."""
    with RespConn(server.host, server.port) as c:
        c.send(payload)
        data, closed = c.read_all(timeout=0.3)
        assert data == b"", data
        assert not closed
    assert_server_ok(server)


def test_nul_byte_in_inline_command(server):
    """Redis looks for the inline newline with strchr, so a NUL hides it and Redis keeps
    waiting; a binary-safe server answers "unknown command" instead. Either is fine, as long
    as the connection stays usable or is closed cleanly."""
    with RespConn(server.host, server.port) as c:
        c.send(b"\x00\xff\xfe abc\r\n")
        data, closed = c.read_all(timeout=0.3)
        assert data == b"" or (data.startswith(b"-ERR unknown command '") and
                               data.endswith(b"with args beginning with: 'abc' \r\n")), data
    assert_server_ok(server)


def test_partial_inline_completed_later(server):
    with RespConn(server.host, server.port) as c:
        c.send(b"PI")
        time.sleep(0.1)
        c.send(b"NG")
        time.sleep(0.1)
        data, _ = c.read_all(timeout=0.1)
        assert data == b""
        c.send(b"\r\n")
        assert c.read_raw(7) == PONG


def test_command_split_into_one_byte_writes(server):
    value = bytes(range(256)) + b"\r\n" * 10
    cmd = encode("SET", "tiny:key", value) + encode("GET", "tiny:key") + b"ECHO inline\r\n" + \
        encode("INCRBY", "tiny:n", "41") + b"PING\r\n"
    with RespConn(server.host, server.port) as c:
        for i, b in enumerate(cmd):
            c.sock.sendall(bytes([b]))
            if i % 16 == 0:
                time.sleep(0.0005)  # let the server see separate reads
        assert c.read_reply() == "OK"
        assert c.read_reply() == value
        assert c.read_reply() == b"inline"
        assert c.read_reply() == 41
        assert c.read_reply() == "PONG"


def test_pipeline_split_at_random_boundaries(server):
    rnd = random.Random(7)
    cmds, expect = [], []
    for i in range(300):
        v = bytes(rnd.getrandbits(8) for _ in range(rnd.choice([0, 1, 5, 100, 3000])))
        cmds.append(encode("SET", "split:%d" % i, v) + encode("GET", "split:%d" % i))
        expect += ["OK", v]
    data = b"".join(cmds)
    with RespConn(server.host, server.port, timeout=20) as c:
        pos = 0
        while pos < len(data):
            n = rnd.choice([1, 2, 3, 7, 13, 100, 1000, 4096])
            c.sock.sendall(data[pos:pos + n])
            pos += n
            if rnd.random() < 0.05:
                time.sleep(0.001)
        for i, want in enumerate(expect):
            assert c.read_reply() == want, i


def test_http_requests(server):
    """Redis drops HTTP requests (the Host:/POST lines are treated as an attack): the
    connection is closed. A server without that check may instead answer each line with
    Redis's error for it; anything else is wrong."""
    get_alternative = (b"-ERR wrong number of arguments for 'get' command\r\n"
                       b"-ERR unknown command 'Host:', with args beginning with: 'x' \r\n"
                       b"-ERR unknown command 'User-Agent:', with args beginning with: "
                       b"'curl/7.88.1' \r\n")
    post_alternative = (b"-ERR unknown command 'POST', with args beginning with: '/' "
                        b"'HTTP/1.1' \r\n")
    for payload, alternative in [
            (b"GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/7.88.1\r\n\r\n", get_alternative),
            (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", post_alternative)]:
        with RespConn(server.host, server.port) as c:
            c.send(payload)
            data, closed = c.read_all(timeout=1)
            if closed:
                assert alternative.startswith(data) and (data == b"" or data.endswith(b"\r\n")), \
                    data
            else:
                assert data.startswith(alternative), data
        assert_server_ok(server)


def test_binary_garbage(server):
    """Random bytes and mutated commands: whatever comes back must be well-formed RESP (or
    nothing), the server must close when the client does, and keep serving others."""
    rnd = random.Random(2024)
    base_clients = server.client().info("clients")["connected_clients"]
    seeds = [encode("SET", "g", "v"), encode("GET", "g"), b"PING\r\n", encode("MSET", "a", "1"),
             b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n"]
    for round_ in range(150):
        kind = round_ % 3
        if kind == 0:
            payload = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 2048)))
        elif kind == 1:
            p = bytearray(rnd.choice(seeds) * rnd.randint(1, 4))
            for _ in range(rnd.randint(1, 4)):
                i = rnd.randrange(len(p))
                p[i] = rnd.choice(b"*$\r\n-:+0123456789x\x00\xff")
            payload = bytes(p)
        else:
            payload = b"*" + str(rnd.choice([-2, 0, 1, 3, 1 << 20, 1 << 33])).encode() + \
                b"\r\n" + bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 64)))
        s = socket.create_connection((server.host, server.port), timeout=5)
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            data = b""
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    d = s.recv(65536)
                except ConnectionResetError:
                    break
                if not d:
                    break
                data += d
            else:
                raise AssertionError("server did not close after EOF; payload %r" % payload)
        finally:
            s.close()
        check_resp_stream(data, payload)
    assert_server_ok(server)
    r = server.client()
    from itutil import wait_until
    wait_until(lambda: r.info("clients")["connected_clients"] <= base_clients + 1, timeout=5,
               what="garbage connections to be released")


def check_resp_stream(data, payload):
    """Every complete reply in data parses as RESP; a trailing partial reply is allowed only
    if the server was cut off (it closed)."""
    c = RespConn.__new__(RespConn)
    c.buf, c.pos, c.closed, c.sock = data, 0, False, None

    def no_more():
        raise Closed()
    c._fill = no_more
    while c.pos < len(c.buf):
        try:
            reply = c.read_reply()
        except Closed:
            raise AssertionError("truncated reply %r to payload %r" % (data[c.pos:][:100],
                                                                        payload[:100]))
        except Exception as e:
            raise AssertionError("malformed reply %r (%s) to payload %r" % (
                data[c.pos:][:100], e, payload[:100]))
        assert reply is None or isinstance(reply, (bytes, str, int, float, list, dict))


def test_client_disconnects_mid_command(server):
    r = server.client()
    r.delete("half")
    with RespConn(server.host, server.port) as c:
        c.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$10\r\nabc")
    with RespConn(server.host, server.port) as c:
        c.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$100000\r\n" + b"x" * 50000)
    time.sleep(0.1)
    assert r.exists("half") == 0
    assert_server_ok(server)


def test_many_short_connections(server):
    for i in range(500):
        s = socket.create_connection((server.host, server.port), timeout=5)
        if i % 2:
            s.sendall(b"PING\r\n")
            assert s.recv(16) == PONG
        if i % 5 == 0:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # SO_LINGER 0 -> RST instead of FIN for every fifth
    assert_server_ok(server)


def test_huge_pipelined_garbage_does_not_block_others(server):
    """One client floods a never-ending inline line; another is served meanwhile."""
    flood = socket.create_connection((server.host, server.port), timeout=5)
    try:
        flood.sendall(b"SET k " + b"v" * 60000)  # under the 64k inline limit: server waits
        assert server.ping_raw() == PONG
        try:
            flood.sendall(b"v" * 20000)  # now over: error and close
        except (BrokenPipeError, ConnectionResetError):
            pass
        flood.settimeout(3)
        data = b""
        try:
            while True:
                d = flood.recv(65536)
                if not d:
                    break
                data += d
        except ConnectionResetError:
            pass
        assert data in (proto_err("too big inline request"), b"")
    finally:
        flood.close()
    assert_server_ok(server)


@pytest.mark.parametrize("cmd", [
    ("HRANDFIELD", "unb:h", "-4611686018427387903", "WITHVALUES"),
    ("SRANDMEMBER", "unb:s", "-4611686018427387903"),
    ("ZRANDMEMBER", "unb:z", "-4611686018427387903", "WITHSCORES"),
], ids=["hrandfield", "srandmember", "zrandmember"])
def test_unbounded_random_reply_closes(server, cmd):
    """A random-members command with a huge negative count asks for a reply no data bounds
    (redis-server 7.0 runs out of memory on it): twincache closes the connection once the reply
    passes the normal clients' hard output limit (1 GiB when 0; 4 MB here), logs it, and goes on
    serving everyone else."""
    c = RespConn(server.host, server.port, timeout=10)
    c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 4mb 0 0")
    try:
        c.call("HSET", "unb:h", "f", "v")
        c.call("SADD", "unb:s", "m")
        c.call("ZADD", "unb:z", 1, "m")
        victim = socket.create_connection((server.host, server.port), timeout=20)
        victim.sendall(encode(*cmd))
        got = 0
        while True:
            d = victim.recv(1 << 20)
            if not d:
                break
            got += len(d)
        assert got < 64 << 20, got  # closed (the unfinished reply dropped), not finished
        victim.close()
        assert_server_ok(server)
    finally:
        c.call("CONFIG", "SET", "client-output-buffer-limit",
               "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
        c.call("DEL", "unb:h", "unb:s", "unb:z")
