"""Client-side caching (CLIENT TRACKING) against redis-server 7.0: each scenario drives a
tracking connection and writers on other connections (other workers: twincache runs two),
and records the tracking side's transcript (replies and pushes, in order); both servers must
give the same transcript. Then twincache-only cases: invalidation from the memcached port,
the bounded table (tracking-table-max-keys), INFO fields, and redis-py (skipped: Debian's
redis-py has no RESP3 client-side cache)."""

import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import tcharness  # noqa: E402
from resp import Push, RespConn  # noqa: E402

pytestmark = pytest.mark.sanitize


@pytest.fixture(scope="module")
def pair():
    tcharness.require_twincache()
    # DEBUG SLEEP (conn_away_from) on twincache only
    tc = tcharness.start_twincache("--enable-debug-command", "yes", mc=True, check=True)
    rs = tcharness.start_redis("--enable-debug-command", "yes")
    yield tc, rs
    rs.stop()
    tc.stop()


def conn(srv, resp3=False):
    c = RespConn(srv.host, srv.port, timeout=10)
    if resp3:
        c.call("HELLO", "3")
    return c


def norm(x):
    if isinstance(x, Push):
        return ("push", [norm(i) for i in x])
    if isinstance(x, list):
        return [norm(i) for i in x]
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    return x


class T:
    """A tracking connection's transcript."""

    def __init__(self, srv, resp3=True):
        self.c = conn(srv, resp3)
        self.log = []

    def call(self, *args):
        self.c.send(__import__("resp").encode(*args))
        r = self.c.read_reply()
        while isinstance(r, Push):  # a push before the reply
            self.log.append(norm(r))
            r = self.c.read_reply()
        self.log.append(norm(r))
        return r

    def push(self):
        self.log.append(norm(self.c.read_reply()))


def scenario_default(srv):
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    w.call("SET", "k", "1")
    t.call("CLIENT", "TRACKING", "on")
    t.call("GET", "k")
    t.call("MGET", "k", "k2")
    w.call("SET", "k", "2")
    t.push()
    w.call("SET", "k2", "2")
    t.push()
    w.call("SET", "k", "3")  # not read again: nothing
    t.call("GET", "k")
    w.call("DEL", "k")
    t.push()
    t.call("HSET", "h", "f", "v")
    t.call("HGET", "h", "f")
    w.call("HDEL", "h", "f")
    t.push()
    t.call("GET", "self")
    t.call("SET", "self", "x")  # own write: invalidated too (no NOLOOP)
    t.push()
    t.call("CLIENT", "TRACKINGINFO")
    t.call("CLIENT", "GETREDIR")
    t.call("CLIENT", "TRACKING", "off")
    t.call("CLIENT", "TRACKINGINFO")
    t.call("PING")
    return t.log


def scenario_noloop(srv):
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    t.call("CLIENT", "TRACKING", "on", "NOLOOP")
    t.call("GET", "k")
    t.call("SET", "k", "1")
    t.call("GET", "k")
    w.call("SET", "k", "2")
    t.push()
    t.call("CLIENT", "TRACKINGINFO")
    return t.log


def scenario_bcast(srv):
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    t.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b:")
    w.call("SET", "ab", "1")
    t.push()
    w.call("SET", "c", "1")
    w.call("SET", "b:1", "1")
    t.push()
    t.call("CLIENT", "TRACKINGINFO")
    t.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ax")
    t.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "xy")
    t.call("CLIENT", "TRACKING", "on")
    t.call("CLIENT", "TRACKING", "off")
    t.call("CLIENT", "TRACKING", "on", "BCAST")
    w.call("SET", "anything", "1")
    t.push()
    t.call("CLIENT", "TRACKINGINFO")
    return t.log


