"""Keyspace events of consumer groups against redis-server 7.0: XCLAIM and XAUTOCLAIM that
create their consumer send xgroup-createconsumer, as XREADGROUP does."""
import time

from conftest import call


def events(srv):
    c = srv.client()
    call(c, "FLUSHALL")
    call(c, "CONFIG", "SET", "notify-keyspace-events", "Kt")
    p = srv.client().pubsub()
    p.psubscribe("__keyspace@*")
    p.get_message(timeout=1)
    call(c, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    sid = call(c, "XADD", "s", "1-1", "f", "v")
    call(c, "XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "s", ">")
    call(c, "XCLAIM", "s", "g", "Mike", 0, sid, "FORCE")
    call(c, "XAUTOCLAIM", "s", "g", "Zed", 0, "0")
    call(c, "XGROUP", "DELCONSUMER", "s", "g", "Lee")
    out = []
    end = time.time() + 2
    while time.time() < end and len(out) < 6:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            out.append(m["data"])
    call(c, "CONFIG", "SET", "notify-keyspace-events", "")
    p.close()
    return out


def test_claim_creates_consumer_event_as_redis(tc_server, redis_server):
    assert events(tc_server) == events(redis_server)
