"""Client-side caching, keyspace events and MONITOR with real clients, on redis-server 7.0 and
twincache (--threads 2, memcached port on) side by side (issue 19).

Caching clients: redis-py 5.2 from PyPI (protocol=3, cache_config; in .venv-apps), node-redis 5
from npm (RESP3, clientSideCache; tests/apps/csc-node) and rueidis from the Go module proxy with
its default options (tests/apps/csc-go). Each runs as a line-driven subprocess ("get KEY" ->
one JSON line) while this test makes the writes: the client caches GET k (the second GET is a
hit and does not reach the server: cmdstat_get), then k is written (a) by a connection on the
other worker than the client's (b) by the memcached protocol (twincache only) (c) by expiry;
after each the client must read the new value, never the stale one for good.

A keyspace-event listener (redis-py) sees the events of set/del/expire/expired (and, on
twincache, of a memcached set); `redis-cli monitor` shows the commands of two connections, one
on each worker. Which worker a connection is on: CLIENT LIST's io-thread field (twincache)."""
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import APPS, REPO, VENV_PY, tcharness

NODE = shutil.which("node")
GO = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go")
                            else None)
CSC_NODE = APPS / "csc-node"
CSC_GO = APPS / "csc-go"
KEY = "csc:k"


@pytest.fixture(scope="module")
def pair():
    """{"redis": redis-server 7.0, "twincache": twincache --threads 2 with its memcached
    port (and DEBUG, for conn_on_worker's DEBUG SLEEP)}, for this module."""
    tcharness.require_twincache()
    tc = tcharness.start_twincache("--enable-debug-command", "yes", mc=True, threads=2,
                                   check=True)
    rs = tcharness.start_redis()
    yield {"redis": rs, "twincache": tc}
    tc.stop()
    rs.stop()


def fresh(srv):
    c = srv.client(decode=True)
    c.flushall()
    c.config_set("notify-keyspace-events", "")
    return c


# -- workers ------------------------------------------------------------------------------------


def clients(srv):
    """CLIENT LIST as {id: {field: value}}."""
    c = srv.client(decode=True)
    out = {}
    for line in c.cmd("CLIENT", "LIST").splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        out[int(f["id"])] = f
    c.connection_pool.disconnect()
    return out


def worker_of(srv, cid):
    """The worker (io-thread) of connection cid; None on redis-server (one thread)."""
    w = clients(srv)[cid].get("io-thread")
    return None if w is None else int(w)


def single(srv):
    c = srv.client(decode=True, single_connection_client=True)
    c.ping()
    return c


def conn_on_worker(srv, want, tries=20):
    """A single-connection client on worker want. New connections go to the least loaded worker
    (on a tie, the one the kernel woke to accept): when one lands elsewhere, keep that worker
    busy (DEBUG SLEEP on a connection of it) while connecting again."""
    for _ in range(tries):
        c = single(srv)
        if worker_of(srv, c.client_id()) == want:
            return c
        c.connection.send_command("DEBUG", "SLEEP", "0.3")
        time.sleep(0.05)
        d = single(srv)
        c.connection.read_response()
        c.close()
        if worker_of(srv, d.client_id()) == want:
            return d
        d.close()
    raise AssertionError("no connection landed on worker %d" % want)


def writer_away_from(srv, cid):
    """A connection on another worker than connection cid (any connection on redis-server)."""
    w = worker_of(srv, cid)
    if w is None:
        return single(srv)
    c = conn_on_worker(srv, 1 - w)
    assert worker_of(srv, c.client_id()) != w
    return c


def reader_id(srv, exclude):
    """The connection of the caching client that last read: its last command is GET (or EXEC,
    rueidis reads in MULTI/EXEC), and it is none of ours."""
    ids = [i for i, f in clients(srv).items()
           if i not in exclude and f.get("cmd") in ("get", "exec")]
    assert len(ids) == 1, clients(srv)
    return ids[0]


# -- the caching clients ------------------------------------------------------------------------


class LineClient:
    """A client program answering "get KEY" lines with JSON lines (see the csc-* programs)."""

    def __init__(self, argv, port, cwd, env=None):
        e = dict(os.environ, TC_APP_PORT=str(port), **(env or {}))
        self.p = subprocess.Popen(argv, cwd=cwd, env=e, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.q = queue.Queue()
        self.err = []
        threading.Thread(target=self._pump, args=(self.p.stdout, self.q), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.p.stderr, None), daemon=True).start()
        self.hello = self.read()

    def _pump(self, f, q):
        for line in f:
            if q is not None and line.startswith("{"):
                q.put(json.loads(line))
            else:
                self.err.append(line)

    def read(self, timeout=30):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no answer from the client (exit %s): %s"
                                 % (self.p.poll(), "".join(self.err)[-3000:]))

    def get(self, key):
        self.p.stdin.write("get %s\n" % key)
        self.p.stdin.flush()
        r = self.read()
        assert "error" not in r, r
        return r

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def poll_until(cl, key, pred, deadline=6.0):
    """GET through the cache until pred(value): the value then (the last one on timeout)."""
    end = time.monotonic() + deadline
    while True:
        r = cl.get(key)
        if pred(r["v"]) or time.monotonic() > end:
            return r["v"]
        time.sleep(0.02)


