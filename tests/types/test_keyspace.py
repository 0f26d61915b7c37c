"""Collections in the keyspace: eviction under maxmemory, expiry, SCAN TYPE, RENAME/COPY,
MEMORY USAGE, DEL of every type, and the memory accounting returning to where it was."""
import time

import pytest


def fill_types(c, prefix, n):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.rpush("%sl%d" % (prefix, i), *range(20))
        p.sadd("%ss%d" % (prefix, i), *["m%d" % j for j in range(20)])
        p.hset("%sh%d" % (prefix, i), mapping={"f%d" % j: "v" * 10 for j in range(20)})
        p.zadd("%sz%d" % (prefix, i), {"m%d" % j: j for j in range(20)})
        p.xadd("%sx%d" % (prefix, i), {"f": "v"})
    p.execute()


@pytest.fixture
def small_server(tc_factory):
    return tc_factory("--maxmemory", "4mb", "--maxmemory-policy", "allkeys-lru")


def test_eviction_of_collections(small_server):
    c = small_server.client(decode=True, raw=False)
    for round_ in range(10):
        fill_types(c, "r%d:" % round_, 300)
    info = c.info("memory")
    assert info["used_memory"] <= 4 * 1024 * 1024 * 1.1, info
    assert c.info("stats")["evicted_keys"] > 0
    assert c.dbsize() > 100
    # the newest keys survive an LRU policy
    assert c.llen("r9:l299") == 20 and c.zcard("r9:z299") == 20
    c.connection_pool.disconnect()


def test_expire_and_types(r):
    r.rpush("l", 1)
    r.sadd("s", 1)
    r.hset("h", "f", 1)
    r.zadd("z", {"m": 1})
    r.xadd("x", {"f": "v"})
    for k in ("l", "s", "h", "z", "x"):
        assert r.pexpire(k, 100)
    time.sleep(0.3)
    assert r.dbsize() == 0
    fill_types(r, "k", 5)
    for t, p in (("list", "l"), ("set", "s"), ("hash", "h"), ("zset", "z"), ("stream", "x")):
        _, keys = r.scan(0, count=100000, _type=t)
        assert sorted(keys) == sorted("k%s%d" % (p, i) for i in range(5))
    assert r.delete(*["k%s0" % p for p in "lshzx"]) == 5
    assert r.unlink(*["k%s1" % p for p in "lshzx"]) == 5
    for p in "lshzx":
        assert r.rename("k%s2" % p, "n%s" % p)
        assert r.copy("n%s" % p, "c%s" % p)
        assert r.memory_usage("c%s" % p) > 100
        assert r.type("c%s" % p) == r.type("n%s" % p)
    assert r.move("nl", 1)
    r.execute_command("SELECT", 1)
    assert r.llen("nl") == 20


def test_memory_accounting_returns(tc_factory):
    # one worker thread: INFO's dataset figure is then exact after its flush
    srv = tc_factory("--threads", "1")
    c = srv.client(decode=True, raw=False)

    def dataset():
        return c.info("memory")["used_memory_dataset"]

    c.set("anchor", "x")
    base = dataset()
    fill_types(c, "a", 200)
    c.sadd("bigs", *range(5000))
    c.zadd("bigz", {"m%d" % i: i for i in range(5000)})
    grown = dataset()
    assert grown > base + 500000
    c.spop("bigs", 2500)
    c.zremrangebyrank("bigz", 0, 2500)
    c.delete("bigs", "bigz", *["a%s%d" % (p, i) for p in "lshzx" for i in range(200)])
    # per-thread deltas are published every 64 KiB
    assert abs(dataset() - base) < 70000, (base, grown, dataset())
    c.connection_pool.disconnect()


@pytest.mark.parametrize("n", [7, 200, 3000])
def test_random_distinct_counts(r, n):
    r.sadd("s", *["m%d" % i for i in range(n)])
    r.hset("h", mapping={"m%d" % i: i for i in range(n)})
    r.zadd("z", {"m%d" % i: i for i in range(n)})
    members = {"m%d" % i for i in range(n)}
    for count in (1, 2, n // 3, n // 3 + 1, n // 2, n - 1):
        if count < 1:
            continue
        for got in (r.srandmember("s", count), r.hrandfield("h", count),
                    r.zrandmember("z", count)):
            assert len(got) == count and len(set(got)) == count and set(got) <= members
        got = r.zrandmember("z", count, withscores=True)
        assert all("m%d" % int(float(s)) == m for m, s in zip(got[::2], got[1::2]))
        got = r.hrandfield("h", count, withvalues=True)
        assert all("m%s" % v == f for f, v in zip(got[::2], got[1::2]))
