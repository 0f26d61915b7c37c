"""BGSAVE is one point in time, forked (snapshot-fork yes) or written by the snapshot thread
with copy-before-write (snapshot-fork no), while clients write: the file, checked by
redis-check-rdb and loaded into redis-server 7.0, holds exactly the data as of the start.

Every key starts at generation A; writers that begin once BGSAVE has answered move keys to
generation B (SET, HSET, INCR, DEL, new keys), so every key in the file must still be at A.
A Lua writer that runs across the start numbers its writes from a global counter (INCR seq
and SET s:<j> <n> in one script): the file's seq is the cut, and each s:<j> must hold the last
number written to it at or below the cut."""

import os
import random
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
from persist_harness import wait_bgsave  # noqa: E402

NKEYS = 200000
NSMALL = 5000  # hashes, counters, deleted and new keys
NSEQ = 1000


def check_rdb(path):
    out = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True)
    assert out.returncode == 0 and "RDB looks OK" in out.stdout, out.stdout + out.stderr
    return out.stdout


def populate(tc):
    r = tc.client()
    assert r.execute_command("DEBUG", "POPULATE", NKEYS, "k") == b"OK"
    p = r.pipeline(transaction=False)
    for i in range(NSMALL):
        p.hset("h:%d" % i, mapping={"f": "A", "g": "x" * 30})
        p.set("c:%d" % i, 100)
        p.set("d:%d" % i, "A")
        p.rpush("l:%d" % i, "A", "a")
        if i % 500 == 499:
            p.execute()
    p.set("seq", 0)
    p.execute()
    r.config_set("save", "")


SEQ_SCRIPT = "local n = redis.call('INCR', KEYS[1]) redis.call('SET', KEYS[2], n) return n"


def gen_b_writer(tc, part, nparts, go, stop, counts):
    w = tc.client()
    rnd = random.Random(part)
    keys = list(range(part, NKEYS, nparts))
    rnd.shuffle(keys)
    small = list(range(part, NSMALL, nparts))
    rnd.shuffle(small)
    go.wait()
    n = 0
    p = w.pipeline(transaction=False)
    for idx, i in enumerate(keys):
        if stop.is_set():
            break
        p.set("k:%d" % i, "B")
        if idx < len(small):
            j = small[idx]
            p.hset("h:%d" % j, "f", "B")
            p.incr("c:%d" % j)
            p.delete("d:%d" % j)
            p.set("n:%d" % j, "B")
            p.rpush("l:%d" % j, "B")
        if idx % 100 == 99:
            p.execute()
        n += 1
    p.execute()
    counts[part] = n


def seq_writer(tc, stop, log):
    w = tc.client()
    rnd = random.Random(7)
    while not stop.is_set():
        j = rnd.randrange(NSEQ)
        n = w.eval(SEQ_SCRIPT, 2, "seq", "s:%d" % j)
        log.append((j, n))


