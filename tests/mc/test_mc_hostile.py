"""Hostile input on the memcached port: the memcached error or a clean close, and the server
goes on serving other connections. Also concurrent clients of both protocols on shared keys."""

import random
import threading

import pytest
import redis
from pymemcache.client.base import Client

from mcharness import Raw

pytestmark = pytest.mark.sanitize


def still_serving(tc):
    c = Raw(tc.mc_port)
    try:
        assert c.call(b"set alive 0 0 2\r\nok\r\nget alive\r\n", b"END\r\n") == \
            b"STORED\r\nVALUE alive 0 2\r\nok\r\nEND\r\n"
    finally:
        c.close()


def test_2mb_key_get_line(tc, raw):
    other = Raw(tc.mc_port)
    raw.send(b"get ")
    chunk = b"k" * 65536
    for _ in range(32):
        raw.send(chunk)
        # the server keeps serving others meanwhile, without buffering the line
        assert other.call(b"version\r\n").startswith(b"VERSION ")
    raw.send(b"\r\nversion\r\n")
    assert raw.read_until(b"VERSION 1.6.18\r\n") == \
        b"CLIENT_ERROR bad command line format\r\nVERSION 1.6.18\r\n"
    other.close()
    still_serving(tc)


def send_until_closed(raw, data):
    """Send data; the server may close (and reset) before all of it is read."""
    try:
        raw.send(data)
    except (BrokenPipeError, ConnectionResetError):
        return b""
    return raw.read_to_close()


def test_2mb_key_set_line(tc, raw):
    # the error line, or a reset when the close overtakes it (memcached just closes)
    out = send_until_closed(raw, b"set " + b"k" * (2 << 20) + b" 0 0 1\r\nx\r\n")
    assert out in (b"CLIENT_ERROR line too long\r\n", b"")
    still_serving(tc)


def test_long_line_without_newline(tc, raw):
    assert send_until_closed(raw, b"x" * 3000) == b"CLIENT_ERROR line too long\r\n"
    still_serving(tc)


def test_negative_length(tc, raw):
    assert raw.sync(b"set k 0 0 -1\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert raw.sync(b"set k 0 0 -1\r\nabc\r\n") == \
        b"CLIENT_ERROR bad command line format\r\nERROR\r\n"
    assert raw.sync(b"set k 0 0 1\r\nz\r\nget k\r\n") == b"STORED\r\nVALUE k 0 1\r\nz\r\nEND\r\n"


def test_data_longer_than_announced(tc, raw):
    assert raw.sync(b"set k 0 0 10\r\n" + b"0123456789" * 2 + b"\r\n") == \
        b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"
    assert raw.sync(b"get k\r\n") == b"END\r\n"
    assert raw.sync(b"ms k 3\r\nabcdef\r\n") == b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"


def test_missing_crlf(tc, raw):
    assert raw.sync(b"set a 0 0 1\nx\r\nget a\n") == b"STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\n"
    # data without its CRLF: the next line's first bytes are taken as the terminator
    assert raw.sync(b"set b 0 0 1\r\nyget b\r\n") == b"CLIENT_ERROR bad data chunk\r\nERROR\r\n"
    # half a command, then the client goes away
    c = Raw(tc.mc_port)
    c.send(b"set c 0 0 100\r\nonly part")
    c.close()
    c = Raw(tc.mc_port)
    c.send(b"get c")
    c.close()
    still_serving(tc)


def test_too_large_is_swallowed(tc, raw):
    raw.send(b"set k 0 0 1\r\nv\r\nset k 0 0 3000000\r\n")
    for _ in range(30):
        raw.send(b"\r\n" * 50000)  # looks like commands, but is the refused data
    raw.send(b"\r\nget k\r\n")
    assert raw.read_until(b"END\r\n") == \
        b"STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n"
    # a huge announced length: swallowed as it comes, the server is not waiting on it
    c = Raw(tc.mc_port)
    c.send(b"set h 0 0 2147483000\r\n" + b"z" * 100000)
    assert c.read_until(b"\r\n") == b"SERVER_ERROR object too large for cache\r\n"
    c.close()
    still_serving(tc)


def test_binary_junk(tc):
    rnd = random.Random(7)
    for i in range(20):
        junk = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 20000)))
        c = Raw(tc.mc_port, timeout=3)
        try:
            c.send(junk + b"\r\n")
            c.send(b"version\r\n")
            try:
                out = c.read_until(b"VERSION 1.6.18\r\n", timeout=3)
                assert out.endswith(b"VERSION 1.6.18\r\n")
            except (ConnectionError, TimeoutError):
                pass  # closed (line too long), or still inside a data block the junk announced
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            c.close()
    still_serving(tc)


def test_http_request(tc, raw):
    # memcached hangs up on an HTTP request line (test_mc_ops.py compares it side by side)
    raw.send(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n")
    assert raw.read_to_close() == b""
    still_serving(tc)


def test_10000_keys_in_one_get(tc, raw):
    keys = [b"key:%05d" % i for i in range(10000)]
    raw.sync(b"".join(b"set %s %d 0 %d noreply\r\n%s\r\n" % (k, i, len(k), k)
                      for i, k in enumerate(keys[::2])))
    out = raw.call(b"get " + b" ".join(keys) + b"\r\n", b"END\r\n")
    expect = b"".join(b"VALUE %s %d %d\r\n%s\r\n" % (k, i, len(k), k)
                      for i, k in enumerate(keys[::2])) + b"END\r\n"
    assert out == expect
    out = raw.call(b"gets " + b" ".join(keys) + b"\r\n", b"END\r\n")
    assert out.count(b"VALUE ") == 5000


def test_pipelined_large_values(tc, raw):
    vals = [bytes([65 + i % 26]) * (100000 + i) for i in range(20)]
    raw.sync(b"".join(b"set v%d 0 0 %d noreply\r\n%s\r\n" % (i, len(v), v)
                      for i, v in enumerate(vals)))
    out = raw.call(b"".join(b"get v%d\r\n" % i for i in range(20)), b"END\r\n" * 1)
    while out.count(b"END\r\n") < 20:
        out += raw.read_until(b"END\r\n")
    assert out == b"".join(b"VALUE v%d 0 %d\r\n%s\r\nEND\r\n" % (i, len(v), v)
                           for i, v in enumerate(vals))


def test_concurrent_clients(tc):
    c0 = Client(("127.0.0.1", tc.mc_port))
    c0.set("ctr", "0", noreply=False)
    c0.set("casctr", "0", noreply=False)
    errors = []
    n_threads, n_ops = 8, 300

    def mc_worker():
        try:
            c = Client(("127.0.0.1", tc.mc_port))
            for i in range(n_ops):
                c.incr("ctr", 1)
                while True:  # optimistic increment with gets/cas
                    v, cas = c.gets("casctr")
                    if c.cas("casctr", str(int(v) + 1), cas):
                        break
                c.get_many(["ctr", "casctr", "nope"])
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    def redis_worker():
        try:
            r = redis.Redis(port=tc.port)
            for i in range(n_ops):
                r.incr("ctr")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=mc_worker) for _ in range(n_threads)]
    threads += [threading.Thread(target=redis_worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert int(c0.get("ctr")) == (n_threads + 2) * n_ops
    assert int(c0.get("casctr")) == n_threads * n_ops
    still_serving(tc)
