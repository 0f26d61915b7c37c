"""Bitmap writes (SETBIT, BITOP, BITFIELD) survive an AOF restart, an AOF rewrite, and
redis-server 7.0 replays twincache's AOF to the same values."""
import shutil
import time

AOF = ("--appendonly", "yes")
KEYS = ("a", "b", "int", "dst", "not", "bf", "ttl", "fail", "gone", "tx")


def workload(srv):
    r = srv.client()
    r.setbit("a", 7, 1)
    r.setbit("a", 100, 1)
    r.setbit("a", 7, 0)
    r.setbit("b", 8 * 20000, 1)  # large value
    r.set("int", 123)
    r.setbit("int", 30, 1)
    r.incr("ctr")
    r.setbit("ctr", 6, 1)
    r.execute_command("BITOP", "OR", "dst", "a", "b", "int")
    r.execute_command("BITOP", "NOT", "not", "a")
    r.execute_command("BITOP", "XOR", "a", "a", "int")
    r.execute_command("BITFIELD", "bf", "SET", "i5", "#3", -7, "INCRBY", "u63", 40, 12345678901,
                      "OVERFLOW", "SAT", "INCRBY", "i8", 0, 1000, "OVERFLOW", "FAIL",
                      "INCRBY", "u4", 100, 99)
    r.execute_command("BITFIELD", "fail", "OVERFLOW", "FAIL", "SET", "u8", 16, -1)
    r.set("ttl", "x", ex=1000)
    r.setbit("ttl", 500, 1)
    r.set("gone", "v")
    r.execute_command("BITOP", "AND", "gone", "nokey")
    p = r.pipeline(transaction=True)
    p.setbit("tx", 3, 1).execute_command("BITFIELD", "tx", "INCRBY", "u8", 8, 9)
    p.execute()
    # refused commands change nothing and log nothing
    for bad in (("SETBIT", "a", -1, 1), ("BITFIELD", "a", "SET", "u64", 0, 1),
                ("BITOP", "NOT", "a", "b", "c")):
        try:
            r.execute_command(*bad)
        except Exception:
            pass


def state(srv):
    r = srv.client()
    out = {k: r.get(k) for k in KEYS + ("ctr",)}
    out["ttl-set"] = r.ttl("ttl") > 900
    return out


def test_aof_restart(tc_factory):
    tc = tc_factory(*AOF)
    workload(tc)
    before = state(tc)
    assert before["fail"] == b"\x00\x00\x00" and before["gone"] is None
    assert before["ctr"] == b"3" and before["ttl-set"]
    time.sleep(0.3)
    tc.restart()
    assert state(tc) == before


def test_aof_rewrite(tc_factory):
    tc = tc_factory(*AOF)
    workload(tc)
    tc.client().execute_command("BGREWRITEAOF")
    deadline = time.time() + 30
    while time.time() < deadline:
        info = tc.client().info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    r = tc.client()
    r.setbit("a", 1, 1)
    r.execute_command("BITFIELD", "bf", "INCRBY", "u8", 0, 1)
    before = state(tc)
    tc.restart()
    assert state(tc) == before


def test_redis_replays_twincache_aof(tc_factory, redis_factory, tmp_path):
    tc = tc_factory(*AOF, dir=tmp_path)
    workload(tc)
    before = state(tc)
    tc.stop()
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copytree(tmp_path / "appendonlydir", rdir / "appendonlydir")
    rs = redis_factory("--appendonly", "yes", dir=rdir)
    assert state(rs) == before
