"""Stream consumer groups survive restarts: RDB (twincache <-> redis-server 7.0 both ways) and
AOF replay (the logged XCLAIM/XGROUP SETID forms rebuild the same PEL, delivery times and
counts included, even where a replay at another time would claim differently) and AOF
rewrite. XINFO STREAM FULL shows every persisted field (delivery times, counts, seen times)."""
import os
import shutil
import threading
import time

import pytest

AOF = ("--appendonly", "yes")
RADIX = (b"radix-tree-keys", b"radix-tree-nodes")


def cl(srv):
    """A client that returns raw replies."""
    r = srv.client()
    r.response_callbacks = {}
    return r


def kv(reply):
    return dict(zip(reply[::2], reply[1::2]))


def full(srv, key):
    """XINFO STREAM key FULL COUNT 0 without the radix-tree internals."""
    r = cl(srv)
    rep = kv(r.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0"))
    for f in RADIX:
        rep.pop(f, None)
    return rep


def state(srv, keys=("s", "t"), seen=True, read=True):
    """What the groups hold. seen=False: without the consumers' seen-time, which a replayed
    AOF sets to the replay's time (so does Redis: it logs no seen time). read=False: without
    the groups' entries-read and lag, which Redis 7.0 does not log for XREADGROUP (its XCLAIM
    ... LASTID form carries the last ID alone; a replay's counter is Redis's own guess)."""
    r = cl(srv)
    out = {}
    for k in keys:
        if r.exists(k):
            out[k] = full(srv, k)
            for g in out[k][b"groups"]:
                if not read:
                    for f in (b"entries-read", b"lag"):
                        g[g.index(f) + 1] = "masked"
                if not seen:
                    cons = g[g.index(b"consumers") + 1]
                    for c in cons:
                        c[c.index(b"seen-time") + 1] = "masked"
            out[k + ":groups"] = [
                {f: ("masked" if not read and f in (b"entries-read", b"lag") else v)
                 for f, v in kv(g).items()}
                for g in r.execute_command("XINFO", "GROUPS", k)]
    return out


def populate(srv):
    r = cl(srv)
    for i in range(1, 11):
        r.execute_command("XADD", "s", "%d-1" % i, "f", str(i), "g", "x" * i)
    r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    r.execute_command("XGROUP", "CREATE", "s", "h", "$")
    r.execute_command("XGROUP", "CREATE", "s", "empty", "0", "ENTRIESREAD", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "bob", "COUNT", "4", "STREAMS", "s", ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    r.execute_command("XACK", "s", "g", "2-1")
    r.execute_command("XCLAIM", "s", "g", "carol", "0", "5-1", "RETRYCOUNT", "9")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "idle-one")
    r.execute_command("XDEL", "s", "6-1")
    r.execute_command("XADD", "s", "11-1", "f", "11")
    r.execute_command("XREADGROUP", "GROUP", "h", "dave", "STREAMS", "s", ">")
    r.execute_command("XADD", "t", "1-1", "a", "b")
    r.execute_command("XGROUP", "CREATE", "t", "g", "$")


def test_rdb_roundtrip(tc_factory):
    tc = tc_factory()
    populate(tc)
    before = state(tc)
    assert [g[b"pel-count"] for g in map(kv, before["s"][b"groups"])] == [0, 6, 1]
    tc.client().save()
    tc.restart()
    assert state(tc) == before
    assert "consumer group" not in tc.output()


def test_redis_loads_twincache_groups(tc_factory, redis_factory, tmp_path):
    tc = tc_factory(dir=tmp_path)
    populate(tc)
    before = state(tc)
    tc.client().save()
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(tc.dump, rdir / "dump.rdb")
    rs = redis_factory(dir=rdir)
    assert state(rs) == before


def test_twincache_loads_redis_groups(tc_factory, redis_factory, tmp_path):
    rdir = tmp_path / "redis"
    rdir.mkdir()
    rs = redis_factory(dir=rdir)
    populate(rs)
    before = state(rs)
    assert rs.client().save()
    tdir = tmp_path / "tc"
    tdir.mkdir()
    shutil.copy(rdir / "dump.rdb", tdir / "dump.rdb")
    tc = tc_factory(dir=tdir)
    assert state(tc) == before
    # and the same answers to the group commands
    r = cl(tc)
    assert r.execute_command("XPENDING", "s", "g")[0] == \
        cl(rs).execute_command("XPENDING", "s", "g")[0]


def aof_workload(srv):
    """Group changes whose replay at another time would differ unless logged exactly."""
    r = cl(srv)
    populate(srv)
    time.sleep(0.25)
    # only entries idle for 200 ms are claimed: a replay right away would claim none
    r.execute_command("XAUTOCLAIM", "s", "g", "erin", "200", "0", "COUNT", "2")
    r.execute_command("XCLAIM", "s", "g", "frank", "200", "7-1", "8-1", "9-1")
    r.execute_command("XCLAIM", "s", "g", "frank", "0", "10-1", "FORCE", "JUSTID")
    r.execute_command("XREADGROUP", "GROUP", "g", "gina", "NOACK", "STREAMS", "s", ">")
    r.execute_command("XREADGROUP", "GROUP", "h", "hank", "STREAMS", "s", "0")
    r.execute_command("XGROUP", "SETID", "s", "h", "3-1")
    r.execute_command("XGROUP", "DELCONSUMER", "s", "g", "idle-one")
    r.execute_command("XGROUP", "CREATE", "s", "late", "0")
    r.execute_command("XREADGROUP", "GROUP", "late", "x", "COUNT", "2", "STREAMS", "s", ">")
    r.execute_command("XGROUP", "DESTROY", "t", "g")
    # a pending entry whose stream entry is gone is dropped by XAUTOCLAIM
    r.execute_command("XDEL", "s", "1-1")
    r.execute_command("XAUTOCLAIM", "s", "g", "ivy", "0", "0", "COUNT", "1")
    # a blocked reader served by a later XADD
    out = []

    def blocked():
        c = cl(srv)
        out.append(c.execute_command("XREADGROUP", "GROUP", "w", "waiter", "BLOCK", "5000",
                                     "STREAMS", "t", ">"))

    r.execute_command("XGROUP", "CREATE", "t", "w", "$")
    th = threading.Thread(target=blocked)
    th.start()
    time.sleep(0.3)
    r.execute_command("XADD", "t", "2-1", "c", "d")
    th.join(10)
    assert out and out[0][0][1][0][0] == b"2-1"
    # a reader that blocked and timed out, and one that found nothing: nothing to log
    assert r.execute_command("XREADGROUP", "GROUP", "w", "waiter", "BLOCK", "50",
                             "STREAMS", "t", ">") is None
    assert r.execute_command("XREADGROUP", "GROUP", "w", "waiter", "STREAMS", "t", ">") is None


def test_aof_replay_rebuilds_groups(tc_factory):
    tc = tc_factory(*AOF)
    aof_workload(tc)
    before = state(tc, seen=False, read=False)
    time.sleep(0.3)
    tc.restart()
    assert state(tc, seen=False, read=False) == before
    with open(os.path.join(tc.dir, "appendonlydir", "appendonly.aof.1.incr.aof"), "rb") as f:
        data = f.read().lower()
    assert b"xreadgroup" not in data and b"xautoclaim" not in data
    assert b"forcejustid" not in data and b"lastid" in data


def test_aof_rewrite_keeps_groups(tc_factory):
    tc = tc_factory(*AOF)
    aof_workload(tc)
    r = cl(tc)
    r.execute_command("BGREWRITEAOF")
    deadline = time.time() + 30
    while time.time() < deadline:
        info = tc.client().info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    r.execute_command("XACK", "s", "g", "3-1")
    r.execute_command("XREADGROUP", "GROUP", "late", "x", "COUNT", "1", "STREAMS", "s", ">")
    before = state(tc, seen=False)
    tc.restart()
    assert state(tc, seen=False) == before


def test_redis_replays_twincache_aof(tc_factory, redis_factory, tmp_path):
    """redis-server 7.0 loads twincache's AOF directory (its logged group forms) to the same
    groups, and to the same entries-read and lag as twincache's own replay of it."""
    tc = tc_factory(*AOF, dir=tmp_path)
    aof_workload(tc)
    before = state(tc, seen=False, read=False)
    tc.restart()
    replayed = state(tc, seen=False)
    tc.stop()
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copytree(tmp_path / "appendonlydir", rdir / "appendonlydir")
    rs = redis_factory("--appendonly", "yes", dir=rdir)
    assert state(rs, seen=False, read=False) == before
    assert state(rs, seen=False) == replayed


def test_corrupt_group_refused(tc_factory, redis_factory, tmp_path):
    """A dump whose consumer PEL names an entry missing from the group PEL is refused
    without a crash."""
    rdir = tmp_path / "redis"
    rdir.mkdir()
    rs = redis_factory(dir=rdir)
    r = cl(rs)
    r.execute_command("XADD", "s", "1-1", "a", "b")
    r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    r.save()
    data = bytearray(open(rdir / "dump.rdb", "rb").read())
    # the consumer's PEL ID is the last 16-byte ID in the file: change it
    name = data.rfind(b"\x01c")
    assert name > 0
    idpos = name + 2 + 8 + 1
    data[idpos + 15] ^= 0x7f
    data[-8:] = b"\x00" * 8  # no checksum
    tdir = tmp_path / "tc"
    tdir.mkdir()
    open(tdir / "dump.rdb", "wb").write(bytes(data))
    from persist_harness import make_twincache
    srv = make_twincache(str(tdir))
    with pytest.raises(Exception):
        srv.start(timeout=5)
    srv.stop()
    out = srv.output()
    assert "Consumer entry not found in group global PEL" in out, out[-2000:]
    # (the store is not freed on a fatal load error: LeakSanitizer's report is not ours)
    assert "ERROR: AddressSanitizer" not in out and "runtime error:" not in out


def pel_shape(srv):
    """Each group's PEL as (id, owner, count) and its last ID / entries-read: what a replay of
    commands logged as sent (inside MULTI/EXEC) must rebuild, times aside."""
    r = cl(srv)
    out = []
    for g in r.execute_command("XINFO", "GROUPS", "s"):
        g = kv(g)
        rows = r.execute_command("XPENDING", "s", g[b"name"], "-", "+", "1000")
        out.append((g[b"name"], g[b"last-delivered-id"], g[b"entries-read"],
                    [(x[0], x[1], x[3]) for x in rows]))
    return out


def test_aof_multi_exec_group_commands(tc_factory):
    """Inside MULTI/EXEC too, group commands are logged in their exact forms."""
    tc = tc_factory(*AOF)
    r = cl(tc)
    for i in range(1, 6):
        r.execute_command("XADD", "s", "%d-1" % i, "f", str(i))
    r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    p = r.pipeline(transaction=True)
    p.execute_command("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "BLOCK", "0",
                      "STREAMS", "s", ">")
    p.execute_command("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    p.execute_command("XCLAIM", "s", "g", "c", "0", "1-1", "RETRYCOUNT", "4")
    p.execute_command("XACK", "s", "g", "2-1")
    p.execute_command("XAUTOCLAIM", "s", "g", "d", "0", "4-1", "COUNT", "1")
    res = p.execute()
    assert res[0][0][1][0][0] == b"1-1" and len(res[1][0][1]) == 3
    before = pel_shape(tc)
    assert before[0][3][0] == (b"1-1", b"c", 4)
    time.sleep(0.3)
    # only entries idle for 200 ms: a replay of the command as sent would claim others
    p = r.pipeline(transaction=True)
    p.execute_command("XAUTOCLAIM", "s", "g", "e", "200", "0", "COUNT", "2")
    p.execute_command("XCLAIM", "s", "g", "f", "200", "5-1")
    p.execute()
    exact = state(tc, seen=False, read=False)
    with open(os.path.join(tc.dir, "appendonlydir", "appendonly.aof.1.incr.aof"), "rb") as f:
        data = f.read().lower()
    assert b"xreadgroup" not in data and b"xautoclaim" not in data
    # the forms they propagate stand in for them: no no-op placeholder (XACK ... 0-0) is logged
    assert b"multi" in data and b"0-0" not in data
    time.sleep(0.3)
    tc.restart()
    assert state(tc, seen=False, read=False) == exact


def test_aof_watch_then_blocking_xreadgroup(tc_factory):
    """With the AOF on, a client that WATCHes a key still blocks in XREADGROUP (only EXEC
    never blocks), is served by the next XADD, and the replay rebuilds its PEL."""
    tc = tc_factory(*AOF)
    r = cl(tc)
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    out = []

    def blocked():
        c = cl(tc)
        c.execute_command("WATCH", "other")
        t0 = time.time()
        out.append(c.execute_command("XREADGROUP", "GROUP", "g", "w", "BLOCK", "5000",
                                     "STREAMS", "s", ">"))
        out.append(time.time() - t0)

    th = threading.Thread(target=blocked)
    th.start()
    time.sleep(0.4)
    r.execute_command("XADD", "s", "1-1", "a", "b")
    th.join(10)
    assert out[0] == [[b"s", [[b"1-1", [b"a", b"b"]]]]] and out[1] >= 0.3
    before = state(tc, keys=("s",), seen=False, read=False)
    tc.restart()
    assert state(tc, keys=("s",), seen=False, read=False) == before