def scenario_optin_optout(srv):
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    t.call("CLIENT", "CACHING", "yes")
    t.call("CLIENT", "TRACKING", "on", "OPTIN")
    t.call("GET", "a")
    w.call("SET", "a", "1")
    t.call("CLIENT", "CACHING", "no")
    t.call("CLIENT", "CACHING", "yes")
    t.call("CLIENT", "TRACKINGINFO")
    t.call("GET", "b")
    t.call("GET", "c")  # CACHING yes lasted one command
    w.call("SET", "c", "1")
    w.call("SET", "b", "1")
    t.push()
    t.call("CLIENT", "TRACKING", "on", "OPTOUT")
    t.call("CLIENT", "TRACKING", "off")
    t.call("CLIENT", "TRACKING", "on", "OPTOUT")
    t.call("CLIENT", "CACHING", "no")
    t.call("CLIENT", "TRACKINGINFO")
    t.call("GET", "d")
    t.call("GET", "e")
    w.call("SET", "d", "1")
    w.call("SET", "e", "1")
    t.push()
    t.call("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT")
    t.call("CLIENT", "TRACKING", "on", "BCAST", "OPTIN")
    t.call("CLIENT", "TRACKING", "on", "PREFIX", "a")
    t.call("CLIENT", "TRACKING", "on", "REDIRECT", "999999")
    t.call("CLIENT", "TRACKING", "maybe")
    t.call("CLIENT", "CACHING", "maybe")
    return t.log


def scenario_redirect_resp2(srv):
    w = conn(srv)
    w.call("FLUSHALL")
    r = conn(srv)
    rid = r.call("CLIENT", "ID")
    r.send(__import__("resp").encode("SUBSCRIBE", "__redis__:invalidate"))
    log = [norm(r.read_reply())]
    t = T(srv, resp3=False)
    t.call("CLIENT", "TRACKING", "on", "REDIRECT", str(rid))
    t.call("GET", "k")
    w.call("SET", "k", "1")
    log.append(norm(r.read_reply()))
    t.call("GET", "k")
    w.call("FLUSHALL")
    log.append(norm(r.read_reply()))
    t.log[0] = "OK" if t.log[0] == "OK" else t.log[0]
    r2 = t.call("CLIENT", "GETREDIR")
    t.log[-1] = r2 == rid
    return log + t.log


def scenario_flush_expire(srv):
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    t.call("CLIENT", "TRACKING", "on")
    t.call("GET", "k")
    w.call("FLUSHDB")
    t.push()
    w.call("SET", "e", "1", "PX", "30")
    t.call("GET", "e")
    time.sleep(0.1)
    w.call("GET", "e")  # expired: deleted by this lookup (or by the active sweep)
    t.push()
    return t.log


def worker_of(srv, cid):
    """CLIENT LIST's io-thread of connection cid (twincache: its worker); None on redis-server."""
    with conn(srv) as c:
        line = c.call("CLIENT", "LIST", "ID", str(cid)).decode()
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    return int(f["io-thread"]) if "io-thread" in f else None


def conn_away_from(srv, cid, tries=20):
    """A connection on another worker than connection cid (any on redis-server). A new
    connection mostly lands on the worker that is idle: keep cid's worker busy (DEBUG SLEEP on
    a connection of it) while connecting."""
    w = worker_of(srv, cid)
    if w is None:
        return conn(srv)
    for _ in range(tries):
        c = conn(srv)
        if worker_of(srv, c.call("CLIENT", "ID")) != w:
            return c
        c.send(__import__("resp").encode("DEBUG", "SLEEP", "0.3"))
        time.sleep(0.05)
        d = conn(srv)
        c.read_reply()
        c.close()
        if worker_of(srv, d.call("CLIENT", "ID")) != w:
            return d
        d.close()
    raise AssertionError("no connection on another worker than %d" % w)


def scenario_optin_multi_other_worker(srv):
    """rueidis's cached read with its default options: CLIENT TRACKING ON OPTIN, then CLIENT
    CACHING YES + MULTI / PTTL / GET / EXEC (the caching flag lasts the whole transaction); the
    writer is on the other worker."""
    t = T(srv)
    t.call("FLUSHALL")
    t.call("SET", "k", "1")
    t.call("SET", "k2", "1")
    t.call("CLIENT", "TRACKING", "ON", "OPTIN")
    w = conn_away_from(srv, t.c.call("CLIENT", "ID"))
    for cmd in (("CLIENT", "CACHING", "YES"), ("MULTI",), ("PTTL", "k"), ("GET", "k"),
                ("EXEC",), ("GET", "k2")):
        t.call(*cmd)
    w.call("SET", "k2", "2")  # not cached: no push
    w.call("SET", "k", "2")
    t.push()
    t.call("CLIENT", "CACHING", "YES")
    t.call("GET", "k")
    w.call("PEXPIRE", "k", "1")
    t.push()
    t.call("CLIENT", "TRACKINGINFO")
    w.close()
    return t.log


