"""Pub/Sub: SUBSCRIBE/PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE/PUBLISH/PUBSUB across worker threads,
RESP2 subscribed mode, RESP3 push messages, and the pubsub output buffer limit."""

import socket
import threading
import time

import pytest

from resp import Error, Push, encode

pytestmark = pytest.mark.sanitize


def subscriber(server, *args, resp3=False):
    c = server.raw(timeout=30)
    if resp3:
        assert isinstance(c.call("HELLO", "3"), dict)
    for a in args:
        kind = "PSUBSCRIBE" if any(ch in a for ch in "*?[") else "SUBSCRIBE"
        c.send(encode(kind, a))
        reply = c.read_reply()
        assert reply[0] == kind.lower().encode() and reply[1] == a.encode()
    return c


def message(channel, data, pattern=None, resp3=False):
    head = b">" if resp3 else b"*"
    if pattern is None:
        parts = [b"message", channel, data]
    else:
        parts = [b"pmessage", pattern, channel, data]
    out = head + b"%d\r\n" % len(parts)
    for p in parts:
        out += b"$%d\r\n%s\r\n" % (len(p), p)
    return out


def read_exact(conn, n, timeout=60):
    """Read exactly n bytes from a RespConn's socket (what it already buffered first)."""
    data = conn.buf[conn.pos:]
    conn.buf, conn.pos = b"", 0
    conn.sock.settimeout(timeout)
    while len(data) < n:
        d = conn.sock.recv(1 << 20)
        if not d:
            break
        data += d
    return data


def wait_for(fn, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.02)
    return fn()


def test_subscribe_publish_unsubscribe(server, r):
    s = subscriber(server, "ch1", "ch2")
    assert r.publish("ch1", "hello") == 1
    assert r.publish("nobody", "x") == 0
    assert s.read_reply() == [b"message", b"ch1", b"hello"]
    assert r.pubsub_numsub("ch1", "ch2", "ch3") == [("ch1", 1), ("ch2", 1), ("ch3", 0)]
    assert sorted(r.pubsub_channels()) == ["ch1", "ch2"]
    assert r.pubsub_channels("*2") == ["ch2"]
    info = r.info("stats")
    assert info["pubsub_channels"] == 2 and info["pubsub_patterns"] == 0
    # subscribing twice does not count twice
    assert s.call("SUBSCRIBE", "ch1") == [b"subscribe", b"ch1", 2]
    assert s.call("UNSUBSCRIBE", "ch1") == [b"unsubscribe", b"ch1", 1]
    assert s.call("UNSUBSCRIBE", "nope") == [b"unsubscribe", b"nope", 1]
    assert s.call("UNSUBSCRIBE") == [b"unsubscribe", b"ch2", 0]
    assert s.call("UNSUBSCRIBE") == [b"unsubscribe", None, 0]
    # out of subscribed mode: normal commands again
    assert s.call("SET", "k", "v") == "OK"
    assert r.pubsub_numsub("ch1") == [("ch1", 0)]
    assert r.pubsub_channels() == []
    s.close()


