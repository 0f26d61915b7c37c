"""Loading the AOF as Redis 7.0 loads it, and what the AOF sees at run time: differential
against redis-server where both start (the same files in each one's directory), the exact
log lines and exit status where start-up must fail; blocking commands with the AOF on,
DEBUG LOADAOF, FLUSHALL stopping a BGSAVE, corrupt RESTORE payloads refused."""

import os
import shutil
import subprocess
import threading
import time

import pytest
import redis

from persist_harness import free_port, twincache_bin


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def write_aof(d, incr=b"", manifest=None, base=None):
    """An AOF directory in d: the incr file seq 1 (and a base), with its manifest."""
    ad = os.path.join(d, "appendonlydir")
    os.makedirs(ad, exist_ok=True)
    lines = ""
    if base is not None:
        with open(os.path.join(ad, "appendonly.aof.1.base.aof"), "wb") as f:
            f.write(base)
        lines += "file appendonly.aof.1.base.aof seq 1 type b\n"
    with open(os.path.join(ad, "appendonly.aof.1.incr.aof"), "wb") as f:
        f.write(incr)
    lines += "file appendonly.aof.1.incr.aof seq 1 type i\n"
    with open(os.path.join(ad, "appendonly.aof.manifest"), "w") as f:
        f.write(lines if manifest is None else manifest)


