"""Issue 20's acceptance: three twincache nodes watched by three Debian redis-sentinel
processes (started here on free loopback ports, stopped by PID). Four writers count a write as
acknowledged only after WAIT 1 answers 1; the primary is killed with SIGKILL under that load;
Sentinel promotes a replica, every acknowledged write is on the new primary, redis-py's
Sentinel client finds it, and the old primary rejoins as a replica when restarted."""

import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest
import redis
import redis.sentinel

import tcharness

SENTINEL = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"


def start_sentinel(d, port, primary_port):
    conf = os.path.join(d, "sentinel-%d.conf" % port)
    with open(conf, "w") as f:
        f.write("port %d\nbind 127.0.0.1\ndir %s\n" % (port, d))
        f.write("sentinel monitor tc 127.0.0.1 %d 2\n" % primary_port)
        f.write("sentinel down-after-milliseconds tc 1000\n")
        f.write("sentinel failover-timeout tc 10000\n")
        f.write("sentinel parallel-syncs tc 2\n")
    s = tcharness.Server([SENTINEL, conf], port=port, kind="sentinel", dir=d,
                         logfile=os.path.join(d, "sentinel-%d.log" % port), sanitized=False)
    return s.start()


def node_conf(d, port, primary=None):
    conf = os.path.join(d, "node-%d.conf" % port)
    with open(conf, "w") as f:
        f.write("port %d\nmemcache-port 0\nbind 127.0.0.1\ndir %s\nsave \"\"\n" % (port, d))
        f.write("repl-diskless-sync-delay 0\ndbfilename dump-%d.rdb\n" % port)
        if primary:
            f.write("replicaof 127.0.0.1 %d\n" % primary)
    return conf


def sentinel_view(port):
    """(primary port, flags) as one Sentinel sees the group, or None when it does not answer."""
    try:
        sc = redis.Redis(port=port, decode_responses=True, socket_timeout=2)
        m = dict(zip(*[iter(sc.execute_command("SENTINEL", "MASTER", "tc"))] * 2))
        return int(m["port"]), m["flags"]
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        return None


def diagnostics(nodes, sentinels):
    """What each node and Sentinel says, for a failure message."""
    out = []
    for n in nodes:
        try:
            info = redis.Redis(port=n.port, socket_timeout=2).info("replication")
        except (redis.ConnectionError, redis.TimeoutError) as e:
            info = repr(e)
        out.append("node %d: %s\n%s" % (n.port, info, n.output_tail(25)))
    for s in sentinels:
        out.append("sentinel %d:\n%s" % (s.port, s.output_tail(40)))
    return "\n".join(out)


