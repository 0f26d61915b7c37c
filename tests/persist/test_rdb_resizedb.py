"""The RDB's RESIZEDB hint (the key count of the database that follows): twincache sizes its
tables for it before the keys come, so a full sync or a restart does not rehash a growing
table again and again. The count is believed only as far as the file's remaining bytes could
hold keys: a hostile count allocates nothing, and a wrong count loads the keys all the same."""

import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rdbgen import crc64, rstr  # noqa: E402
from test_rdb import snapshot  # noqa: E402


def big_len(n):
    """An RDB length of 64 bits (0x81 and 8 bytes big-endian)."""
    return b"\x81" + struct.pack(">Q", n)


def rdb(dbs):
    """REDIS0009 with, per database, SELECTDB, RESIZEDB (the given counts) and string keys."""
    out = b"REDIS0009"
    for db, (count, expires, keys) in dbs.items():
        out += b"\xfe" + bytes([db]) + b"\xfb" + big_len(count) + big_len(expires)
        for k, v in keys:
            out += b"\x00" + rstr(k) + rstr(v)
    out += b"\xff"
    return out + struct.pack("<Q", crc64(out))


def used_memory(srv):
    return srv.client().info("memory")["used_memory"]


def test_resizedb_from_redis_loads_every_key(tc_factory, redis_factory, tmp_path):
    """Counts as redis-server writes them, in three databases: twincache loads what it saved."""
    rdir, tdir = tmp_path / "redis", tmp_path / "tc"
    rdir.mkdir()
    tdir.mkdir()
    rs = redis_factory(dir=rdir)
    for db, n in ((0, 30000), (5, 7000), (15, 1)):
        r = rs.client(db=db)
        for i in range(0, n, 1000):
            r.mset({"k%d:%d" % (db, j): "value:%d" % j for j in range(i, min(n, i + 1000))})
        r.set("v%d" % db, "x", px=3600000)
    assert rs.client().save()
    (tdir / "dump.rdb").write_bytes((rdir / "dump.rdb").read_bytes())
    tc = tc_factory(dir=tdir)
    assert snapshot(tc) == snapshot(rs)
    assert tc.client(db=0).dbsize() == 30001 and tc.client(db=5).dbsize() == 7001


@pytest.mark.parametrize("count", [1 << 60, 0, 1, 100000])
def test_resizedb_count_believed_within_the_file(count, tc_factory, tmp_path):
    """A count far beyond what the file holds (2^60), none, or fewer or more than the keys that
    follow: the keys load, and a count that cannot be true allocates nothing for it."""
    keys0 = [(b"a%d" % i, b"v%d" % i) for i in range(5000)]
    keys3 = [(b"b%d" % i, b"w") for i in range(3)]
    (tmp_path / "dump.rdb").write_bytes(rdb({0: (count, count, keys0), 3: (count, 0, keys3)}))
    tc = tc_factory(dir=tmp_path)
    assert tc.client(db=0).dbsize() == 5000 and tc.client(db=3).dbsize() == 3
    assert tc.client(db=0).get(b"a4999") == b"v4999"
    # 5003 small keys: a few MB at most, whatever the count said (2^60 keys' tables would be
    # exabytes; the count as far as the file's bytes go is ~30000 slots)
    assert used_memory(tc) < 64 << 20