def start_fails(binary, d):
    """Start binary with appendonly yes in d: (exit status, output) of a start-up that must
    end by itself (a server that keeps running fails the test)."""
    port = free_port()
    extra = ["--memcache-port", "0"] if binary == twincache_bin() else []
    p = subprocess.run([binary, "--port", str(port), "--dir", d, "--appendonly", "yes",
                        "--save", ""] + extra,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def both(tmp_path, make):
    """Run make(dir) for a twincache directory and a redis-server one."""
    dirs = []
    for name in ("tc", "redis"):
        d = str(tmp_path / name)
        os.makedirs(d)
        make(d)
        dirs.append(d)
    return dirs


def started(tc_factory, redis_factory, dirs, *args):
    tc = tc_factory("--appendonly", "yes", *args, dir=dirs[0]).client()
    rs = redis_factory("--appendonly", "yes", *args, dir=dirs[1]).client()
    return tc, rs


def test_expired_key_is_not_expired_while_loading(tc_factory, redis_factory, tmp_path):
    # PEXPIREAT in the past, then RPUSH: Redis keeps one list (with both elements) while
    # loading and it expires afterwards; expiring it at once made a new list of one
    dirs = both(tmp_path, lambda d: write_aof(d, resp("rpush", "list", "foo") +
                                               resp("pexpireat", "list", "1000") +
                                               resp("rpush", "list", "bar")))
    tc, rs = started(tc_factory, redis_factory, dirs)
    assert tc.llen("list") == rs.llen("list") == 0
    assert tc.dbsize() == rs.dbsize() == 0


def test_annotations_and_old_style_aof(tc_factory, redis_factory, tmp_path):
    def make(d):
        with open(os.path.join(d, "appendonly.aof"), "wb") as f:
            f.write(b"#TS:1628217470\r\n" + resp("set", "k1", "v1") + b"#TS:1628217471\r\n" +
                    resp("set", "k2", "v2"))
    dirs = both(tmp_path, make)
    tc, rs = started(tc_factory, redis_factory, dirs)
    assert tc.mget("k1", "k2") == rs.mget("k1", "k2") == [b"v1", b"v2"]
    for d in dirs:  # migrated into the directory, the manifest naming it as the base
        assert not os.path.exists(os.path.join(d, "appendonly.aof"))
        with open(os.path.join(d, "appendonlydir", "appendonly.aof.manifest")) as f:
            assert f.readline().split()[:2] == ["file", "appendonly.aof"]


@pytest.mark.parametrize("manifest,why", [
    ("file appendonly.aof.1.incr.aof seq 1 type i\n\n", "Invalid AOF manifest file format"),
    ("filx appendonly.aof.1.incr.aof seq 1 type i\n", "Invalid AOF manifest file format"),
    ("file appendonly.aof.1.incr.aof type i\n", "Invalid AOF manifest file format"),
    ("file appendonly.aof.1.incr.aof seq 1 type i x\n", "Invalid AOF manifest file format"),
    ("file appendonly.aof.1.incr.aof seq 1 type x\n", "Unknown AOF file type"),
    ("", "Found an empty AOF manifest"),
    ("file appendonly.aof.1.incr.aof seq 2 type i\nfile a seq 1 type i\n",
     "Found a non-monotonic sequence number"),
    ("file appendonly.aof.9.incr.aof seq 9 type i\n", "appendonly.aof.9.incr.aof length"),
])
def test_bad_manifest_stops_start_up(tmp_path, manifest, why):
    for binary in (twincache_bin(), shutil.which("redis-server")):
        if not binary:
            continue
        d = str(tmp_path / os.path.basename(binary))
        write_aof(d, resp("set", "k", "v"), manifest=manifest)
        rc, out = start_fails(binary, d)
        assert rc == 1 and why in out, (binary, out[-2000:])


def test_bad_format_last_log_line(tmp_path):
    write_aof(str(tmp_path), resp("set", "foo", "hello") + b"!!!" + resp("set", "a", "b"))
    rc, out = start_fails(twincache_bin(), str(tmp_path))
    assert rc == 1
    assert "Bad file format reading the append only file" in out.strip().splitlines()[-1]


def test_blocking_pop_with_aof_on_is_served_and_logged(tc_factory, tmp_path):
    srv = tc_factory("--appendonly", "yes")
    r = srv.client()
    got = []
    t = threading.Thread(target=lambda: got.append(srv.client().blpop("q", 5)))
    t.start()
    time.sleep(0.3)
    r.rpush("q", "a", "b")
    t.join(10)
    assert got == [(b"q", b"a")]  # answered nil at once before
    srv.restart()
    assert srv.client().lrange("q", 0, -1) == [b"b"]


def test_debug_loadaof(tc_factory, tmp_path):
    srv = tc_factory("--appendonly", "yes", "--enable-debug-command", "yes")
    r = srv.client()
    r.set("a", "1")
    r.rpush("l", "x", "y")
    r.execute_command("DEBUG", "LOADAOF")
    assert r.get("a") == b"1" and r.lrange("l", 0, -1) == [b"x", b"y"]
    r.set("b", "2")  # the replayed commands were not logged again
    srv.restart()
    assert srv.client().mget("a", "b") == [b"1", b"2"]
    assert srv.client().llen("l") == 2


def test_flushall_stops_bgsave(tc_factory, tmp_path):
    r = tc_factory("--enable-debug-command", "yes").client()
    r.execute_command("DEBUG", "POPULATE", "2000")
    r.config_set("rdb-key-save-delay", "1000")
    r.bgsave()
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    r.flushall()
    deadline = time.time() + 2
    while r.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline:
        time.sleep(0.05)
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 0
    r.config_set("rdb-key-save-delay", "0")


CORRUPT_STREAM = (  # Redis's "stream bad lp_count" payload: an entry's lp-count is wrong
    b"\x0F\x01\x10\x00\x00\x01\x73\xDE\xDF\x7D\x9B\x00\x00\x00\x00\x00\x00\x00\x00\x40\x42\x42"
    b"\x00\x00\x00\x18\x00\x03\x01\x00\x01\x02\x01\x84\x69\x74\x65\x6D\x05\x85\x76\x61\x6C\x75"
    b"\x65\x06\x00\x01\x02\x01\x00\x01\x00\x01\x01\x01\x00\x01\x56\x01\x02\x01\x22\x01\x00\x01"
    b"\x01\x01\x82\x5F\x31\x03\x05\x01\x02\x01\x2C\x01\x00\x01\x01\x01\x02\x01\x05\x01\xFF\x03"
    b"\x81\x00\x00\x01\x73\xDE\xDF\x7D\xC7\x00\x01\x07\x6D\x79\x67\x72\x6F\x75\x70\x81\x00\x00"
    b"\x01\x73\xDE\xDF\x7D\x9B\x00\x01\x00\x00\x01\x73\xDE\xDF\x7D\x9B\x00\x00\x00\x00\x00\x00"
    b"\x00\x00\xF9\x7D\xDF\xDE\x73\x01\x00\x00\x01\x01\x05\x41\x6C\x69\x63\x65\xEB\x7D\xDF\xDE"
    b"\x73\x01\x00\x00\x01\x00\x00\x01\x73\xDE\xDF\x7D\x9B\x00\x00\x00\x00\x00\x00\x00\x00\x09"
    b"\x00\xB2\xA8\xA7\x5F\x1B\x61\x72\xD5")
EMPTY_QUICKLIST_NODE = b"\x12\x01\x01\x00\x0a\x00\x8f\xc6\xc0\x57\x1c\x0a\xb3\x3c"


def test_corrupt_restore_payloads_refused(tc_factory, redis_factory, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    tc = tc_factory("--enable-debug-command", "yes", dir=str(a)).client()
    rs = redis_factory("--enable-debug-command", "yes", dir=str(b)).client()
    for r in (tc, rs):
        r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
        r.config_set("sanitize-dump-payload", "yes")
        for key, payload in (("_stream", CORRUPT_STREAM), ("_list", EMPTY_QUICKLIST_NODE)):
            with pytest.raises(redis.ResponseError, match="Bad data format"):
                r.restore(key, 0, payload, replace=True)
        assert r.ping()


def test_resp_base_round_trip(tc_factory, tmp_path):
    # aof-use-rdb-preamble no: the rewrite writes appendonly.aof.<n>.base.aof in RESP (it was
    # always an RDB); every type, TTLs, stream groups and memcached items come back
    srv = tc_factory("--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                     "--aof-timestamp-enabled", "yes", "--enable-debug-command", "yes")
    r = srv.client()
    r.set("s", "v")
    r.set("e", "v", px=100000)
    r.rpush("l", *range(200))
    r.sadd("st", *range(100), "a")
    r.hset("h", mapping={str(i): i for i in range(140)})
    r.zadd("z", {"a": 1.5, "b": 2, "c": -3.25})
    r.xadd("x", {"a": 1}, id="1-1")
    r.xadd("x", {"b": 2, "c": 3}, id="2-1")
    r.xgroup_create("x", "g", id="0")
    r.xreadgroup("g", "alice", {"x": ">"}, count=1)
    r.execute_command("XADD", "x2", "MAXLEN", "0", "5-5", "q", "w")  # an empty stream
    before = [r.execute_command("DEBUG", "DIGEST-VALUE", k)
              for k in ("s", "l", "st", "h", "z", "x2")]
    r.bgrewriteaof()
    deadline = time.time() + 20
    while time.time() < deadline:
        i = r.info("persistence")
        if not i["aof_rewrite_in_progress"] and not i["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    ad = os.path.join(srv.dir, "appendonlydir")
    bases = [f for f in os.listdir(ad) if ".base." in f]
    assert bases == ["appendonly.aof.2.base.aof"], bases
    with open(os.path.join(ad, bases[0]), "rb") as f:
        assert f.read(4) == b"#TS:"
    srv.restart()
    r = srv.client()
    after = [r.execute_command("DEBUG", "DIGEST-VALUE", k)
             for k in ("s", "l", "st", "h", "z", "x2")]
    assert after == before
    assert 0 < r.pttl("e") <= 100000
    assert r.xpending("x", "g")["pending"] == 1
    assert r.xinfo_stream("x2")["last-generated-id"] == b"5-5"


def test_debug_loadaof_replays_transactions(tc_factory):
    """DEBUG LOADAOF holds every stripe while it replays: a MULTI/EXEC block in the AOF (two
    writes of a transaction, XREADGROUP's XCLAIM+SETID) runs under that hold instead of
    waiting for its own stripes forever (the server hung)."""
    tc = tc_factory("--appendonly", "yes", "--enable-debug-command", "yes")
    r = tc.client()
    r.xgroup_create("s", "g", "$", mkstream=True)
    r.xadd("s", {"f": "v"})
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "NOACK", "STREAMS", "s", ">")
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.set("b", "2")
    p.execute()
    before = (r.xinfo_groups("s"), r.mget("a", "b"))
    r2 = tc.client(socket_timeout=10)
    assert r2.execute_command("DEBUG", "LOADAOF") in (b"OK", "OK", True)
    assert (r2.xinfo_groups("s"), r2.mget("a", "b")) == before


def test_debug_loadaof_functions(tc_factory, redis_factory, tmp_path):
    """DEBUG LOADAOF empties the functions with the keys before replaying (Redis's
    emptyData(-1, EMPTYDB_NO_FLAGS)): a FUNCTION LOAD in the AOF loads again, a FUNCTION DELETE
    or FLUSH leaves none, and no replayed command fails (with propagation-error-behavior panic,
    as Redis's test suite runs, a failing one stops the server). Beside redis-server."""
    code = "#!lua name=test\nredis.register_function('test', function() return 'hello' end)"
    args = ("--appendonly", "yes", "--enable-debug-command", "yes",
            "--propagation-error-behavior", "panic")
    lists = []
    for factory, name in ((tc_factory, "tc"), (redis_factory, "redis")):
        d = str(tmp_path / name)
        os.makedirs(d)
        r = factory(*args, dir=d).client()
        seen = []
        r.execute_command("FUNCTION", "LOAD", code)
        r.execute_command("DEBUG", "LOADAOF")
        seen.append(r.execute_command("FCALL", "test", 0))
        seen.append(len(r.execute_command("FUNCTION", "LIST")))
        r.execute_command("FUNCTION", "DELETE", "test")
        r.execute_command("DEBUG", "LOADAOF")
        seen.append(len(r.execute_command("FUNCTION", "LIST")))
        r.execute_command("FUNCTION", "LOAD", code)
        r.execute_command("FUNCTION", "FLUSH")
        r.execute_command("DEBUG", "LOADAOF")
        seen.append(len(r.execute_command("FUNCTION", "LIST")))
        seen.append(r.execute_command("INFO", "errorstats").get("errorstat_ERR"))
        lists.append(seen)
    assert lists[0] == lists[1] == [b"hello", 1, 0, 0, None]
