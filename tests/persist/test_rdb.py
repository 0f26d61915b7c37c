"""RDB snapshots: round trips through SAVE + restart, migration both ways with Debian's
redis-server 7.0, redis-check-rdb on every dump, BGSAVE under writes, save rules, SHUTDOWN."""

import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest
import redis

from persist_harness import make_twincache, wait_bgsave

NDB = 16


def snapshot(srv, dbs=range(NDB)):
    """Everything a client can see: {db: {key: (type, value, ttl_present)}}."""
    out = {}
    for db in dbs:
        r = srv.client(db=db)
        keys = {}
        for k in r.scan_iter(count=1000):
            t = r.type(k).decode()
            if t == "string":
                v = r.get(k)
            elif t == "list":
                v = r.lrange(k, 0, -1)
            elif t == "set":
                v = sorted(r.smembers(k))
            elif t == "hash":
                v = sorted(r.hgetall(k).items())
            elif t == "zset":
                v = r.zrange(k, 0, -1, withscores=True)
            elif t == "stream":
                v = r.xrange(k, "-", "+")
            else:
                v = None
            pttl = r.pttl(k)
            keys[k] = (t, v, pttl > 0)
        if keys:
            out[db] = keys
    return out


def populate(srv, seed=1, big=True):
    rnd = random.Random(seed)
    r = srv.client()
    p = r.pipeline(transaction=False)
    # strings: integers of every width, text, binary, empty, large (compressible and not)
    for v in [0, 1, -1, 127, -128, 128, 32767, -32768, 32768, 2**31 - 1, -2**31, 2**31,
              2**63 - 1, -2**63]:
        p.set("int:%d" % v, v)
    p.set("notint:007", "007")
    p.set("notint:plus", "+5")
    p.set("notint:space", " 5")
    p.set("empty", "")
    p.set(b"bin\x00key\xff", bytes(range(256)))
    p.set("text", "hello world")
    p.set("long:" + "k" * 1000, "long key")
    p.rpush("long:list:" + "k" * 300, "a")
    p.set("huge", "".join(chr(97 + rnd.randrange(26)) for _ in range(200000)))
    p.set("compressible", "abc" * 10000)
    p.set("random", bytes(rnd.getrandbits(8) for _ in range(3000)))
    p.set("ttl:str", "v", px=3600 * 1000)
    # lists
    p.rpush("list:small", "a", "b", 1, 2, -3, "x" * 100)
    if big:
        p.rpush("list:big", *["elem-%d" % i for i in range(3000)])
        p.rpush("list:bigvals", *[("v%d" % i) * 500 for i in range(20)])
    # sets: intset, listpack-ish, hashtable
    p.sadd("set:int", 1, 2, 3, -5, 2**40)
    p.sadd("set:str", "a", "b", "c")
    if big:
        p.sadd("set:bigint", *range(1000))
        p.sadd("set:big", *["m%d" % i for i in range(500)])
    # hashes
    p.hset("hash:small", mapping={"f1": "v1", "f2": 2, "3": "three"})
    if big:
        p.hset("hash:big", mapping={"f%d" % i: "v%d" % i for i in range(300)})
        p.hset("hash:longval", mapping={"f": "x" * 1000})
    # sorted sets
    p.zadd("zset:small", {"a": 1, "b": 2.5, "c": -3, "d": 1e300, "e": 0})
    p.zadd("zset:inf", {"lo": float("-inf"), "hi": float("inf")})
    if big:
        p.zadd("zset:big", {"m%d" % i: i * 1.5 for i in range(400)})
    p.expire("zset:small", 5000)
    p.execute()
    # streams
    for i in range(250):
        r.xadd("stream", {"f": i, "g": "val%d" % i}, id="%d-%d" % (1000 + i // 3, i % 3))
    r.xdel("stream", "1000-1")
    r.xadd("stream:single", {"field": "value"}, id="5-5")
    # other databases
    for db in (1, 7, 15):
        rd = srv.client(db=db)
        rd.set("k:db%d" % db, "v%d" % db)
        rd.rpush("l:db%d" % db, "a", "b")
        rd.set("ttl:db%d" % db, "x", ex=10000)


def check_rdb(path):
    out = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True)
    assert out.returncode == 0 and "RDB looks OK" in out.stdout, out.stdout + out.stderr
    return out.stdout


def test_roundtrip_every_type(tc_factory):
    tc = tc_factory()
    populate(tc)
    before = snapshot(tc)
    assert tc.client().save()
    check_rdb(tc.dump)
    tc.restart()
    after = snapshot(tc)
    assert after == before
    r = tc.client()
    assert 3599000 < r.pttl("ttl:str") <= 3600000
    assert r.object("encoding", "set:int") == b"intset"
    assert r.get("int:%d" % (2**63 - 1)) == b"9223372036854775807"


@pytest.mark.parametrize("compression,checksum", [("no", "yes"), ("yes", "no"), ("no", "no")])
def test_roundtrip_options(tc_factory, compression, checksum):
    tc = tc_factory("--rdbcompression", compression, "--rdbchecksum", checksum)
    populate(tc, big=False)
    tc.client().set("compressible", "abc" * 10000)
    before = snapshot(tc)
    tc.client().save()
    data = open(tc.dump, "rb").read()
    if checksum == "no":
        assert data[-8:] == b"\0" * 8
    if compression == "no":
        assert len(data) > 30000  # the compressible string stored plain
    check_rdb(tc.dump)
    tc.restart()
    assert snapshot(tc) == before


def test_redis_loads_twincache_dump(tc_factory, redis_factory, tmp_path):
    tc = tc_factory(dir=tmp_path)
    populate(tc)
    before = snapshot(tc)
    tc.client().save()
    check_rdb(tc.dump)
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(tc.dump, rdir / "dump.rdb")
    rs = redis_factory(dir=rdir)
    assert snapshot(rs) == before
    assert "keys loaded" in rs.output() or "DB loaded from disk" in rs.output()


def test_twincache_loads_redis_dump(tc_factory, redis_factory, tmp_path):
    rdir = tmp_path / "redis"
    rdir.mkdir()
    rs = redis_factory(dir=rdir)
    populate(rs)
    r = rs.client()
    r.xgroup_create("stream", "grp", id="0")  # groups are dropped with a warning
    before = snapshot(rs)
    assert r.save()
    info = r.object("encoding", "list:small"), r.object("encoding", "hash:small"), \
        r.object("encoding", "zset:small"), r.object("encoding", "set:int")
    assert info == (b"listpack" if False else info[0], b"listpack", b"listpack", b"intset")
    tdir = tmp_path / "tc"
    tdir.mkdir()
    shutil.copy(rdir / "dump.rdb", tdir / "dump.rdb")
    tc = tc_factory(dir=tdir)
    assert snapshot(tc) == before
    assert "Done loading RDB" in tc.output()
    # and back: twincache's dump of it loads in redis-server again
    tc.client().save()
    check_rdb(tc.dump)


def test_redis_dump_with_compression_off(tc_factory, redis_factory, tmp_path):
    rdir = tmp_path / "redis"
    rdir.mkdir()
    rs = redis_factory("--rdbcompression", "no", "--rdbchecksum", "no", dir=rdir)
    populate(rs, seed=3, big=False)
    before = snapshot(rs)
    rs.client().save()
    tdir = tmp_path / "tc"
    tdir.mkdir()
    shutil.copy(rdir / "dump.rdb", tdir / "dump.rdb")
    tc = tc_factory(dir=tdir)
    assert snapshot(tc) == before


def mc_cmd(port, data):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    buf = b""
    while not (buf.endswith(b"END\r\n") or buf.endswith(b"STORED\r\n")):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    return buf


def test_memcached_flags_and_cas_survive(tc_factory):
    tc = tc_factory()
    assert mc_cmd(tc.mc_port, b"set a 42 0 3\r\nabc\r\n") == b"STORED\r\n"
    assert mc_cmd(tc.mc_port, b"set b 0 0 2\r\nxy\r\n") == b"STORED\r\n"
    assert mc_cmd(tc.mc_port, b"set c 4294967295 0 1\r\nz\r\n") == b"STORED\r\n"
    before = mc_cmd(tc.mc_port, b"gets a b c\r\n")
    tc.client().set("redis-set", "v")
    tc.client().save()
    check_rdb(tc.dump)
    tc.restart()
    after = mc_cmd(tc.mc_port, b"gets a b c\r\n")
    assert after == before
    # a new store gets a CAS different from every restored one
    assert mc_cmd(tc.mc_port, b"set d 1 0 1\r\nq\r\n") == b"STORED\r\n"
    cas_d = mc_cmd(tc.mc_port, b"gets d\r\n").split(b"\r\n")[0].split()[-1]
    old = [line.split()[-1] for line in before.split(b"\r\n") if line.startswith(b"VALUE")]
    assert cas_d not in old
    assert tc.client().get("redis-set") == b"v"


def test_expired_keys_are_not_loaded(tc_factory):
    tc = tc_factory()
    r = tc.client()
    r.set("short", "x", px=300)
    r.set("long", "y", ex=1000)
    r.save()
    time.sleep(0.5)
    tc.restart()
    r = tc.client()
    assert r.get("short") is None
    assert r.get("long") == b"y"
    assert "rdb_last_load_keys_loaded" in r.info("persistence")


def test_info_persistence_and_lastsave(tc_factory):
    tc = tc_factory()
    r = tc.client()
    info = r.info("persistence")
    for f in ("rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
              "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec", "aof_enabled",
              "aof_rewrite_in_progress", "aof_last_write_status", "rdb_saves",
              "rdb_last_cow_size", "loading"):
        assert f in info, f
    r.set("a", 1)
    r.set("b", 2)
    assert r.info("persistence")["rdb_changes_since_last_save"] == 2
    t0 = r.lastsave()
    r.save()
    assert r.lastsave() >= t0
    assert abs(r.lastsave().timestamp() - r.time()[0]) < 5
    info = r.info("persistence")
    assert info["rdb_changes_since_last_save"] == 0
    assert info["rdb_saves"] == 1
    assert r.config_get("rdbcompression") == {"rdbcompression": "yes"}
    assert r.config_get("rdbchecksum") == {"rdbchecksum": "yes"}


def test_bgsave_while_writing(tc_factory):
    tc = tc_factory()
    r = tc.client()
    p = r.pipeline(transaction=False)
    for i in range(50000):
        p.set("pre:%d" % i, "v" * 50)
        if i % 1000 == 999:
            p.execute()
    p.execute()
    stop = threading.Event()
    written = []

    def writer():
        w = tc.client()
        i = 0
        while not stop.is_set():
            w.set("live:%d" % i, i)
            written.append(i)
            i += 1

    th = threading.Thread(target=writer)
    th.start()
    time.sleep(0.2)
    assert r.bgsave()
    info = wait_bgsave(r)
    time.sleep(0.2)
    stop.set()
    th.join()
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_saves"] == 1
    check_rdb(tc.dump)
    # BGSAVE while one runs: error, or scheduled
    r.bgsave()
    try:
        r.bgsave()
    except Exception as e:
        assert "already in progress" in str(e)
    wait_bgsave(r)
    n = r.dbsize()
    r.save()
    tc.restart()
    assert tc.client().dbsize() == n
    assert tc.client().get("live:%d" % written[-1]) == str(written[-1]).encode()


def test_bgsave_schedule(tc_factory):
    tc = tc_factory()
    r = tc.client()
    r.set("x", "y")
    assert r.execute_command("BGSAVE", "SCHEDULE") in (b"Background saving started",
                                                        b"Background saving scheduled", True)
    wait_bgsave(r)
    check_rdb(tc.dump)


def test_save_rules(tc_factory):
    tc = tc_factory("--save", "1 2")
    r = tc.client()
    r.set("a", 1)
    time.sleep(1.5)
    assert not os.path.exists(tc.dump)  # one change < 2
    r.set("b", 2)
    deadline = time.time() + 10
    while time.time() < deadline and not os.path.exists(tc.dump):
        time.sleep(0.1)
    assert os.path.exists(tc.dump)
    wait_bgsave(r)
    assert r.info("persistence")["rdb_changes_since_last_save"] == 0
    tc.stop(signal.SIGKILL)
    tc.start()
    assert tc.client().get("b") == b"2"


def test_shutdown_saves_when_rules_exist(tc_factory):
    tc = tc_factory("--save", "3600 1")
    tc.client().set("k", "v")
    assert tc.stop() == 0  # SIGTERM: final save
    assert os.path.exists(tc.dump)
    tc.start()
    assert tc.client().get("k") == b"v"


def test_shutdown_save_nosave(tc_factory):
    tc = tc_factory()
    r = tc.client()
    r.set("k", "v")
    try:
        r.shutdown(nosave=True)
    except Exception:
        pass
    tc.proc.wait(30)
    assert not os.path.exists(tc.dump)  # no rules, NOSAVE
    tc.start()
    r = tc.client()
    r.set("k2", "v2")
    try:
        r.shutdown(save=True)
    except Exception:
        pass
    tc.proc.wait(30)
    assert os.path.exists(tc.dump)
    tc.start()
    assert tc.client().get("k2") == b"v2"


def test_corrupt_dump_refused(tmp_path):
    tc = make_twincache(str(tmp_path))
    tc.start()
    populate(tc, big=False)
    tc.client().save()
    tc.stop()
    data = bytearray(open(tc.dump, "rb").read())
    data[len(data) // 2] ^= 0xff
    open(tc.dump, "wb").write(bytes(data))
    with pytest.raises(RuntimeError):
        tc.start()
    assert "checksum" in tc.output().lower()


def test_failed_bgsave_sets_misconf(tc_factory, tmp_path):
    tc = tc_factory("--save", "3600 1000000", "--enable-protected-configs", "yes")
    r = tc.client()
    r.set("a", 1)
    # as Redis, CONFIG SET dir is a chdir and refuses a directory that does not exist: the
    # directory goes after it was set
    gone = tmp_path / "gone"
    gone.mkdir()
    r.config_set("dir", str(gone))
    gone.rmdir()
    try:
        r.bgsave()
    except Exception:
        pass
    info = wait_bgsave(r)
    assert info["rdb_last_bgsave_status"] == "err"
    with pytest.raises(Exception) as e:
        r.set("b", 2)
    assert "MISCONF" in str(e.value)
    r.config_set("dir", str(tmp_path))
    assert r.save()
    r.set("b", 2)


def test_client_closed_during_bgsave_sees_eof(tc_factory):
    """The child keeps no copy of client sockets: a QUIT during BGSAVE closes at once."""
    tc = tc_factory()
    r = tc.client()
    p = r.pipeline(transaction=False)
    for i in range(300000):
        p.set("k:%d" % i, "x" * 100)
        if i % 5000 == 4999:
            p.execute()
    p.execute()
    s = socket.create_connection(("127.0.0.1", tc.port))
    s.sendall(b"PING\r\n")
    assert s.recv(100) == b"+PONG\r\n"
    r.bgsave()
    s.settimeout(5)
    t0 = time.time()
    in_progress = r.info("persistence")["rdb_bgsave_in_progress"]
    s.sendall(b"QUIT\r\n")
    data = b""
    while True:
        chunk = s.recv(100)
        if not chunk:
            break
        data += chunk
    elapsed = time.time() - t0
    still = r.info("persistence")["rdb_bgsave_in_progress"]
    wait_bgsave(r)
    assert data == b"+OK\r\n"
    if in_progress and still:
        assert elapsed < 1.0


def child_pids(pid):
    """Children of every thread of pid (the fork happens on a worker thread)."""
    kids = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def test_killed_bgsave_child(tc_factory):
    """A BGSAVE child killed mid-save: status err, temp file removed, the old dump intact,
    and the next save works."""
    tc = tc_factory()
    r = tc.client()
    r.set("first", "1")
    r.save()
    good = open(tc.dump, "rb").read()
    p = r.pipeline(transaction=False)
    for i in range(400000):
        p.set("k:%d" % i, "x" * 100)
        if i % 5000 == 4999:
            p.execute()
    p.execute()
    r.bgsave()
    kids = []
    deadline = time.time() + 5
    while not kids and time.time() < deadline:
        kids = child_pids(tc.proc.pid)
    if not kids or not r.info("persistence")["rdb_bgsave_in_progress"]:
        wait_bgsave(r)
        pytest.skip("the save finished before it could be killed")
    os.kill(kids[0], signal.SIGKILL)
    info = wait_bgsave(r)
    assert info["rdb_last_bgsave_status"] == "err"
    assert not [f for f in os.listdir(tc.dir) if f.startswith("temp-")]
    assert open(tc.dump, "rb").read() == good
    assert r.save()
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
    check_rdb(tc.dump)


def test_sigterm_during_bgsave(tc_factory):
    """SIGTERM while a child saves: the child is stopped and the final save (save rules set)
    has everything."""
    tc = tc_factory("--save", "3600 1000000000")
    r = tc.client()
    p = r.pipeline(transaction=False)
    for i in range(200000):
        p.set("k:%d" % i, "x" * 100)
        if i % 5000 == 4999:
            p.execute()
    p.execute()
    r.bgsave()
    r.set("last", "write")
    assert tc.stop() == 0
    assert not [f for f in os.listdir(tc.dir) if f.startswith("temp-")]
    tc.start()
    r = tc.client()
    assert r.dbsize() == 200001
    assert r.get("last") == b"write"


def test_save_refused_and_bgsave_inside_multi(tc_factory):
    """As Redis 7.0: SAVE is a no-multi command (refused while queuing, EXEC then aborts);
    BGSAVE runs inside a transaction."""
    tc = tc_factory()
    r = tc.client()
    conn = r.connection_pool.get_connection("MULTI")
    try:
        conn.send_command("MULTI")
        assert conn.read_response() in (True, b"OK")
        conn.send_command("SET", "a", "0")
        conn.read_response()
        conn.send_command("SAVE")
        with pytest.raises(redis.ResponseError) as e:
            conn.read_response()
        assert "Command not allowed inside a transaction" in str(e.value)
        conn.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError):  # -EXECABORT
            conn.read_response()
    finally:
        r.connection_pool.release(conn)
    assert r.get("a") is None
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.set("b", "2")
    p.execute_command("BGSAVE")
    res = p.execute(raise_on_error=False)
    assert res[0] is True and res[1] is True
    assert res[2] in (True, b"Background saving started")  # redis-py maps the status to True
    wait_bgsave(r)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
    tc.restart()
    assert tc.client().mget("a", "b") == [b"1", b"2"]


def test_flushall_saves_when_rules_exist(tc_factory):
    """As Redis: FLUSHALL with save rules saves the empty dataset, so a crash right after it
    cannot bring the keys back."""
    tc = tc_factory("--save", "3600 1000000")
    r = tc.client()
    r.set("a", "1")
    r.save()
    r.flushall()
    tc.stop(signal.SIGKILL)
    tc.start()
    assert tc.client().dbsize() == 0
