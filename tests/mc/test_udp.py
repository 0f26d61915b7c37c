"""The memcached text protocol over UDP (-U), side by side with memcached 1.6 using a raw
datagram client: the 8-byte frame header (request id, sequence, count, reserved), single- and
multi-datagram replies (each response its own datagrams of at most 1400 bytes), dropped
multi-datagram requests."""

import socket
import struct

import pytest

from test_cmdline import start_mc, start_tc

pytestmark = pytest.mark.sanitize

HOST = "127.0.0.1"


@pytest.fixture(scope="module")
def pair():
    tc = start_tc("-U", "SAME", "-t", "2")
    mc = start_mc("-U", "SAME", "-t", "2")
    yield tc, mc
    tc.stop()
    mc.stop(check=False)


def exchange(port, payload, rid=7, seq=0, count=1, wait=0.3):
    """Send one datagram; return the datagrams received until wait seconds pass quietly."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(struct.pack(">HHHH", rid, seq, count, 0) + payload, (HOST, port))
        s.settimeout(wait)
        out = []
        try:
            while True:
                d = s.recv(65536)
                out.append((struct.unpack(">HHHH", d[:8]), d[8:]))
        except socket.timeout:
            pass
        return out
    finally:
        s.close()


def both(pair, payload, **kw):
    tc, mc = pair
    return exchange(tc.mc_port, payload, **kw), exchange(mc.mc_port, payload, **kw)


def test_udp_port_reported(pair):
    for srv in pair:
        got = exchange(srv.mc_port, b"stats settings\r\n")
        body = b"".join(d for _, d in got)
        assert b"STAT udpport %d\r\n" % srv.mc_port in body


@pytest.mark.parametrize("payload", [
    b"version\r\n", b"set u1 5 0 3\r\nabc\r\n", b"get u1\r\n", b"gets nothere\r\n",
    b"version\r\nversion\r\n", b"set u2 0 0 2\r\nhi\r\nget u2 nothere u1\r\n", b"mn\r\n",
    b"mg u1 s v f\r\n", b"bogus\r\n", b"delete u3\r\n",
])
def test_single_datagram(pair, payload):
    got, want = both(pair, payload, rid=0x1234)
    assert got == want


def test_multi_datagram_reply(pair):
    value = bytes(range(256)) * 20  # 5120 bytes: four datagrams
    for srv in pair:
        assert exchange(srv.mc_port, b"set big 0 0 %d\r\n%s\r\n" % (len(value), value), rid=9) == \
            [((9, 0, 1, 0), b"STORED\r\n")]
    got, want = both(pair, b"get big big\r\n", rid=9)
    assert got == want
    assert [h for h, _ in want] == [(9, i, 4, 0) for i in range(4)] * 2
    assert all(len(d) + 8 <= 1400 for _, d in want)
    assert b"".join(d for _, d in want[4:]) == b"VALUE big 0 5120\r\n" + value + b"\r\nEND\r\n"
    got, want = both(pair, b"stats settings\r\n", rid=3)
    assert [h for h, _ in got][0][2] >= 2
    assert [(h[0], h[1]) for h, _ in got] == [(3, i) for i in range(len(got))]


def test_multi_datagram_request_dropped(pair):
    got, want = both(pair, b"version\r\n", count=2)
    assert got == want == []
    got, want = both(pair, b"version\r\n", seq=5)
    assert got == want


def test_short_datagram_dropped(pair):
    for srv in pair:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"\x00\x01\x00", (HOST, srv.mc_port))
        s.close()
        assert exchange(srv.mc_port, b"version\r\n")[0][1] == b"VERSION 1.6.18\r\n"


def test_incomplete_request_dropped(pair):
    """An incomplete request is dropped with its datagram (memcached would keep waiting on the
    next datagram of whichever client its thread reads next): the next request is answered."""
    tc = pair[0]
    assert exchange(tc.mc_port, b"set u3 0 0 5\r\nab") == []
    assert exchange(tc.mc_port, b"delete u3\r\n") == [((7, 0, 1, 0), b"NOT_FOUND\r\n")]
    assert exchange(tc.mc_port, b"get u3 u3 u3 u") == []
    assert exchange(tc.mc_port, b"version\r\n") == [((7, 0, 1, 0), b"VERSION 1.6.18\r\n")]


def test_no_watch_over_udp(pair):
    tc = pair[0]
    assert exchange(tc.mc_port, b"watch\r\n") == [((7, 0, 1, 0), b"ERROR\r\n")]
    assert exchange(tc.mc_port, b"version\r\n") == [((7, 0, 1, 0), b"VERSION 1.6.18\r\n")]


def bin_req(op, key=b"", val=b"", extras=b"", opaque=0):
    return struct.pack(">BBHBBHIIQ", 0x80, op, len(key), len(extras), 0, 0,
                       len(key) + len(extras) + len(val), opaque, 0) + extras + key + val


def test_binary_protocol_over_udp(pair):
    """Each datagram chooses its protocol (the first one used to decide for every later one):
    binary requests after text ones, text after binary, as memcached answers them."""
    ext = struct.pack(">II", 3, 0)
    for payload in (b"version\r\n", bin_req(0x01, b"ub1", b"val", ext, opaque=5),
                    bin_req(0x00, b"ub1", opaque=6), bin_req(0x00, b"ubnothere", opaque=7),
                    b"get ub1\r\n", bin_req(0x0b, opaque=8)):
        got, want = both(pair, payload)
        # the binary GET reply carries the CAS unique, which differs between servers
        strip = [(h, d[:16] + d[24:] if d[:1] == b"\x81" else d) for h, d in got]
        wstrip = [(h, d[:16] + d[24:] if d[:1] == b"\x81" else d) for h, d in want]
        assert strip == wstrip, payload
        assert got, payload