def scenario_slot_reuse(srv):
    """Readers that went away leave no trace: 70 tracking clients read a key each, 69 close,
    70 new ones read other keys (twincache hands the closed clients' reader slots out again);
    after every key is written each client sees only its own key's invalidation."""
    w = conn(srv)
    w.call("FLUSHALL")
    olds = []
    for i in range(70):
        t = T(srv)
        t.call("CLIENT", "TRACKING", "on")
        t.call("GET", "old%d" % i)
        olds.append(t)
    for t in olds[1:]:
        t.c.close()
    time.sleep(0.2)
    news = []
    for i in range(70):
        t = T(srv)
        t.call("CLIENT", "TRACKING", "on")
        t.call("GET", "new%d" % i)
        news.append(t)
    for i in range(70):
        w.call("SET", "old%d" % i, "x")
        w.call("SET", "new%d" % i, "x")
    olds[0].push()
    olds[0].call("PING")
    for t in news:
        t.push()
        t.call("PING")
    return [olds[0].log] + [t.log for t in news]


def sorted_push(t):
    """A push whose key list is in the server's order (a set): sorted."""
    r = norm(t.c.read_reply())
    if r[0] == "push" and isinstance(r[1][1], list):
        r = ("push", [r[1][0], sorted(r[1][1])])
    t.log.append(r)


def scenario_bcast_batched(srv):
    """BCAST: a multi-key write, a transaction and a lazy expiry in one command reach the client
    as one message per prefix with all its keys; NOLOOP drops the client's own keys but not an
    expiry's (which no client caused)."""
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    t.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "b:")
    w.call("MSET", "a:1", "1", "a:2", "2", "c:1", "3")
    sorted_push(t)
    for cmd in (("MULTI",), ("INCR", "a:1"), ("INCR", "b:1"), ("INCR", "b:2"), ("EXEC",)):
        w.call(*cmd)
    sorted_push(t)
    sorted_push(t)
    t.call("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP", "PREFIX", "a:")
    t.call("SET", "a:own", "x")
    t.call("SET", "a:exp", "x", "PX", "1")
    time.sleep(0.3)  # the expiry cycle removes it meanwhile
    t.push()
    t.call("GET", "a:exp")
    t.call("PING")
    return t.log


def scenario_script_keys(srv):
    """A tracking client's script that reads tracks the script's declared keys."""
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    t.call("CLIENT", "TRACKING", "on")
    t.call("EVAL", "redis.call('set', 'k3', 'bar')", 2, "k1", "k2")
    w.call("MSET", "k2", "1", "k1", "1")
    t.call("EVAL", "redis.call('get', 'k3')", 2, "k1", "k2")
    w.call("MSET", "k2", "2", "k1", "2")
    t.push()
    t.push()
    t.call("EVAL_RO", "redis.call('ping')", 2, "k1", "k2")
    w.call("MSET", "k2", "3", "k1", "3")
    t.call("PING")
    return t.log


def scenario_redir_broken(srv):
    """The REDIRECT client went away: a RESP3 client is told at the next invalidation."""
    t, w, r = T(srv), conn(srv), conn(srv)
    w.call("FLUSHALL")
    rid = r.call("CLIENT", "ID")
    t.call("CLIENT", "TRACKING", "on", "REDIRECT", rid)
    t.call("GET", "k")
    r.close()
    time.sleep(0.1)
    w.call("SET", "k", "1")
    t.call("PING")
    # the redirect's ID differs between the servers
    return [("push", [x[1][0], "id"]) if isinstance(x, tuple) and len(x[1]) == 2 and
            isinstance(x[1][1], int) else x for x in t.log]


def scenario_table_lowered_in_multi(srv):
    """tracking-table-max-keys lowered under a tracking client in MULTI (Redis's #11715): the
    next command, queued or not, trims the table first, so the invalidation comes before
    QUEUED (the timer paused, as Redis's test pauses its cron)."""
    t, w = T(srv), conn(srv)
    w.call("FLUSHALL")
    w.call("CONFIG", "SET", "tracking-table-max-keys", "2")
    w.call("DEBUG", "PAUSE-CRON", "1")
    try:
        t.call("CLIENT", "TRACKING", "on")
        t.call("MGET", "1{tag}", "2{tag}")
        t.call("MULTI")
        w.call("CONFIG", "SET", "tracking-table-max-keys", "1")
        t.call("PING")
        t.call("EXEC")
    finally:
        w.call("DEBUG", "PAUSE-CRON", "0")
        w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    # which of the two keys goes is the server's choice
    return [("push", ["invalidate", ["*"]]) if isinstance(x, tuple) else x for x in t.log]


