"""The forms commands are logged in, against redis-server 7.0 running the same commands with
the AOF on: LMPOP/BLMPOP and ZMPOP/BZMPOP as LPOP/RPOP/ZPOPMIN/ZPOPMAX key <count popped>,
XADD/XTRIM with ~ as the exact trim they came to (MAXLEN = <length> / MINID = <first ID>),
XREADGROUP as XCLAIMs alone (XGROUP SETID only under NOACK); an empty stream whose last ID is
0-0 survives an AOF rewrite in RESP."""

import os
import time

from test_aof import aof_dir, last_incr, parse_resp, wait_rewrite

AOF = ("--appendonly", "yes")


def logged(srv):
    """The commands of srv's last incremental AOF file, names lowercased, without SELECT."""
    with open(last_incr(srv), "rb") as f:
        cmds = parse_resp(f.read())
    return [[c[0].lower()] + c[1:] for c in cmds if c[0].lower() != b"select"]


def workload(r):
    r.execute_command("RPUSH", "l", "a", "b", "c", "d")
    r.execute_command("LMPOP", "2", "nol", "l", "LEFT", "COUNT", "3")
    r.execute_command("LMPOP", "1", "l", "RIGHT", "COUNT", "9")  # empties it: still RPOP l 1
    r.execute_command("LMPOP", "1", "l", "RIGHT")  # nothing: nothing logged
    r.execute_command("RPUSH", "l2", "x", "y")
    r.execute_command("BLMPOP", "1", "1", "l2", "RIGHT", "COUNT", "1")
    r.execute_command("ZADD", "z", "1", "a", "2", "b", "3", "c")
    r.execute_command("ZMPOP", "1", "z", "MAX", "COUNT", "2")
    r.execute_command("BZMPOP", "1", "1", "z", "MIN", "COUNT", "5")
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "10")
    for i in range(1, 101):
        r.execute_command("XADD", "s", "%d-1" % i, "f", "v")
    r.execute_command("XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "101-1", "f", "v")
    r.execute_command("XTRIM", "s", "MAXLEN", "~", "45")
    r.execute_command("XTRIM", "s", "MINID", "~", "70-1")
    r.execute_command("XTRIM", "s", "MAXLEN", "~", "1000")  # trims nothing: not logged
    r.execute_command("XADD", "s", "MINID", "~", "90", "150", "f", "v")  # logged as 150-0
    r.execute_command("XADD", "s", "MAXLEN", "=", "20", "202-1", "f", "v")


def test_pop_and_trim_forms_match_redis(tc_factory, redis_factory, tmp_path):
    (tmp_path / "tc").mkdir()
    (tmp_path / "rs").mkdir()
    tc = tc_factory(*AOF, dir=tmp_path / "tc")
    rs = redis_factory(*AOF, dir=tmp_path / "rs")
    for srv in (tc, rs):
        workload(srv.client())
    got, want = logged(tc), logged(rs)
    assert got == want
    assert [b"rpop", b"l", b"1"] in got and [b"zpopmin", b"z", b"1"] in got
    assert [c for c in got if c[0] == b"xtrim"] == [
        [b"xtrim", b"s", b"MAXLEN", b"=", b"51"], [b"xtrim", b"s", b"MINID", b"=", b"61-1"]]


def test_xreadgroup_is_logged_as_xclaims(tc_factory):
    tc = tc_factory(*AOF)
    r = tc.client()
    for i in range(1, 4):
        r.execute_command("XADD", "s", "%d-1" % i, "f", "v")
    r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    with r.pipeline(transaction=True) as p:
        p.execute_command("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">")
        p.execute_command("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
        p.execute()
    r.execute_command("XADD", "s", "4-1", "f", "v")
    r.execute_command("XREADGROUP", "GROUP", "g", "c2", "NOACK", "STREAMS", "s", ">")
    names = [c[0] if c[0] != b"xgroup" else b"xgroup " + c[1].lower() for c in logged(tc)]
    assert names == [b"xadd"] * 3 + [b"xgroup create", b"multi"] + [b"xclaim"] * 3 + \
        [b"exec", b"xadd", b"multi", b"xgroup createconsumer", b"xgroup setid", b"exec"]


def test_empty_stream_survives_resp_rewrite(tc_factory):
    tc = tc_factory(*AOF, "--aof-use-rdb-preamble", "no")
    r = tc.client()
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    r.execute_command("XADD", "e", "5-1", "f", "v")
    r.execute_command("XDEL", "e", "5-1")
    groups = r.execute_command("XINFO", "GROUPS", "s")
    r.execute_command("BGREWRITEAOF")
    wait_rewrite(r)
    base = [f for f in os.listdir(aof_dir(tc)) if ".base." in f]
    assert base and base[0].endswith(".base.aof")
    time.sleep(0.1)
    tc.restart()
    r = tc.client()
    assert r.exists("s", "e") == 2
    assert r.execute_command("XINFO", "GROUPS", "s") == groups
    info = dict(zip(*[iter(r.execute_command("XINFO", "STREAM", "s"))] * 2))
    assert info[b"length"] == 0 and info[b"last-generated-id"] == b"0-0"
    info = dict(zip(*[iter(r.execute_command("XINFO", "STREAM", "e"))] * 2))
    assert info[b"length"] == 0 and info[b"last-generated-id"] == b"5-1"


def set_workload(r):
    r.execute_command("SET", "a", "1", "KEEPTTL")
    r.execute_command("SET", "a", "2", "GET", "XX", "get")
    r.execute_command("SET", "b", "1", "NX")
    r.execute_command("SET", "b", "1", "NX")  # not set: nothing logged
    r.execute_command("SET", "c", "1", "PXAT", "99999999999999", "GET")
    r.execute_command("INCRBYFLOAT", "f", "1.5")
    r.execute_command("EVAL", "redis.call('incrbyfloat', KEYS[1], 1)", 1, "f")


def test_set_and_incrbyfloat_forms_match_redis(tc_factory, redis_factory, tmp_path):
    """SET as it came but for its GETs (an expiry: SET key value PXAT ms), INCRBYFLOAT as SET
    key <result> KEEPTTL, in a script too."""
    (tmp_path / "tc").mkdir()
    (tmp_path / "rs").mkdir()
    tc = tc_factory(*AOF, dir=tmp_path / "tc")
    rs = redis_factory(*AOF, dir=tmp_path / "rs")
    for srv in (tc, rs):
        set_workload(srv.client())
    got = logged(tc)
    assert got == logged(rs)
    assert [b"set", b"f", b"2.5", b"KEEPTTL"] in got
