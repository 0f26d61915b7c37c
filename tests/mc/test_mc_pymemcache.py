"""pymemcache (Debian python3-pymemcache) with default settings, including its noreply stores:
every operation behaves as against Debian's memcached (the same script is run on both)."""

import pytest
from pymemcache.client.base import Client

pytestmark = pytest.mark.sanitize


def script(c):
    """The operations; returns what each gave (cas values replaced by what they mean)."""
    out = []
    c.flush_all()
    out.append(("set", c.set("k1", "v1")))
    out.append(("get", c.get("k1")))
    out.append(("get miss", c.get("nope")))
    out.append(("set expire", c.set("k2", "v2", expire=100)))
    out.append(("set_many", c.set_many({"a": "1", "b": "2", "c": "3"})))
    out.append(("get_many", sorted(c.get_many(["a", "b", "c", "zz"]).items())))
    out.append(("add existing", c.add("k1", "x", noreply=False)))
    out.append(("add new", c.add("k3", "v3", noreply=False)))
    out.append(("replace missing", c.replace("k4", "x", noreply=False)))
    out.append(("replace", c.replace("k3", "v3b", noreply=False)))
    out.append(("append", c.append("k3", "_end", noreply=False)))
    out.append(("prepend", c.prepend("k3", "start_", noreply=False)))
    out.append(("append missing", c.append("k9", "x", noreply=False)))
    out.append(("get k3", c.get("k3")))
    value, cas = c.gets("k3")
    out.append(("gets", value, cas is not None))
    out.append(("cas ok", c.cas("k3", "new", cas)))
    out.append(("cas stale", c.cas("k3", "newer", cas)))
    out.append(("cas missing", c.cas("k5", "x", b"1")))
    out.append(("gets_many", sorted((k, v[0]) for k, v in c.gets_many(["k1", "k3"]).items())))
    out.append(("incr missing", c.incr("n", 1)))
    c.set("n", "10")
    out.append(("incr", c.incr("n", 5)))
    out.append(("decr", c.decr("n", 3)))
    out.append(("decr floor", c.decr("n", 100)))
    out.append(("get n", c.get("n")))
    c.set("big", "18446744073709551615")
    out.append(("incr wrap", c.incr("big", 2)))
    with pytest.raises(Exception) as e:
        c.incr("k1", 1)
    out.append(("incr non-numeric", str(e.value)))
    out.append(("touch", c.touch("k1", 100, noreply=False)))
    out.append(("touch missing", c.touch("zz", 100, noreply=False)))
    out.append(("delete", c.delete("k1", noreply=False)))
    out.append(("delete missing", c.delete("k1", noreply=False)))
    out.append(("delete noreply", c.delete("a")))
    out.append(("get deleted", c.get("a")))
    out.append(("set noreply", c.set("q", "1")))
    out.append(("get q", c.get("q")))
    out.append(("set bytes", c.set("bin", b"\x00\r\n\xff" * 100)))
    out.append(("get bytes", c.get("bin")))
    out.append(("flush_all", c.flush_all(noreply=False)))
    out.append(("get after flush", c.get_many(["b", "c", "q"])))
    stats = c.stats()
    out.append(("stats keys", sorted(k for k in stats if k in (
        b"pid", b"uptime", b"curr_items", b"total_items", b"cmd_get", b"get_hits", b"threads",
        b"version", b"curr_connections", b"bytes", b"evictions"))))
    out.append(("version", isinstance(c.version(), bytes)))
    return out


def test_pymemcache_matches_memcached(tc, memcached):
    ours = script(Client(("127.0.0.1", tc.mc_port)))
    theirs = script(Client(("127.0.0.1", memcached.mc_port)))
    for a, b in zip(ours, theirs):
        assert a == b
    assert len(ours) == len(theirs)


def test_pymemcache_values(tc):
    c = Client(("127.0.0.1", tc.mc_port))
    c.flush_all()
    c.set("x", "hello")
    assert c.get("x") == b"hello"
    assert c.add("x", "no", noreply=False) is False
    assert c.incr("missing", 1) is None
    c.set("n", "41")
    assert c.incr("n", 1) == 42
    big = b"z" * 500000
    c.set("large", big)
    assert c.get("large") == big
    many = {"m%d" % i: "v%d" % i for i in range(500)}
    assert c.set_many(many) == []
    got = c.get_many(list(many))
    assert {k: v.decode() for k, v in got.items()} == many
    st = c.stats()
    assert int(st[b"curr_items"]) >= 503
    assert int(st[b"get_hits"]) >= 502
    assert c.version()
