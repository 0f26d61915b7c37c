"""RDB files of Redis 6 and older (RDB versions 6 to 9), built byte by byte from the RDB format
(Debian ships only redis-server 7.0, which writes none of these encodings): ziplist lists
(every integer encoding of Redis's ziplist writer at its bounds, 5-byte prevlens),
quicklists of ziplists, zipmap and ziplist hashes, intsets, ziplist and text-double sorted
sets, seconds expiry, streams of the first listpack layout with a consumer group. Each file
passes redis-check-rdb, and twincache must load what redis-server 7.0 loads from it."""

import os
import shutil
import struct
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from persist_harness import make_twincache  # noqa: E402
from rdbgen import crc64, intset, listpack, rlen, rstr, ziplist, zipmap  # noqa: E402
from test_rdb import check_rdb, snapshot  # noqa: E402


def aux(k, v):
    return b"\xfa" + rstr(k) + rstr(v)


def key(t, name, value, exp_ms=None, exp_s=None):
    out = b""
    if exp_ms is not None:
        out += b"\xfc" + struct.pack("<q", exp_ms)
    if exp_s is not None:
        out += b"\xfd" + struct.pack("<I", exp_s)
    return out + bytes([t]) + rstr(name) + value


def raw_id(ms, seq):
    return struct.pack(">QQ", ms, seq)


def stream_v1(delivery_ms):
    """RDB_TYPE_STREAM_LISTPACKS (Redis 5 to 6.2): one node, two entries, one group."""
    node = listpack([
        2, 0,                   # live entries, deleted
        1, b"f", 0,             # master fields: f; terminator
        2, 0, 0, b"v1", 4,      # 5-1 SAMEFIELDS: v1; lp-count
        0, 0, 1, 2, b"a", b"1", b"b", b"2", 8,  # 5-2 with its own fields
    ])
    v = rlen(1) + rstr(raw_id(5, 1)) + rstr(node)
    v += rlen(2) + rlen(5) + rlen(2)          # length, last id
    v += rlen(1)                              # groups
    v += rstr(b"grp") + rlen(5) + rlen(1)     # name, last delivered id
    v += rlen(1) + raw_id(5, 1) + struct.pack("<q", delivery_ms) + rlen(3)  # global PEL
    v += rlen(1) + rstr(b"alice") + struct.pack("<q", delivery_ms) + rlen(1) + raw_id(5, 1)
    return v


# each ziplist integer encoding at its bounds (immediate, int8, int16, int24, int32, int64)
BOUNDS = [12, 13, -1, 127, -128, 128, -129, 32767, -32768, 32768, -32769, (1 << 23) - 1,
          -(1 << 23), 1 << 23, -(1 << 23) - 1, (1 << 31) - 1, -(1 << 31), 1 << 31, -(1 << 63),
          (1 << 63) - 1]