def test_shard_channels(server, r):
    """SSUBSCRIBE/SPUBLISH (Redis 7 without cluster): a namespace of their own, counted apart."""
    s = server.raw(timeout=30)
    s.send(encode("SSUBSCRIBE", "s1", "s2"))
    assert s.read_reply() == [b"ssubscribe", b"s1", 1]
    assert s.read_reply() == [b"ssubscribe", b"s2", 2]
    assert s.call("SUBSCRIBE", "c1") == [b"subscribe", b"c1", 1]  # channels+patterns only
    assert r.execute_command("SPUBLISH", "s1", "hi") == 1
    assert r.publish("s1", "not a shard message") == 0
    assert s.read_reply() == [b"smessage", b"s1", b"hi"]
    assert sorted(r.execute_command("PUBSUB", "SHARDCHANNELS")) == ["s1", "s2"]
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s1", "zz") == ["s1", 1, "zz", 0]
    assert r.pubsub_channels() == ["c1"]
    assert s.call("GET", "k") == Error(
        "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        "are allowed in this context")
    assert s.call("SUNSUBSCRIBE", "s1") == [b"sunsubscribe", b"s1", 1]
    assert s.call("SUNSUBSCRIBE") == [b"sunsubscribe", b"s2", 0]
    assert s.call("SUNSUBSCRIBE") == [b"sunsubscribe", None, 0]
    assert s.call("UNSUBSCRIBE") == [b"unsubscribe", b"c1", 0]
    assert s.call("SET", "k", "v") == "OK"
    assert r.execute_command("SPUBLISH", "s1", "gone") == 0
    with pytest.raises(Exception, match="no key arguments"):
        r.execute_command("COMMAND", "GETKEYS", "SPUBLISH", "a", "b")
    s.close()


def test_resp2_subscribed_mode(server, r):
    s = subscriber(server, "ch")
    assert s.call("GET", "k") == Error(
        "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        "are allowed in this context")
    assert s.call("PING") == [b"pong", b""]
    assert s.call("PING", "hi") == [b"pong", b"hi"]
    assert s.call("PSUBSCRIBE", "x*") == [b"psubscribe", b"x*", 2]
    assert s.call("RESET") == "RESET"
    assert s.call("GET", "k") is None
    assert r.pubsub_numsub("ch") == [("ch", 0)]
    assert r.pubsub_numpat() == 0
    s.close()


def test_patterns(server, r):
    s = subscriber(server, "news.*", "n?ws.sport")
    assert r.pubsub_numpat() == 2
    assert r.info("stats")["pubsub_patterns"] == 2
    assert r.publish("news.sport", "goal") == 2
    assert r.publish("weather", "rain") == 0
    got = [s.read_reply(), s.read_reply()]
    assert sorted(got) == sorted([[b"pmessage", b"news.*", b"news.sport", b"goal"],
                                  [b"pmessage", b"n?ws.sport", b"news.sport", b"goal"]])
    assert r.publish("news.art", "paint") == 1
    assert s.read_reply() == [b"pmessage", b"news.*", b"news.art", b"paint"]
    # a channel and a pattern subscription both receive
    assert s.call("SUBSCRIBE", "news.art") == [b"subscribe", b"news.art", 3]
    assert r.publish("news.art", "x") == 2
    got = [s.read_reply(), s.read_reply()]
    assert sorted(got) == sorted([[b"message", b"news.art", b"x"],
                                  [b"pmessage", b"news.*", b"news.art", b"x"]])
    assert s.call("PUNSUBSCRIBE", "news.*") == [b"punsubscribe", b"news.*", 2]
    assert r.publish("news.art", "y") == 1
    assert s.read_reply() == [b"message", b"news.art", b"y"]
    s.close()
    assert wait_for(lambda: r.pubsub_numpat() == 0)


def test_resp3_push(server, r):
    s = subscriber(server, "ch", resp3=True)
    # RESP3: other commands are allowed while subscribed
    assert s.call("SET", "k", "v") == "OK"
    assert r.publish("ch", "hi") == 1
    m = s.read_reply()
    assert isinstance(m, Push) and m == [b"message", b"ch", b"hi"]
    assert s.call("GET", "k") == b"v"
    s.send(encode("PSUBSCRIBE", "c*"))
    m = s.read_reply()
    assert isinstance(m, Push) and m == [b"psubscribe", b"c*", 2]
    assert r.publish("ch", "yo") == 2
    got = [s.read_reply(), s.read_reply()]
    assert all(isinstance(x, Push) for x in got)
    assert sorted(got) == sorted([[b"message", b"ch", b"yo"], [b"pmessage", b"c*", b"ch", b"yo"]])
    s.send(encode("UNSUBSCRIBE"))
    m = s.read_reply()
    assert isinstance(m, Push) and m == [b"unsubscribe", b"ch", 1]
    s.close()


def test_redis_py_pubsub(server, r):
    p = r.pubsub()
    p.subscribe("a")
    p.psubscribe("b*")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    assert p.get_message(timeout=5)["type"] == "psubscribe"
    assert r.publish("a", "1") == 1
    assert r.publish("bee", "2") == 1
    m1 = p.get_message(timeout=5)
    m2 = p.get_message(timeout=5)
    assert (m1["type"], m1["channel"], m1["data"]) == ("message", "a", "1")
    assert (m2["type"], m2["pattern"], m2["channel"], m2["data"]) == ("pmessage", "b*", "bee", "2")
    p.close()


def test_many_subscribers_in_order(server, r):
    """100 subscribers (spread over the worker threads by the kernel) all receive 10,000
    messages, each in publish order."""
    nsubs, nmsgs = 100, 10000
    subs = [subscriber(server, "feed") for _ in range(nsubs)]
    expected = b"".join(message(b"feed", b"m%d" % i) for i in range(nmsgs))
    pub = server.raw(timeout=60)
    batch = 500
    for start in range(0, nmsgs, batch):
        pub.send(b"".join(encode("PUBLISH", "feed", "m%d" % i)
                          for i in range(start, start + batch)))
        for _ in range(batch):
            assert pub.read_reply() == nsubs
    for s in subs:
        assert read_exact(s, len(expected)) == expected
        s.close()
    pub.close()


def test_slow_subscriber_disconnected(server, r):
    """A subscriber that never reads is closed at the pubsub hard limit; the others go on."""
    assert r.config_set("client-output-buffer-limit", "pubsub 1mb 0 0")
    try:
        slow = socket.create_connection((server.host, server.port))
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall(encode("SUBSCRIBE", "big"))
        good = subscriber(server, "big")
        assert wait_for(lambda: r.pubsub_numsub("big") == [("big", 2)])
        payload = b"x" * 65536
        n = 200  # 13 MB: far past 1mb plus the socket buffers
        one = message(b"big", payload)
        received = []
        got = [0]

        def reader():
            data = good.buf[good.pos:]
            good.buf, good.pos = b"", 0
            good.sock.settimeout(60)
            while len(data) < len(one) * n:
                d = good.sock.recv(1 << 20)
                if not d:
                    break
                data += d
                got[0] = len(data) // len(one)
            received.append(data)

        t = threading.Thread(target=reader)
        t.start()
        for i in range(n):
            # keep the good subscriber within a few messages (well under 1mb), however slow
            # the machine is, so only the one that never reads crosses the limit
            deadline = time.monotonic() + 30
            while i - got[0] > 6 and time.monotonic() < deadline:
                time.sleep(0.001)
            r.publish("big", payload)
        t.join(60)
        assert not t.is_alive()
        assert received[0] == one * n
        assert wait_for(lambda: r.pubsub_numsub("big") == [("big", 1)])
        # the slow one is gone from the server's client list
        names = [c.get("name") for c in r.client_list()]
        assert len(names) == 2  # r and good
        slow.close()
        assert r.publish("big", "still") == 1
        assert good.read_reply() == [b"message", b"big", b"still"]
        good.close()
    finally:
        r.config_set("client-output-buffer-limit", "pubsub 32mb 8mb 60")
    cfg = r.config_get("client-output-buffer-limit")["client-output-buffer-limit"]
    assert "pubsub 33554432 8388608 60" in cfg


def test_subscriber_close_cleans_up(server, r):
    subs = [subscriber(server, "gone", "gone.*") for _ in range(5)]
    assert r.pubsub_numsub("gone") == [("gone", 5)]
    for s in subs:
        s.close()
    assert wait_for(lambda: r.pubsub_numsub("gone") == [("gone", 0)] and r.pubsub_numpat() == 0)
    assert r.publish("gone", "x") == 0


def test_client_list_counts(server, r):
    s = server.raw(timeout=30)
    cid = s.call("CLIENT", "ID")
    for ch in ("c1", "c2"):
        s.call("SUBSCRIBE", ch)
    s.call("PSUBSCRIBE", "p*")
    me = [c for c in r.client_list() if c["id"] == str(cid)][0]
    assert (me["flags"], me["sub"], me["psub"]) == ("P", "2", "1")
    s.call("UNSUBSCRIBE", "c1")
    me = [c for c in r.client_list() if c["id"] == str(cid)][0]
    assert (me["flags"], me["sub"], me["psub"]) == ("P", "1", "1")
    s.close()
    b = server.raw(timeout=30)
    bid = b.call("CLIENT", "ID")
    b.send(encode("BLPOP", "nothing", 0))
    assert wait_for(lambda: [c for c in r.client_list() if c["id"] == str(bid)][0]["flags"] == "b")
    b.close()
