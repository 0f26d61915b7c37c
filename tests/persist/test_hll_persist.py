"""HyperLogLogs survive restarts: the AOF replays PFADD/PFMERGE to the same registers, an
AOF rewrite and an RDB snapshot keep the exact HYLL bytes (cached cardinality included)."""
import random
import signal
import time

AOF = ("--appendonly", "yes")


def kill9_restart(srv):
    """Restart without a shutdown save (only the AOF brings the data back). SIGKILL also keeps
    the AOF's per-thread buffers out of LeakSanitizer's exit report."""
    srv.stop(sig=signal.SIGKILL)
    srv.start()


def hlls(r, keys):
    return {k: r.get(k) for k in keys}


def regs(v):
    """An HYLL value without its cached-cardinality bytes."""
    return v[:8] + v[16:]


def fill(r):
    rng = random.Random(9)
    r.execute_command("PFADD", "empty")
    r.execute_command("PFADD", "small", *["s%d" % rng.randrange(1 << 30) for _ in range(50)])
    for i in range(10):  # crosses the sparse -> dense promotion
        r.execute_command("PFADD", "big", *["b%d" % rng.randrange(1 << 30) for _ in range(400)])
    r.execute_command("PFMERGE", "merged", "small", "big", "missing")
    r.execute_command("PFMERGE", "msparse", "small", "empty")
    r.execute_command("PFCOUNT", "small")  # caches, in place
    r.execute_command("PFADD", "small", "late")
    return ["empty", "small", "big", "merged", "msparse"]


def test_aof_replay_and_rewrite(tc_factory):
    srv = tc_factory(*AOF)
    r = srv.client()
    keys = fill(r)
    before = hlls(r, keys)
    counts = {k: r.execute_command("PFCOUNT", k) for k in keys}
    assert before["big"][4] == 0 and before["small"][4] == 1
    kill9_restart(srv)
    r = srv.client()
    after = hlls(r, keys)
    # PFCOUNT's cache write is not logged: after the replay only the cache may differ
    assert {k: regs(v) for k, v in after.items()} == {k: regs(v) for k, v in before.items()}
    assert {k: r.execute_command("PFCOUNT", k) for k in keys} == counts
    # a rewrite logs the values as they are: exact bytes
    now = hlls(r, keys)
    r.execute_command("BGREWRITEAOF")
    for _ in range(200):
        i = r.info("persistence")
        if not i["aof_rewrite_in_progress"] and not i["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    kill9_restart(srv)
    assert hlls(srv.client(), keys) == now


def test_rdb_keeps_bytes(tc_factory):
    srv = tc_factory()
    r = srv.client()
    keys = fill(r)
    before = hlls(r, keys)
    r.save()
    srv.restart()
    assert hlls(srv.client(), keys) == before