@pytest.mark.skipif(not os.path.exists(SENTINEL), reason="redis-sentinel is not installed")
def test_sentinel_failover_keeps_every_acknowledged_write(servers, tmp_path):
    ports = tcharness.free_ports(6)
    nodes = []
    for i, p in enumerate(ports[:3]):
        d = tmp_path / ("n%d" % p)
        d.mkdir()
        conf = node_conf(str(d), p, None if i == 0 else ports[0])
        srv = tcharness.Server([str(tcharness.twincache_bin()), conf], port=p, dir=str(d))
        nodes.append(servers.track(srv.start()))
    primary = nodes[0]
    pc = redis.Redis(port=primary.port)
    end = time.time() + 20
    while pc.info("replication")["connected_slaves"] < 2:
        assert time.time() < end, "replicas did not attach"
        time.sleep(0.05)
    sentinels = []
    for p in ports[3:]:
        sentinels.append(servers.track(start_sentinel(str(tmp_path), p, primary.port)))
    sc = redis.Redis(port=ports[3], decode_responses=True)
    end = time.time() + 30
    while True:
        m = dict(zip(*[iter(sc.execute_command("SENTINEL", "MASTER", "tc"))] * 2))
        if int(m["num-slaves"]) == 2 and int(m["num-other-sentinels"]) == 2:
            break
        assert time.time() < end, "sentinels did not discover the group: %s" % m
        time.sleep(0.2)

    sentinel = redis.sentinel.Sentinel([("127.0.0.1", p) for p in ports[3:]],
                                       socket_timeout=1.0)
    acked = [[] for _ in range(4)]
    stop = threading.Event()
    first_write_after = {}

    def writer(n):
        i = 0
        while not stop.is_set():
            try:
                m = sentinel.master_for("tc", socket_timeout=1.0)
                while not stop.is_set():
                    key = "w%d:%d" % (n, i)
                    m.set(key, i)
                    if m.execute_command("WAIT", 1, 1000) >= 1:
                        acked[n].append(key)
                        if "killed" in first_write_after and "t" not in first_write_after:
                            first_write_after["t"] = time.time()
                    i += 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError,
                    redis.sentinel.MasterNotFoundError):
                time.sleep(0.05)

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(4)]
    for t in threads:
        t.start()
    # writes acknowledged by the replicas before the kill (a slow sanitizer build takes longer
    # than the 1.5 s a release build needs to find the primary and see WAIT answered)
    end = time.time() + 20
    time.sleep(1.5)
    while sum(len(a) for a in acked) < 20 and time.time() < end:
        time.sleep(0.1)
    before = sum(len(a) for a in acked)
    assert before > 0, "no write was acknowledged before the kill"
    primary.stop(sig=signal.SIGKILL)
    killed_at = time.time()
    first_write_after["killed"] = killed_at
    end = time.time() + 40
    new_addr = None
    while time.time() < end:
        try:
            addr = sentinel.discover_master("tc")
        except redis.sentinel.MasterNotFoundError:
            addr = (None, primary.port)  # down, not yet replaced
        if addr[1] != primary.port:
            new_addr = addr
            break
        time.sleep(0.1)
    assert new_addr, "Sentinel did not promote a replica"
    # writes continue on the new primary
    end = time.time() + 20
    while "t" not in first_write_after and time.time() < end:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(10)
    assert "t" in first_write_after, "no acknowledged write on the new primary"
    print("\nfailover: %.2f s from SIGKILL to the first acknowledged write on the new primary "
          "(port %d); %d writes acknowledged before the kill, %d in all"
          % (first_write_after["t"] - killed_at, new_addr[1], before,
             sum(len(a) for a in acked)))
    newp = redis.Redis(port=new_addr[1])
    assert newp.info("replication")["role"] == "master"
    # ioredis's `sentinels` option finds the new primary too (node and BullMQ's ioredis)
    js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ioredis_sentinel.js")
    ioredis = os.path.join(tcharness.REPO_ROOT, "tests", "apps", "bullmq", "node_modules",
                           "ioredis")
    if shutil.which("node") and os.path.isdir(ioredis):
        out = subprocess.run(["node", js] + ["127.0.0.1:%d" % p for p in ports[3:]],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout.strip().splitlines()[-1])
        assert got == {"port": new_addr[1], "value": "via-sentinel", "role": "master"}, got
    missing = [k for a in acked for k in a if newp.get(k) is None]
    assert not missing, "acknowledged writes lost: %s" % missing[:10]
    # every Sentinel agrees on one primary and has ended the failover before the old one comes
    # back (an operator restarts a dead node after the failover, not in the middle of it). With
    # down-after-milliseconds 1000 on a slow sanitizer build a Sentinel may find the promoted
    # node slow to answer once and fail over again to the other replica: legitimate Sentinel
    # behaviour, so the primary they settle on is the one the old primary must follow, and it
    # must hold every acknowledged write too.
    end = time.time() + 45
    while True:
        views = [sentinel_view(p) for p in ports[3:]]
        if views[0] and all(v and v[0] == views[0][0] and "failover_in_progress" not in v[1]
                            for v in views):
            break
        assert time.time() < end, "the Sentinels did not settle after %s: %s\n%s" % (
            new_addr, views, diagnostics(nodes, sentinels))
        time.sleep(0.2)
    if views[0][0] != new_addr[1]:
        print("the Sentinels failed over again, to port %d" % views[0][0])
        new_addr = ("127.0.0.1", views[0][0])
        newp = redis.Redis(port=new_addr[1])
        missing = [k for a in acked for k in a if newp.get(k) is None]
        assert not missing, "acknowledged writes lost by the second failover: %s" % missing[:10]
    # the old primary rejoins as a replica of the new one
    primary.start()
    end = time.time() + 60
    while True:
        role = None
        try:
            role = redis.Redis(port=primary.port).execute_command("ROLE")
            if role[0] == b"slave" and role[2] == new_addr[1] and role[3] == b"connected":
                break
        except redis.ConnectionError:
            pass
        assert time.time() < end, "the old primary did not rejoin as a replica: ROLE %s\n%s" % (
            role, diagnostics(nodes, sentinels))
        time.sleep(0.2)
    old = redis.Redis(port=primary.port)
    end = time.time() + 10
    while old.get(acked[0][-1]) is None:
        assert time.time() < end
        time.sleep(0.05)