def get_calls(c):
    return c.info("commandstats").get("cmdstat_get", {}).get("calls", 0)


def mc_set(srv, key, value):
    with socket.create_connection((srv.host, srv.mc_port), timeout=10) as s:
        s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(value), value.encode()))
        reply = b""
        while not reply.endswith(b"\r\n"):
            d = s.recv(100)
            if not d:
                break
            reply += d
    return reply


def scenario(srv, start):
    """Cache GET k in the client from start(port); write k from the other worker, from the
    memcached protocol (twincache) and by expiry. Returns the observable outcome."""
    admin = fresh(srv)
    admin.set(KEY, "v1")
    cl = start(srv.port)
    out = {}
    try:
        assert cl.hello.get("ready"), cl.hello
        calls = get_calls(admin)
        r1, r2 = cl.get(KEY), cl.get(KEY)
        out["cached"] = [r1["v"], r1["hit"], r2["v"], r2["hit"]]
        out["get_calls"] = get_calls(admin) - calls  # 1: the hit did not reach the server
        rid = reader_id(srv, {admin.client_id()})
        w = writer_away_from(srv, rid)
        out["other_worker"] = worker_of(srv, w.client_id()) != worker_of(srv, rid) \
            if srv.kind == "twincache" else True
        # (a) a write from a connection on the other worker
        w.set(KEY, "v2")
        out["after_write"] = poll_until(cl, KEY, lambda v: v != "v1")
        out["recached"] = cl.get(KEY)["hit"]
        # (b) the memcached protocol on the same keyspace
        if srv.mc_port:
            assert mc_set(srv, KEY, "v3") == b"STORED\r\n"
            out["after_mc_set"] = poll_until(cl, KEY, lambda v: v != "v2")
            out["recached_mc"] = cl.get(KEY)["hit"]
        # (c) expiry: cached v4 with a TTL, then gone
        w.set(KEY, "v4", px=1500)
        out["before_expiry"] = poll_until(cl, KEY, lambda v: v == "v4")
        out["cached_ttl"] = cl.get(KEY)["hit"]
        out["after_expiry"] = poll_until(cl, KEY, lambda v: v is None)
        w.close()
    finally:
        cl.close()
    return out


EXPECT = {"cached": ["v1", False, "v1", True], "get_calls": 1, "other_worker": True,
          "after_write": "v2", "recached": True, "before_expiry": "v4", "cached_ttl": True,
          "after_expiry": None}
EXPECT_MC = {"after_mc_set": "v3", "recached_mc": True}


def check_both(pair, start):
    out = {kind: scenario(srv, start) for kind, srv in pair.items()}
    assert out["redis"] == EXPECT, out
    assert out["twincache"] == {**EXPECT, **EXPECT_MC}, out


# -- redis-py -----------------------------------------------------------------------------------

REDISPY = [str(VENV_PY), str(APPS / "pyapps" / "csc_redispy.py")]


def need(path):
    """An install of scripts/install-deps.sh: missing is a failure (the toolchain is there)."""
    assert path.exists(), "%s missing: run scripts/install-deps.sh" % path


def test_redispy_version_gate(pair):
    """redis-py refuses client-side caching below Redis 7.4: both servers say 7.0.x, both are
    refused alike (the scenario below lowers that gate)."""
    need(VENV_PY)
    out = {}
    for kind, srv in pair.items():
        cl = LineClient(REDISPY, srv.port, REPO, env={"TC_CSC_VERSION_GATE": "1"})
        out[kind] = cl.hello
        cl.close()
    assert out["twincache"] == out["redis"]
    assert "7.4" in out["redis"].get("refused", ""), out


def test_redispy_client_cache(pair):
    need(VENV_PY)
    check_both(pair, lambda port: LineClient(REDISPY, port, REPO))


# -- node-redis ---------------------------------------------------------------------------------


@pytest.mark.skipif(not NODE or not shutil.which("npm"), reason="no Node.js / npm")
def test_node_redis_client_cache(pair):
    need(CSC_NODE / "node_modules" / "redis")
    check_both(pair, lambda port: LineClient([NODE, "csc.js"], port, CSC_NODE))


