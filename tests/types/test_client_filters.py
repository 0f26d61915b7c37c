"""CLIENT LIST TYPE and CLIENT KILL TYPE / USER against redis-server 7.0: pubsub clients are
those subscribed, normal the others, replica and master none; KILL TYPE pubsub closes only
the subscribers; errors as Redis."""
import socket
import time

import pytest

from conftest import call


def sub(port, what):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"*2\r\n$%d\r\n%s\r\n$2\r\nch\r\n" % (len(what), what.encode()))
    s.recv(1000)
    return s


def closed(s):
    s.settimeout(2)
    try:
        return s.recv(100) == b""
    except OSError:
        return True


def scenario(srv):
    c = srv.client()
    others = [srv.client() for _ in range(2)]
    for o in others:
        call(o, "PING")
    subs = [sub(srv.port, "SUBSCRIBE"), sub(srv.port, "PSUBSCRIBE")]
    time.sleep(0.1)
    count = lambda t: len(call(c, "CLIENT", "LIST", "TYPE", t).decode().splitlines())  # noqa: E731
    out = [count("pubsub"), count("normal") >= 3, count("replica"), count("slave"), count("master")]
    for args in (("TYPE", "bogus"), ("USER", "nosuch"), ("MAXAGE", "10"), ("ID", "0"),
                 ("TYPE", "replica"), ("TYPE", "master"), ("USER", "default", "TYPE", "slave")):
        out.append(call(c, "CLIENT", "KILL", *args))
    out.append(call(c, "CLIENT", "LIST", "TYPE", "bogus"))
    out.append(call(c, "CLIENT", "KILL", "TYPE", "pubsub"))
    out.append([closed(s) for s in subs])
    out.append([call(o, "PING") for o in others])
    out.append(count("pubsub"))
    return out


def test_client_type_filters_as_redis(tc_server, redis_server):
    a, b = scenario(tc_server), scenario(redis_server)
    assert a == b, "\n twincache: %r\n redis:     %r" % (a, b)


def test_client_no_evict_as_redis(d):
    for args in (("NO-EVICT", "ON"), ("NO-EVICT", "maybe"), ("NO-EVICT",), ("NO-EVICT", "OFF")):
        d("CLIENT", *args)
    for c in (d.tc, d.rs):
        call(c, "CLIENT", "NO-EVICT", "ON")
    a, b = (call(c, "CLIENT", "INFO").decode().split(" ") for c in (d.tc, d.rs))
    flags = lambda fields: [f for f in fields if f.startswith("flags=")]  # noqa: E731
    assert flags(a) == flags(b) == ["flags=e"]


def test_client_no_touch_and_setinfo(tc_server):
    """Redis 7.2's NO-TOUCH and SETINFO (not in 7.0): reads of a NO-TOUCH client leave the
    idle time alone, TOUCH still sets it; SETINFO checks its option and value."""
    c, other = tc_server.client(), tc_server.client()
    call(c, "SET", "nt", "v")
    time.sleep(1.1)
    assert call(c, "CLIENT", "NO-TOUCH", "ON") == b"OK"
    assert b"flags=T" in call(c, "CLIENT", "INFO")
    call(c, "GET", "nt")
    assert call(other, "OBJECT", "IDLETIME", "nt") >= 1
    call(c, "TOUCH", "nt")
    assert call(other, "OBJECT", "IDLETIME", "nt") == 0
    assert call(c, "CLIENT", "NO-TOUCH", "x")[1] == "ERR syntax error"
    assert call(c, "CLIENT", "SETINFO", "LIB-NAME", "redis-py") == b"OK"
    assert call(c, "CLIENT", "SETINFO", "LIB-VER", "a b")[1] == \
        "ERR lib-ver cannot contain spaces, newlines or special characters."
    assert call(c, "CLIENT", "SETINFO", "X", "y")[1] == "ERR Unrecognized option 'X'"