def build(version):
    now = int(time.time())
    out = b"REDIS%04d" % version
    if version >= 7:
        out += aux(b"redis-ver", b"6.2.14") + aux(b"redis-bits", b"64")
        out += aux(b"ctime", str(now).encode()) + aux(b"used-mem", b"1000000")
    out += b"\xfe" + rlen(0)
    if version >= 7:
        out += b"\xfb" + rlen(20) + rlen(2)
    out += key(0, b"str", rstr(b"hello"))
    out += key(0, b"int8", b"\xc0\x7b")
    out += key(0, b"int16", b"\xc1" + struct.pack("<h", -1234))
    out += key(0, b"int32", b"\xc2" + struct.pack("<i", 123456789))
    lit = b"literal-run-of-lzf"                      # an LZF literal run: ctrl = n - 1
    out += key(0, b"lzf", b"\xc3" + rlen(len(lit) + 1) + rlen(len(lit)) +
               bytes([len(lit) - 1]) + lit)
    if version >= 9:
        out += key(0, b"ttl", rstr(b"v"), exp_ms=(now + 3600) * 1000)
    else:
        out += key(0, b"ttl", rstr(b"v"), exp_s=now + 3600)
    out += key(0, b"expired", rstr(b"v"), exp_ms=(now - 3600) * 1000)
    out += key(1, b"list", rlen(3) + rstr(b"a") + rstr(b"b") + b"\xc0\x05")
    zl = ziplist([b"a", 5, b"bcd", -200, 70000, 1 << 40, b"x" * 70])
    if version >= 7:
        out += key(14, b"qlist", rlen(2) + rstr(zl) + rstr(ziplist([b"tail", 12, b"y" * 300])))
    out += key(10, b"zlist", rstr(zl))
    # entries after one of 254 bytes or more carry a 5-byte prevlen; every integer encoding at
    # its bounds (int24 and int32 among them)
    bounds = BOUNDS
    big = ziplist([b"p" * 253, b"q", b"r" * 254, b"s", b"t" * 70000, 7] + bounds)
    out += key(10, b"zlbig", rstr(big))
    if version >= 7:
        out += key(14, b"qlbig", rlen(2) + rstr(big) + rstr(ziplist(bounds)))
    out += key(12, b"zlzset2", rstr(ziplist([x for i, v in enumerate(sorted(bounds))
                                             for x in (b"m%d" % i, v)])))
    out += key(13, b"zlhash2", rstr(ziplist([b"k" * 300, 70000, b"n", -(1 << 23)])))
    out += key(2, b"set", rlen(3) + rstr(b"x") + rstr(b"y") + b"\xc0\x01")
    out += key(11, b"intset", rstr(intset([-3, 1, 70000], 4)))
    out += key(11, b"intset64", rstr(intset([1, 1 << 40], 8)))
    out += key(4, b"hash", rlen(2) + rstr(b"f1") + rstr(b"v1") + rstr(b"f2") + b"\xc0\x02")
    out += key(13, b"zlhash", rstr(ziplist([b"a", b"1", b"b", 2, b"c", b"z" * 100])))
    out += key(9, b"zmhash", rstr(zipmap([(b"name", b"tc"), (b"k", b"")])))
    out += key(3, b"zset", rlen(3) + rstr(b"a") + b"\x031.5" + rstr(b"b") + b"\xfe" +
               rstr(b"c") + b"\x02-2")
    out += key(12, b"zlzset", rstr(ziplist([b"n", b"-inf", b"a", b"1.5", b"b", 2])))
    if version >= 8:
        out += key(5, b"zset2", rlen(2) + rstr(b"a") + struct.pack("<d", 0.5) + rstr(b"b") +
                   struct.pack("<d", 2.0))
    if version >= 9:
        out += key(15, b"stream", stream_v1(now * 1000 - 5000))
    out += b"\xfe" + rlen(3) + key(13, b"db3hash", rstr(ziplist([b"k", b"v"])))
    out += b"\xff"
    return out + struct.pack("<Q", crc64(out))


def stream_info(srv):
    r = srv.client(decode=False)
    r.execute_command("SELECT", 0)
    info = r.execute_command("XINFO", "STREAM", "stream", "FULL")
    return [x for i, x in enumerate(info)
            if info[i - (i % 2)] not in (b"radix-tree-keys", b"radix-tree-nodes")]


@pytest.mark.parametrize("version", [6, 7, 8, 9])
def test_old_rdb_loads_as_in_redis(version, tc_factory, redis_factory, tmp_path):
    data = build(version)
    rdir, tdir = tmp_path / "redis", tmp_path / "tc"
    rdir.mkdir()
    tdir.mkdir()
    (rdir / "dump.rdb").write_bytes(data)
    check_rdb(str(rdir / "dump.rdb"))
    shutil.copy(rdir / "dump.rdb", tdir / "dump.rdb")
    rs = redis_factory(dir=rdir)
    tc = tc_factory(dir=tdir)
    want = snapshot(rs)
    assert want[0][b"str"] == ("string", b"hello", False)
    assert b"expired" not in want[0] and b"db3hash" in want[3]
    # what redis-server read of the ziplist built with every integer encoding and long prevlens
    assert want[0][b"zlbig"][1][2:6] == [b"r" * 254, b"s", b"t" * 70000, b"7"]
    assert want[0][b"zlbig"][1][6:] == [str(v).encode() for v in BOUNDS]
    assert snapshot(tc) == want
    r = tc.client()
    assert 3500 < r.ttl("ttl") <= 3600
    if version >= 9:
        assert stream_info(tc) == stream_info(rs)
    # what twincache writes of it loads in redis-server as well
    assert r.save()
    check_rdb(tc.dump)


def test_corrupt_ziplist_refused(tmp_path):
    """A ziplist whose header disagrees with its entries: the load fails, reported."""
    good = ziplist([b"a", b"b"])
    bad = good[:4] + struct.pack("<I", 3) + good[8:]  # wrong tail offset
    out = b"REDIS0009" + b"\xfe\x00" + key(10, b"l", rstr(bad)) + b"\xff"
    out += struct.pack("<Q", crc64(out))
    (tmp_path / "dump.rdb").write_bytes(out)
    srv = make_twincache(str(tmp_path))
    srv.spawn()
    try:
        assert srv.wait_exit(20) not in (None, 0)
        assert "ziplist" in srv.output().lower()
    finally:
        srv.stop()