# -- rueidis ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rueidis_bin():
    """tests/apps/csc-go built once (scripts/install-deps.sh builds it; else here)."""
    binary = CSC_GO / "csc-go"
    if not binary.exists():
        if not GO:
            pytest.skip("no Go toolchain")
        env = dict(os.environ, GOFLAGS="-mod=mod -buildvcs=false")
        p = subprocess.run([GO, "build", "-o", "csc-go", "."], cwd=CSC_GO, env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
    return binary


def test_rueidis_client_cache(pair, rueidis_bin):
    check_both(pair, lambda port: LineClient([str(rueidis_bin)], port, CSC_GO))


# -- keyspace events ----------------------------------------------------------------------------


def keyevents(srv):
    """Keyevent notifications seen by a redis-py listener for writes from a connection on the
    other worker: set, del, expire, set with PX then expired; a memcached set (twincache)."""
    admin = fresh(srv)
    admin.config_set("notify-keyspace-events", "KEA")
    ps = srv.client(decode=True).pubsub()
    ps.psubscribe("__keyevent@0__:*")
    assert ps.get_message(timeout=5)["type"] == "psubscribe"
    lid = None
    for i, f in clients(srv).items():
        if f.get("cmd") == "psubscribe":
            lid = i
    assert lid, clients(srv)
    w = writer_away_from(srv, lid)
    w.set("ev:a", "1")
    w.delete("ev:a")
    w.set("ev:b", "1")
    w.expire("ev:b", 100)
    w.set("ev:c", "1", px=100)
    want = 7  # the six above and "expired" of ev:c
    if srv.mc_port:
        assert mc_set(srv, "ev:m", "x") == b"STORED\r\n"
        want += 1
    events, end = [], time.monotonic() + 8
    while len(events) < want and time.monotonic() < end:
        m = ps.get_message(timeout=0.5)
        if m and m["type"] == "pmessage":
            events.append([m["channel"].split(":", 1)[1], m["data"]])
    ps.close()
    w.close()
    return events


REDIS_EVENTS = [["set", "ev:a"], ["del", "ev:a"], ["set", "ev:b"], ["expire", "ev:b"],
                ["set", "ev:c"], ["expire", "ev:c"]]


def test_keyspace_events_listener(pair):
    rs = keyevents(pair["redis"])
    tc = keyevents(pair["twincache"])
    # the expiry arrives once its time has come, wherever it falls among the rest
    assert sorted(rs) == sorted(REDIS_EVENTS + [["expired", "ev:c"]]), rs
    assert rs[:6] == REDIS_EVENTS, rs
    assert tc[:6] == rs[:6], tc
    assert sorted(tc[6:]) == sorted([["expired", "ev:c"], ["set", "ev:m"]]), tc


# -- redis-cli monitor --------------------------------------------------------------------------


def test_redis_cli_monitor_both_workers(pair):
    """`redis-cli monitor` on twincache --threads 2 shows the commands of two connections, one
    on each worker, in Redis's line format (as redis-server shows them)."""
    cli = shutil.which("redis-cli")
    if not cli:
        pytest.skip("redis-cli (redis-tools) missing")
    out = {}
    for kind, srv in pair.items():
        fresh(srv)
        mon = subprocess.Popen([cli, "-h", srv.host, "-p", str(srv.port), "monitor"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert mon.stdout.readline().strip() == "OK"
            a = conn_on_worker(srv, 0) if kind == "twincache" else single(srv)
            b = conn_on_worker(srv, 1) if kind == "twincache" else single(srv)
            if kind == "twincache":
                assert {worker_of(srv, a.client_id()), worker_of(srv, b.client_id())} == {0, 1}
            a.set("mon:a", "from a")
            b.set("mon:b", "from b")
            a.get("mon:b")
            b.execute_command("ECHO", "done")
            lines = []
            end = time.monotonic() + 10
            while time.monotonic() < end:
                line = mon.stdout.readline()
                if not line:
                    break
                lines.append(line.rstrip("\n"))
                if '"ECHO" "done"' in line:
                    break
            a.close()
            b.close()
        finally:
            mon.terminate()
            mon.wait(timeout=10)
        fmt = re.compile(r'^\d+\.\d{6} \[0 127\.0\.0\.1:(\d+)\] (.*)$')
        seen = []
        for line in lines:
            m = fmt.match(line)
            assert m, line
            if m.group(2).startswith(('"SET"', '"GET"', '"ECHO"')):
                seen.append((m.group(1), m.group(2)))
        out[kind] = seen
    for kind, seen in out.items():
        cmds = [s[1] for s in seen]
        assert cmds == ['"SET" "mon:a" "from a"', '"SET" "mon:b" "from b"', '"GET" "mon:b"',
                        '"ECHO" "done"'], (kind, seen)
        # two client ports: a's two commands, b's two
        assert seen[0][0] == seen[2][0] != seen[1][0] == seen[3][0], (kind, seen)
