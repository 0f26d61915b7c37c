"""twincache as a three-node pool behind twemproxy (Debian's nutcracker) and with twinbench's
client-side ketama (issue #11).

Three twincache instances (RESP + memcached ports each) and one nutcracker with two pools
(redis: true and memcached; ketama over md5, node names node1..node3, auto_eject_hosts) run
on free loopback ports from a temporary directory, each stopped by its PID at the end.

    /usr/bin/python3 -m pytest tests/pool
    TWINCACHE_BIN / TWINBENCH_BIN override the binaries (default build/twincache, build/twinbench;
    relative paths are relative to the repository).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
import redis
from pymemcache.client.base import Client

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402

NUTCRACKER = tcharness.tool("nutcracker", "/usr/sbin/nutcracker")
NKEYS = 30000
RETRY_MS = 12000  # server_retry_timeout of the test pools: how long an ejected node stays out

TWINCACHE = str(tcharness.twincache_bin())
TWINBENCH = str(tcharness.repo_path("TWINBENCH_BIN", "build/twinbench"))


class Node:
    """One twincache of the pool (a tcharness.Server: restartable on its ports, and it must
    exit 0 without a sanitizer report when stopped)."""

    def __init__(self, name, dir_):
        self.name, self.dir = name, dir_
        self.srv = self.port = self.mc_port = None

    def start(self):
        """The first start picks free ports (others if one is lost to another process); a
        restart keeps them."""
        if self.srv is None:
            self.srv = tcharness.start_twincache(mc=True, dir=self.dir, check=True,
                                                 logfile=os.path.join(self.dir, self.name + ".log"))
            self.port, self.mc_port = self.srv.port, self.srv.mc_port
        else:
            self.srv.start()

    def stop(self):
        self.srv.stop()

    def r(self):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=30)

    def mc(self):
        return Client(("127.0.0.1", self.mc_port), timeout=30, connect_timeout=5)

    def curr_items(self):
        c = self.mc()
        try:
            return int(c.stats()[b"curr_items"])
        finally:
            c.close()


def server_line(node, port):
    # twemproxy's "host:port:weight name"; the name (not host:port) places the ketama points
    return f"127.0.0.1:{port}:1 {node.name}"


class Pool:
    def __init__(self, dir_):
        self.dir = dir_
        self.nodes = [Node(f"node{i + 1}", dir_) for i in range(3)]
        ports = tcharness.free_ports(4)
        self.proxy_redis, self.proxy_mc, self.stats_port = ports[0], ports[1], ports[2]
        self.proxy_db1 = ports[3]  # a third pool with redis_db: 1 (nutcracker SELECTs on connect)
        self.nutcracker = None

    def yml(self):
        def pool(name, listen, redis_pool, port_of, extra=()):
            lines = [f"{name}:", f"  listen: 127.0.0.1:{listen}", "  hash: md5", *extra,
                     "  distribution: ketama", f"  redis: {'true' if redis_pool else 'false'}",
                     "  auto_eject_hosts: true", f"  server_retry_timeout: {RETRY_MS}",
                     "  server_failure_limit: 1", "  timeout: 2000", "  preconnect: true",
                     "  servers:"]
            lines += [f"   - {server_line(n, port_of(n))}" for n in self.nodes]
            return "\n".join(lines) + "\n"

        return (pool("tc_redis", self.proxy_redis, True, lambda n: n.port) +
                pool("tc_memcache", self.proxy_mc, False, lambda n: n.mc_port) +
                pool("tc_db1", self.proxy_db1, True, lambda n: n.port, ["  redis_db: 1"]))

    def start(self):
        for n in self.nodes:
            n.start()
        conf = os.path.join(self.dir, "nutcracker.yml")
        with open(conf, "w") as f:
            f.write(self.yml())
        self.nutcracker = tcharness.start_nutcracker(
            conf, [self.proxy_redis, self.proxy_mc, self.proxy_db1], self.stats_port,
            dir=self.dir)

    def stop(self):
        """Stop nutcracker and every node; fail with what any node reported."""
        errors = []
        for srv in [self.nutcracker] + [n.srv for n in self.nodes]:
            try:
                if srv:
                    srv.stop()
            except AssertionError as e:
                errors.append(str(e))
        assert not errors, "\n\n".join(errors)

    def log(self):
        return self.nutcracker.output()[-4000:]

    def r(self):
        return redis.Redis(host="127.0.0.1", port=self.proxy_redis, socket_timeout=30)

    def mc(self):
        return Client(("127.0.0.1", self.proxy_mc), timeout=30, connect_timeout=5)

    def url(self, proto, nodes=None):
        nodes = nodes or self.nodes
        if proto == "redis":
            return "redis://" + ",".join(server_line(n, n.port) for n in nodes)
        return "memcache://" + ",".join(server_line(n, n.mc_port) for n in nodes)

    def flush(self):
        for n in self.nodes:
            n.r().flushall()


@pytest.fixture(scope="module")
def pool():
    for path, what in ((TWINCACHE, "twincache"), (TWINBENCH, "twinbench"), (NUTCRACKER, "nutcracker")):
        if not os.access(path, os.X_OK):
            pytest.skip(f"{what} not found at {path}")
    with tempfile.TemporaryDirectory(prefix="tc-pool-") as d:
        p = Pool(d)
        try:
            p.start()
            yield p
        finally:
            p.stop()


def keys_of(prefix, n=NKEYS):
    return [f"{prefix}{i}" for i in range(n)]


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


def twinbench_placement(url, keys):
    """Node index for each key from twinbench's client-side ketama (twemproxy layout)."""
    r = subprocess.run([TWINBENCH, "--ketama", "twemproxy", "--target", "pool=" + url,
                        "--print-shard", "-"], input="\n".join(keys) + "\n",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = [int(line.split()[1]) for line in r.stdout.splitlines()]
    assert len(out) == len(keys)
    return out


def redis_holders(nodes, keys):
    """Index of the node holding each key (exactly one must)."""
    found = []
    for n in nodes:
        c = n.r()
        res = []
        for part in chunks(keys, 2000):
            p = c.pipeline(transaction=False)
            for k in part:
                p.exists(k)
            res += p.execute()
        found.append(res)
    where = []
    for i, k in enumerate(keys):
        holders = [j for j in range(len(nodes)) if found[j][i]]
        assert len(holders) == 1, (k, holders)
        where.append(holders[0])
    return where


def mc_holders(nodes, keys):
    found = []
    for n in nodes:
        c = n.mc()
        got = set()
        for part in chunks(keys, 200):
            got |= set(c.get_many(part))
        c.close()
        found.append(got)
    where = []
    for k in keys:
        holders = [j for j in range(len(nodes)) if k in found[j]]
        assert len(holders) == 1, (k, holders)
        where.append(holders[0])
    return where


def assert_thirds(counts, total):
    third = total / 3
    for c in counts:
        assert abs(c - third) <= 0.10 * third, (counts, total)


def run_tb(*args, timeout=120):
    r = subprocess.run([TWINBENCH, "--no-progress", *args], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"twinbench {args} failed:\n{r.stdout}\n{r.stderr}"
    return r


# ---- through the proxy ------------------------------------------------------------------


def test_redis_through_proxy(pool):
    pool.flush()
    r = pool.r()
    assert r.ping()
    keys = keys_of("key:")
    # pipelined SETs (nutcracker forwards each to its node) and MSET (split per node)
    for part in chunks(keys[:20000], 1000):
        p = r.pipeline(transaction=False)
        for k in part:
            p.set(k, "v-" + k)
        assert all(p.execute())
    for part in chunks(keys[20000:], 500):
        assert r.mset({k: "v-" + k for k in part})
    # every key reads back through the proxy (MGET split per node and merged)
    for part in chunks(keys, 500):
        assert r.mget(part) == [("v-" + k).encode() for k in part]
    counts = [n.r().dbsize() for n in pool.nodes]
    print("redis keys per node through nutcracker:", counts)
    assert sum(counts) == NKEYS
    assert_thirds(counts, NKEYS)

    # multi-key DEL is split too; INCR, EXPIRE/TTL, a hash and a list go to their node
    extra = keys_of("tmp:", 300)
    assert r.mset({k: "1" for k in extra})
    assert r.delete(*extra) == len(extra)
    assert r.mget(extra) == [None] * len(extra)
    assert r.incr("ctr", 5) == 5 and r.incrby("ctr", 2) == 7
    assert r.expire("ctr", 100) and 0 < r.ttl("ctr") <= 100
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
    assert r.rpush("l", *range(50)) == 50 and len(r.lrange("l", 0, -1)) == 50
    assert r.delete("ctr", "h", "l") == 3
    big = b"x" * 200000  # larger than nutcracker's 16 KB mbufs
    assert r.mset({"big1": big, "big2": big + b"y"})
    assert r.mget(["big1", "big2", "nokey"]) == [big, big + b"y", None]
    assert r.delete("big1", "big2") == 2


def test_memcached_through_proxy(pool):
    pool.flush()
    c = pool.mc()
    keys = keys_of("mkey:")
    for part in chunks(keys, 1000):
        assert c.set_many({k: ("v-" + k).encode() for k in part}, noreply=False) == []
    # get and gets with many keys: nutcracker splits them per node and merges the replies
    for part in chunks(keys, 100):
        got = c.get_many(part)
        assert got == {k: ("v-" + k).encode() for k in part}
    got = c.gets_many(keys[:300])
    assert len(got) == 300 and all(cas for _, cas in got.values())
    counts = [n.curr_items() for n in pool.nodes]
    print("memcached items per node through nutcracker:", counts)
    assert sum(counts) == NKEYS
    assert_thirds(counts, NKEYS)

    v, cas = c.gets("mkey:1")
    assert c.cas("mkey:1", b"new", cas) and not c.cas("mkey:1", b"newer", cas)
    assert c.get("mkey:1") == b"new"
    assert c.add("mkey:2", b"x", noreply=False) is False
    assert c.replace("mkey:2", b"y", noreply=False) and c.append("mkey:2", b"z", noreply=False)
    assert c.prepend("mkey:2", b"a", noreply=False) and c.get("mkey:2") == b"ayz"
    assert c.set("n", b"10", noreply=False) and c.incr("n", 5) == 15 and c.decr("n", 3) == 12
    assert c.touch("n", 100, noreply=False)
    assert c.delete_many(["n", "mkey:3", "mkey:4"], noreply=False)
    assert c.get_many(["n", "mkey:3", "mkey:4"]) == {}
    assert c.version()  # nutcracker's health probe for memcached pools
    big = b"x" * 200000
    assert c.set("big", big, noreply=False) and c.get("big") == big
    c.close()


def test_redis_db_pool(pool):
    """redis_db: nutcracker sends SELECT on each server connection; clients see database 0."""
    r = redis.Redis(host="127.0.0.1", port=pool.proxy_db1, socket_timeout=30)
    keys = keys_of("db1:", 300)
    assert r.mset({k: "1" for k in keys})
    assert r.mget(keys) == [b"1"] * len(keys)
    in_db1 = sum(redis.Redis(host="127.0.0.1", port=n.port, db=1).dbsize() for n in pool.nodes)
    assert in_db1 == len(keys)
    assert all(n.r().mget(keys[:50]) == [None] * 50 for n in pool.nodes)
    assert r.delete(*keys) == len(keys)


def test_redis_auth_pool(tmp_path):
    """redis_auth: nutcracker authenticates its server connections (twincache requirepass) and
    asks its clients for the same password."""
    nodes = [tcharness.start_twincache("--requirepass", "s3cret", threads=1, check=True)
             for _ in range(2)]
    nc = None
    try:
        ports = [n.port for n in nodes] + [tcharness.free_port()]
        conf = tmp_path / "nutcracker.yml"
        conf.write_text("auth:\n  listen: 127.0.0.1:%d\n  hash: md5\n  distribution: ketama\n"
                        "  redis: true\n  redis_auth: s3cret\n  preconnect: true\n  servers:\n"
                        "   - 127.0.0.1:%d:1 a\n   - 127.0.0.1:%d:1 b\n" % (ports[2], ports[0], ports[1]))
        nc = tcharness.start_nutcracker(conf, [ports[2]], dir=tmp_path)
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=ports[2], socket_timeout=10).set("x", "1")
        with pytest.raises(redis.AuthenticationError):  # "-ERR invalid password"
            redis.Redis(port=ports[2], password="wrong", socket_timeout=10).ping()
        r = redis.Redis(port=ports[2], password="s3cret", socket_timeout=10)
        keys = keys_of("auth:", 500)
        assert r.mset({k: "1" for k in keys}) and r.mget(keys) == [b"1"] * len(keys)
        counts = [redis.Redis(port=p, password="s3cret").dbsize() for p in ports[:2]]
        assert sum(counts) == len(keys) and min(counts) > 0, counts
    finally:
        for srv in [nc] + nodes:
            if srv:
                srv.stop()


# ---- client-side ketama == nutcracker's ketama ------------------------------------------


def test_placement_equals_nutcracker_redis(pool):
    pool.flush()
    keys = keys_of("key:")
    r = pool.r()
    for part in chunks(keys, 1000):
        p = r.pipeline(transaction=False)
        for k in part:
            p.set(k, "1")
        p.execute()
    by_proxy = redis_holders(pool.nodes, keys)
    predicted = twinbench_placement(pool.url("redis"), keys)
    assert predicted == by_proxy
    counts = [by_proxy.count(i) for i in range(3)]

    # twinbench writes the same keys directly with client-side ketama: same nodes, and the
    # per-node figures in its JSON report are the node counts
    pool.flush()
    js = os.path.join(pool.dir, "direct-redis.json")
    run_tb("--ketama", "twemproxy", "--target", "pool=" + pool.url("redis"), "--preload",
           "--key-maximum", str(NKEYS - 1), "--ratio", "0:1", "-t", "2", "-c", "2",
           "--pipeline", "16", "-n", "500", "--json", js)
    assert [n.r().dbsize() for n in pool.nodes] == counts
    assert redis_holders(pool.nodes, keys) == by_proxy
    per_host = json.load(open(js))["targets"][0]["per_host"]
    assert [h["name"] for h in per_host] == ["node1", "node2", "node3"]
    assert [h["keyspace_keys"] for h in per_host] == counts
    print("redis placement: nutcracker = twinbench for", NKEYS, "keys; per node", counts)


def test_placement_equals_nutcracker_memcached(pool):
    pool.flush()
    keys = keys_of("key:")
    c = pool.mc()
    for part in chunks(keys, 1000):
        assert c.set_many({k: b"1" for k in part}, noreply=False) == []
    c.close()
    by_proxy = mc_holders(pool.nodes, keys)
    predicted = twinbench_placement(pool.url("memcache"), keys)
    assert predicted == by_proxy
    counts = [by_proxy.count(i) for i in range(3)]
    assert [n.curr_items() for n in pool.nodes] == counts

    pool.flush()
    js = os.path.join(pool.dir, "direct-mc.json")
    run_tb("--ketama", "twemproxy", "--target", "pool=" + pool.url("memcache"), "--preload",
           "--key-maximum", str(NKEYS - 1), "--ratio", "0:1", "-t", "2", "-c", "2",
           "--pipeline", "16", "-n", "500", "--json", js)
    assert [n.curr_items() for n in pool.nodes] == counts
    assert mc_holders(pool.nodes, keys) == by_proxy
    per_host = json.load(open(js))["targets"][0]["per_host"]
    assert [h["keyspace_keys"] for h in per_host] == counts
    print("memcached placement: nutcracker = twinbench for", NKEYS, "keys; per node", counts)


# ---- twinbench against the pool -----------------------------------------------------------


def test_twinbench_through_proxy_and_direct(pool):
    pool.flush()
    js = os.path.join(pool.dir, "tb.json")
    html = os.path.join(pool.dir, "tb.html")
    common = ["-t", "2", "-c", "4", "--pipeline", "8", "-n", "1500", "--key-maximum", "2999"]
    # through nutcracker: plain single-host targets, sets/gets and multi-key gets (split)
    run_tb("--target", f"proxy-redis=redis://127.0.0.1:{pool.proxy_redis}",
           "--target", f"proxy-mc=memcache://127.0.0.1:{pool.proxy_mc}", "--preload", *common)
    out = run_tb("--target", f"proxy-redis=redis://127.0.0.1:{pool.proxy_redis}",
                 "--target", f"proxy-mc=memcache://127.0.0.1:{pool.proxy_mc}",
                 "--multi-get", "10", *common).stdout
    # directly with client-side ketama, both protocols, with the per-node report
    run_tb("--ketama", "twemproxy", "--target", "direct-redis=" + pool.url("redis"),
           "--target", "direct-mc=" + pool.url("memcache"), *common, "--json", js, "--html", html)
    rep = json.load(open(js))
    for t in rep["targets"]:
        assert t["errors"] == 0 and t["timeouts"] == 0, t["name"]
        assert t["misses"] == 0, t["name"]  # the preload through nutcracker put every key
        hosts = t["per_host"]
        assert [h["name"] for h in hosts] == ["node1", "node2", "node3"]
        assert sum(h["requests"] for h in hosts) == t["ops"]
        for h in hosts:
            assert 25 < h["requests_pct"] < 42, hosts
            assert 25 < h["keyspace_pct"] < 42, hosts
        print(t["name"], [(h["name"], h["requests"], round(h["keyspace_pct"], 2)) for h in hosts])
    # a multi-get over the ring is split per node (as nutcracker does): every key is found
    js2 = os.path.join(pool.dir, "tb-mget.json")
    run_tb("--ketama", "twemproxy", "--target", "direct-redis=" + pool.url("redis"),
           "--target", "direct-mc=" + pool.url("memcache"), "--multi-get", "10", *common,
           "--json", js2)
    for t in json.load(open(js2))["targets"]:
        assert t["errors"] == 0 and t["misses"] == 0 and t["hits"] > 0, t["name"]
        hosts = t["per_host"]
        assert sum(h["keys"] for h in hosts) == t["hits"]
    page = open(html).read()
    assert "Per-node distribution" in page
    assert page.count('<table class="nodes"') == 2 and page.count('class="chart nodes"') == 2
    assert "node2 (127.0.0.1:" in page
    assert "errors 0 timeouts 0" in out


# ---- a node fails: ejection, then it comes back -------------------------------------------


def proxy_get_redis(pool, key):
    try:
        return pool.r().get(key), None
    except redis.RedisError as e:
        return None, e


def wait_ejected(pool, probe_redis, probe_mc):
    """Send requests for keys of the stopped node until nutcracker answers without an error
    (the first failure ejects it: server_failure_limit 1)."""
    deadline = time.time() + 20
    ok_r = ok_m = False
    while time.time() < deadline and not (ok_r and ok_m):
        if not ok_r:
            ok_r = proxy_get_redis(pool, probe_redis)[1] is None
        if not ok_m:
            try:
                c = pool.mc()
                c.get(probe_mc)
                c.close()
                ok_m = True
            except Exception:
                pass
        time.sleep(0.05)
    assert ok_r and ok_m, pool.log()


def test_ejection_and_restart(pool):
    pool.flush()
    r, c = pool.r(), pool.mc()
    rkeys, mkeys = keys_of("e:", 6000), keys_of("em:", 6000)
    for part in chunks(rkeys, 1000):
        assert r.mset({k: "1" for k in part})
    for part in chunks(mkeys, 1000):
        assert c.set_many({k: b"1" for k in part}, noreply=False) == []
    c.close()
    rplace = twinbench_placement(pool.url("redis"), rkeys)
    mplace = twinbench_placement(pool.url("memcache"), mkeys)
    victim = 1
    node = pool.nodes[victim]
    node.stop()
    wait_ejected(pool, rkeys[rplace.index(victim)], mkeys[mplace.index(victim)])
    t_ejected = time.time()

    # reads continue: exactly the keys of the ejected node miss
    got = []
    for part in chunks(rkeys, 500):
        got += pool.r().mget(part)
    missing = [i for i, v in enumerate(got) if v is None]
    assert missing == [i for i, h in enumerate(rplace) if h == victim]
    c = pool.mc()
    found = {}
    for part in chunks(mkeys, 100):
        found.update(c.get_many(part))
    assert {k for k in mkeys if k not in found} == {k for k, h in zip(mkeys, mplace) if h == victim}

    # writes continue and go to the remaining nodes, where the two-node ring puts them
    new_r, new_m = keys_of("after:", 3000), keys_of("mafter:", 3000)
    for part in chunks(new_r, 500):
        assert pool.r().mset({k: "2" for k in part})
    for part in chunks(new_m, 500):
        assert c.set_many({k: b"2" for k in part}, noreply=False) == []
    assert pool.r().mget(new_r[:500]) == [b"2"] * 500
    assert len(c.get_many(new_m[:100])) == 100
    c.close()
    live = [n for i, n in enumerate(pool.nodes) if i != victim]
    two_r = twinbench_placement(pool.url("redis", live), new_r)
    assert redis_holders(live, new_r) == two_r
    two_m = twinbench_placement(pool.url("memcache", live), new_m)
    assert mc_holders(live, new_m) == two_m
    assert time.time() - t_ejected < RETRY_MS / 1000, "checks ran past server_retry_timeout"
    print(f"ejected {node.name}: misses only for its {len(missing)} of {len(rkeys)} redis keys "
          f"and {len(mkeys) - len(found)} of {len(mkeys)} memcached keys; new writes on the "
          f"other two: redis {[two_r.count(i) for i in range(2)]}, memcached "
          f"{[two_m.count(i) for i in range(2)]}")

    # restart: after server_retry_timeout nutcracker puts the node back on the ring and its
    # keys are written to it again (the restarted cache is empty)
    node.start()
    probe_r = [k for k, h in zip(rkeys, rplace) if h == victim][:50]
    probe_m = [k for k, h in zip(mkeys, mplace) if h == victim][:50]
    deadline = time.time() + RETRY_MS / 1000 + 20
    back = False
    while time.time() < deadline and not back:
        time.sleep(0.5)
        try:
            pool.r().mset({k: "3" for k in probe_r})
            c = pool.mc()
            c.set_many({k: b"3" for k in probe_m}, noreply=False)
            c.close()
        except Exception:
            continue
        back = (node.r().exists(*probe_r) == len(probe_r) and
                len(node.mc().get_many(probe_m)) == len(probe_m))
    assert back, pool.log()
    assert pool.r().mget(probe_r) == [b"3"] * len(probe_r)
    assert pool.r().get(rkeys[rplace.index(0)]) == b"1"  # other nodes kept their keys