@pytest.mark.parametrize("scenario", [scenario_default, scenario_noloop, scenario_bcast,
                                      scenario_bcast_batched, scenario_script_keys,
                                      scenario_redir_broken,
                                      scenario_optin_optout, scenario_redirect_resp2,
                                      scenario_flush_expire, scenario_slot_reuse,
                                      scenario_optin_multi_other_worker,
                                      scenario_table_lowered_in_multi],
                         ids=lambda f: f.__name__[9:])
def test_tracking_diff(pair, scenario):
    tc, rs = pair
    want = scenario(rs)
    got = scenario(tc)
    assert got == want


def test_memcached_write_invalidates(pair):
    tc = pair[0]
    t = T(tc)
    t.call("CLIENT", "TRACKING", "on")
    t.call("GET", "mk")
    s = socket.create_connection(("127.0.0.1", tc.mc_port))
    s.sendall(b"set mk 0 0 1\r\nx\r\n")
    assert s.recv(100) == b"STORED\r\n"
    t.push()
    assert t.log[-1] == ("push", [b"invalidate", [b"mk"]])
    t.call("GET", "mk")
    s.sendall(b"delete mk\r\n")
    assert s.recv(100) == b"DELETED\r\n"
    t.push()
    assert t.log[-1] == ("push", [b"invalidate", [b"mk"]])
    s.close()


def test_table_bound_and_info(pair):
    tc = pair[0]
    w = conn(tc)
    w.call("FLUSHALL")
    w.call("CONFIG", "SET", "tracking-table-max-keys", "10")
    t = T(tc)
    t.call("CLIENT", "TRACKING", "on")
    for i in range(20):
        t.call("GET", "key%d" % i)
    info = w.call("INFO").decode() if isinstance(w.call("INFO"), bytes) else ""
    keys = int(info.split("tracking_total_keys:")[1].split("\r\n")[0])
    assert keys <= 10
    assert int(info.split("tracking_clients:")[1].split("\r\n")[0]) >= 1
    # the keys the table let go of were invalidated (pushes arrive before later replies)
    pushes = [x for x in t.log if isinstance(x, tuple)]
    t.call("PING")
    pushes = [x for x in t.log if isinstance(x, tuple)]
    assert len(pushes) >= 10
    w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    t.call("CLIENT", "TRACKING", "off")


def test_redis_py_client_side_caching():
    import redis
    if not hasattr(redis, "cache") and "protocol" not in redis.Redis.__init__.__code__.co_varnames:
        pytest.skip("Debian's redis-py %s has no RESP3 client-side caching" % redis.__version__)


def test_concurrent_churn(pair):
    """Tracking clients reading and writing shared keys from several connections (both
    workers) at once, with a monitor and a keyspace subscriber attached, clients closing while
    invalidations are in flight: no crash, no sanitizer report, the table drains."""
    import threading
    tc = pair[0]
    w = conn(tc)
    w.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
    mon = conn(tc)
    mon.call("MONITOR")
    sub = conn(tc)
    sub.send(__import__("resp").encode("PSUBSCRIBE", "__key*__:*"))
    sub.read_reply()
    errors = []

    def worker(n):
        try:
            t = T(tc)
            t.call("CLIENT", "TRACKING", "on", *(["BCAST", "PREFIX", "k1"] if n == 0 else
                                                  ["NOLOOP"] if n == 1 else []))
            for i in range(300):
                t.call("GET", "k%d" % (i % 20))
                t.call("SET", "k%d" % ((i * 7 + n) % 20), str(i))
            t.c.close()  # closes with pushes queued
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ths = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(60)
    assert not errors
    mon.close()
    sub.close()
    w.call("CONFIG", "SET", "notify-keyspace-events", "")
    w.call("FLUSHALL")
    info = w.call("INFO")
    assert b"tracking_clients:0\r\n" in info and b"tracking_total_keys:0\r\n" in info