@pytest.mark.parametrize("fork", ["no", "yes"])
def test_bgsave_point_in_time(tc_factory, redis_factory, tmp_path, fork):
    tc = tc_factory("--snapshot-fork", fork, "--enable-debug-command", "yes")
    populate(tc)
    r = tc.client()
    go, stop, stop_seq = threading.Event(), threading.Event(), threading.Event()
    counts, seqlog = {}, []
    nw = 4
    ths = [threading.Thread(target=gen_b_writer, args=(tc, i, nw, go, stop, counts))
           for i in range(nw)]
    sq = threading.Thread(target=seq_writer, args=(tc, stop_seq, seqlog))
    for t in ths:
        t.start()
    sq.start()
    time.sleep(0.3)  # the Lua writer runs across the start
    try:
        assert r.bgsave()
        go.set()
        info = wait_bgsave(r)
    finally:
        go.set()
        stop.set()
        stop_seq.set()
        for t in ths + [sq]:
            t.join()
    assert info["rdb_last_bgsave_status"] == "ok"
    assert r.config_get("snapshot-fork") == {"snapshot-fork": fork}
    assert sum(counts.values()) > 0 and seqlog
    check_rdb(tc.dump)

    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(tc.dump, rdir / "dump.rdb")
    rs = redis_factory(dir=rdir).client()
    assert rs.dbsize() == NKEYS + 4 * NSMALL + 1 + len({j for j, n in seqlog
                                                       if n <= int(rs.get("seq"))})
    bad = []
    for base in range(0, NKEYS, 2000):
        names = ["k:%d" % i for i in range(base, min(NKEYS, base + 2000))]
        for k, v in zip(names, rs.mget(names)):
            if v != ("value:" + k[2:]).encode():
                bad.append((k, v))
    assert not bad, "%d keys not as of the start, e.g. %r" % (len(bad), bad[:5])
    p = rs.pipeline(transaction=False)
    for j in range(NSMALL):
        p.hget("h:%d" % j, "f")
        p.get("c:%d" % j)
        p.exists("d:%d" % j)
        p.exists("n:%d" % j)
        p.lrange("l:%d" % j, 0, -1)
    got = p.execute()
    want = [b"A", b"100", 1, 0, [b"A", b"a"]] * NSMALL
    bad = [(i // 5, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, "%d values not as of the start, e.g. %r" % (len(bad), bad[:5])

    cut = int(rs.get("seq"))
    assert 0 < cut <= max(n for _, n in seqlog)
    last = {}
    for j, n in seqlog:
        if n <= cut:
            last[j] = max(n, last.get(j, 0))
    names = ["s:%d" % j for j in range(NSEQ)]
    got = dict(zip(range(NSEQ), rs.mget(names)))
    bad = [(j, got[j], last.get(j)) for j in range(NSEQ)
           if got[j] != (str(last[j]).encode() if j in last else None)]
    assert not bad, "cut %d: sequence keys not as of it, e.g. %r" % (cut, bad[:5])


@pytest.mark.parametrize("fork", ["no", "yes"])
def test_flushall_and_shutdown_during_bgsave(tc_factory, redis_factory, tmp_path, fork):
    """FLUSHALL while a BGSAVE runs stops the save, as Redis 7.0's flushAllDataAndResetRDB
    kills its RDB child (no save rules, so no new file: none is left, nor a temporary one, and
    the stopped save is not an error), beside redis-server; a BGSAVE stopped by SHUTDOWN
    NOSAVE leaves no temporary file."""
    tc = tc_factory("--snapshot-fork", fork, "--enable-debug-command", "yes")
    r = tc.client()
    rdir = tmp_path / "redis"
    rdir.mkdir()
    rs = redis_factory("--enable-debug-command", "yes", dir=rdir).client()
    for c, d in ((r, tc.dir), (rs, rdir)):
        assert c.execute_command("DEBUG", "POPULATE", 100000, "k", 300) == b"OK"
        c.config_set("save", "")
        c.config_set("rdb-key-save-delay", 100)  # 10 s for the whole file: FLUSHALL comes first
        assert c.bgsave()
        c.flushall()
        c.set("after", "flush")
        info = wait_bgsave(c, timeout=5)
        assert info["rdb_last_bgsave_status"] == "ok"
        assert sorted(f for f in os.listdir(d) if f.endswith(".rdb")) == [], d
        c.config_set("rdb-key-save-delay", 0)
        assert c.dbsize() == 1

    assert r.execute_command("DEBUG", "POPULATE", 300000, "m") == b"OK"
    assert r.bgsave()
    try:
        r.shutdown(nosave=True)
    except Exception:
        pass  # the connection closes
    tc.stop()
    left = sorted(f for f in os.listdir(tc.dir) if f.endswith(".rdb"))
    # the save either finished before the shutdown or was stopped and cleaned up
    assert left in ([], ["dump.rdb"]), left
    if left:
        check_rdb(tc.dump)


def random_writer(tc, seed, stop, counts):
    """SET/INCR/DEL/HSET/LPUSH on random keys of the populated space until stop."""
    w = tc.client()
    rnd = random.Random(seed)
    n = 0
    while not stop.is_set():
        p = w.pipeline(transaction=False)
        for _ in range(50):
            i = rnd.randrange(100000)
            op = rnd.randrange(5)
            if op == 0:
                p.set("k:%d" % i, "w%d-%d" % (seed, n))
            elif op == 1:
                p.incr("c:%d" % (i % 2000))
            elif op == 2:
                p.delete("k:%d" % i)
            elif op == 3:
                p.hset("h:%d" % (i % 2000), "f%d" % (i % 7), n)
            else:
                p.lpush("l:%d" % (i % 500), n)
            n += 1
        p.execute()
    counts[seed] = n


def with_writers(tc, fn, nw=3):
    stop, counts = threading.Event(), {}
    ths = [threading.Thread(target=random_writer, args=(tc, s, stop, counts))
           for s in range(nw)]
    for t in ths:
        t.start()
    time.sleep(0.1)
    try:
        fn()
    finally:
        stop.set()
        for t in ths:
            t.join()
    assert sum(counts.values()) > 0


def digest(srv):
    return srv.client().execute_command("DEBUG", "DIGEST")


def busy(info):
    """A snapshot or an AOF rewrite runs or is scheduled."""
    return (info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"] or
            info["rdb_bgsave_in_progress"])


@pytest.mark.parametrize("fork", ["no", "yes"])
def test_aof_rewrite_under_writes(tc_factory, fork):
    """BGREWRITEAOF while clients write: the new base plus the incr file that starts at the
    rewrite's point in time replay to exactly the data the server had."""
    tc = tc_factory("--snapshot-fork", fork, "--enable-debug-command", "yes",
                    "--appendonly", "yes", "--appendfsync", "always")
    r = tc.client()
    assert r.execute_command("DEBUG", "POPULATE", 100000, "k") == b"OK"

    def rewrite():
        deadline = time.time() + 30
        while r.info("persistence")["aof_rewrite_in_progress"] and time.time() < deadline:
            time.sleep(0.01)  # the first rewrite (AOF turned on at start)
        r.bgsave()  # two snapshots at once
        r.bgrewriteaof()
        time.sleep(0.05)
        # as in Redis, a BGREWRITEAOF during a BGSAVE is scheduled and starts after it
        while busy(r.info("persistence")) and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # writes after the rewrite, into the new incr file

    with_writers(tc, rewrite)
    info = r.info("persistence")
    assert info["aof_last_bgrewrite_status"] == "ok"
    assert info["aof_rewrite_in_progress"] == 0
    assert info["rdb_last_bgsave_status"] == "ok" and info["rdb_saves"] == 1
    check_rdb(tc.dump)
    before, n = digest(tc), r.dbsize()
    tc.restart()
    assert tc.client().dbsize() == n
    assert digest(tc) == before


@pytest.mark.parametrize("fork", ["no", "yes"])
def test_disk_full_sync_under_writes(tc_factory, fork):
    """A disk-mode full sync while clients write: the replica ends with the primary's data."""
    tc = tc_factory("--snapshot-fork", fork, "--enable-debug-command", "yes",
                    "--repl-diskless-sync", "no", "--repl-diskless-sync-delay", "0")
    r = tc.client()
    assert r.execute_command("DEBUG", "POPULATE", 100000, "k") == b"OK"
    rep = tc_factory("--enable-debug-command", "yes", dir=tempfile.mkdtemp(prefix="rep-",
                                                                          dir=tc.dir))
    rc = rep.client()

    def sync():
        assert rc.execute_command("REPLICAOF", "127.0.0.1", tc.port) == b"OK"
        deadline = time.time() + 30
        while rc.info("replication").get("master_link_status") != "up":
            assert time.time() < deadline, "no full sync"
            time.sleep(0.01)
        time.sleep(0.2)  # writes after the copy, sent as the stream

    with_writers(tc, sync)
    deadline = time.time() + 30
    while rc.info("replication").get("slave_repl_offset") != \
            r.info("replication").get("master_repl_offset"):
        assert time.time() < deadline, "the replica did not catch up"
        time.sleep(0.02)
    assert r.info("stats")["sync_full"] == 1
    assert rc.dbsize() == r.dbsize()
    assert digest(rep) == digest(tc)


def slowed_forkless_save(tc_factory, setup, wait, *args):
    """A forkless BGSAVE of 20000 populated keys plus what setup(pipeline) writes, slowed by
    rdb-key-save-delay (~2 s), with active expiry off; returns (server, client) wait seconds
    into it."""
    tc = tc_factory("--snapshot-fork", "no", "--enable-debug-command", "yes", *args)
    r = tc.client()
    assert r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0) == b"OK"
    assert r.execute_command("DEBUG", "POPULATE", 20000, "k") == b"OK"
    p = r.pipeline(transaction=False)
    setup(p)
    p.execute()
    r.config_set("rdb-key-save-delay", 100)
    assert r.bgsave()
    time.sleep(wait)
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    return tc, r


def finish_slowed_save(tc, r):
    """Let the save run out; redis-check-rdb's report of the file."""
    r.config_set("rdb-key-save-delay", 0)
    info = wait_bgsave(r)
    assert info["rdb_last_bgsave_status"] == "ok"
    return check_rdb(tc.dump)


def test_read_of_expired_key_copies_first(tc_factory):
    """A read-only command skips copy-before-write, but not when its lookup removes a key
    that expired after the snapshot's start: the file still holds every such key (slowed by
    rdb-key-save-delay so that the reads come before the snapshot thread)."""
    def setup(p):
        for i in range(2000):
            p.set("e:%d" % i, "v", px=400)

    tc, r = slowed_forkless_save(tc_factory, setup, 0.7)
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.get("e:%d" % i)
    assert p.execute() == [None] * 2000  # expired: removed by the reads
    out = finish_slowed_save(tc, r)
    assert "[info] 22000 keys read" in out and "[info] 2000 expires" in out, out


def test_one_key_writes_keep_old_values(tc_factory, redis_factory, tmp_path):
    """While a forkless save runs, a write that names one key keeps that key's old value apart
    instead of copying its whole stripe (the verbose log counts them), and the file is still the
    start's image: SET over keys, SET over keys that expired after the start (the lookup removes
    the old one first), and MOVE to another database (the same key in two databases of one
    stripe: it copies the stripe instead)."""
    def setup(p):
        for i in range(1000):
            p.set("m:%d" % i, "A")
            p.set("e:%d" % i, "v", px=400)

    tc, r = slowed_forkless_save(tc_factory, setup, 0.6, "--loglevel", "verbose")
    p = r.pipeline(transaction=False)
    for i in range(5000):
        p.set("k:%d" % i, "B")
    for i in range(1000):
        p.set("e:%d" % i, "B")
        p.set("n:%d" % i, "B")
        p.execute_command("MOVE", "m:%d" % i, 1)
    assert all(x in (True, 1) for x in p.execute())
    out = finish_slowed_save(tc, r)
    assert "[info] 22000 keys read" in out and "[info] 1000 expires" in out, out
    kept = [int(line.split(" keys kept apart")[0].rsplit(" ", 1)[1])
            for line in tc.output().splitlines() if "keys kept apart" in line]
    assert kept and kept[-1] >= 2000, kept  # the stripes not written yet

    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(tc.dump, rdir / "dump.rdb")
    rs = redis_factory(dir=rdir).client()
    names = ["k:%d" % i for i in range(20000)]
    assert all(v is not None and v.startswith(b"value:") for v in rs.mget(names))
    assert rs.mget(["m:%d" % i for i in range(1000)]) == [b"A"] * 1000
    assert not rs.keys("n:*")
    rs.select(1)
    assert rs.dbsize() == 0
