"""Functions on disk: RDB files with function libraries (RDB_OPCODE_FUNCTION2, before the
databases) made by twincache load in redis-server 7.0 and pass redis-check-rdb, and the
other way round; BGSAVE (a fork child) keeps them; the AOF logs FUNCTION LOAD/DELETE/FLUSH/
RESTORE and replays them, with and without a rewrite in between."""
import os
import shutil
import signal

from test_aof import AOF, last_incr, wait_rewrite
from test_rdb import check_rdb, wait_bgsave

LIB = """#!lua name=lib1
redis.register_function('incr2', function(k, a) return redis.call('INCRBY', k[1], 2) end)
redis.register_function{function_name='get1', callback=function(k) return redis.call('GET', k[1]) end,
  flags={'no-writes'}, description='reads'}
"""
LIB2 = "#!lua name=lib2\nredis.register_function('two', function() return 2 end)\n" + \
    "-- padding so the code is long enough to be compressed " + "x" * 200 + "\n"


def libs(srv):
    out = {}
    for lib in srv.client().execute_command("FUNCTION", "LIST", "WITHCODE"):
        d = dict(zip(lib[::2], lib[1::2]))
        fns = sorted((dict(zip(f[::2], f[1::2]))[b"name"]) for f in d[b"functions"])
        out[d[b"library_name"]] = (d[b"library_code"], fns)
    return out


def test_twincache_rdb_into_redis(tc_factory, redis_factory, tmp_path):
    tc = tc_factory(dir=tmp_path)
    r = tc.client()
    r.execute_command("FUNCTION", "LOAD", LIB)
    r.execute_command("FUNCTION", "LOAD", LIB2)
    r.set("k", "1")
    want = libs(tc)
    assert r.save()
    check_rdb(tc.dump)
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(tc.dump, rdir / "dump.rdb")
    rs = redis_factory(dir=rdir)
    assert libs(rs) == want
    assert rs.client().execute_command("FCALL", "incr2", 1, "k") == 3
    # twincache restarted on its own file: the functions are back
    tc.restart()
    assert libs(tc) == want
    assert tc.client().execute_command("FCALL", "incr2", 1, "k") == 3
    # BGSAVE (fork child) writes them too
    assert tc.client().bgsave()
    wait_bgsave(tc.client())
    check_rdb(tc.dump)
    tc.restart()
    assert libs(tc) == want


def test_redis_rdb_into_twincache(tc_factory, redis_factory, tmp_path):
    rdir = tmp_path / "redis"
    rdir.mkdir()
    rs = redis_factory(dir=rdir)
    r = rs.client()
    r.execute_command("FUNCTION", "LOAD", LIB)
    r.execute_command("FUNCTION", "LOAD", LIB2)  # compressed in redis's file
    r.set("k", "5")
    want = libs(rs)
    assert r.save()
    tdir = tmp_path / "tc"
    tdir.mkdir()
    shutil.copy(rdir / "dump.rdb", tdir / "dump.rdb")
    tc = tc_factory(dir=tdir)
    assert libs(tc) == want
    assert tc.client().execute_command("FCALL", "get1", 1, "k") == b"5"
    assert tc.client().execute_command("FCALL", "two", 0) == 2


def test_aof_replays_functions(tc_factory):
    tc = tc_factory(*AOF)
    r = tc.client()
    r.execute_command("FUNCTION", "LOAD", LIB)
    r.execute_command("FUNCTION", "LOAD", LIB2)
    r.execute_command("FCALL", "incr2", 1, "n")
    r.execute_command("FUNCTION", "DELETE", "lib2")
    r.execute_command("FUNCTION", "LOAD", "REPLACE", LIB)
    try:
        r.execute_command("FUNCTION", "LOAD", LIB)  # refused: not logged
    except Exception:
        pass
    data = open(last_incr(tc), "rb").read()
    assert data.count(b"$8\r\nFUNCTION\r\n") == 4, data
    want = libs(tc)
    os.kill(tc.proc.pid, signal.SIGKILL)
    tc.proc.wait()
    tc.start()
    assert libs(tc) == want
    assert tc.client().get("n") == b"2"
    # after a rewrite (the base file is an RDB: functions in it), then more changes logged
    r = tc.client()
    assert r.bgrewriteaof()
    wait_rewrite(r)
    r.execute_command("FUNCTION", "LOAD", LIB2)
    payload = r.execute_command("FUNCTION", "DUMP")
    r.execute_command("FUNCTION", "FLUSH")
    r.execute_command("FUNCTION", "RESTORE", payload)
    want = libs(tc)
    assert len(want) == 2
    os.kill(tc.proc.pid, signal.SIGKILL)
    tc.proc.wait()
    tc.start()
    assert libs(tc) == want
    # FLUSHALL leaves them; FUNCTION FLUSH is logged
    r = tc.client()
    r.flushall()
    r.execute_command("FUNCTION", "FLUSH")
    assert r.bgrewriteaof()
    wait_rewrite(r)
    os.kill(tc.proc.pid, signal.SIGKILL)
    tc.proc.wait()
    tc.start()
    assert libs(tc) == {}
