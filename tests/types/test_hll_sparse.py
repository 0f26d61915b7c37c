"""Sparse HyperLogLogs and hll-sparse-max-bytes, differential against Debian's redis-server
7.0 started side by side: the same random PFADD streams (several seeds, sizes crossing the
promotion point, the limit set by CONFIG SET at several values and changed mid-stream),
PFMERGE over sparse and dense inputs and destinations, PFCOUNT and its cached cardinality;
after every step GET gives byte-identical strings on both servers. Corrupt sparse strings give
the same errors (and leave the same bytes) on both; DUMP/RESTORE and RDB files, written by
either server and read by the other, keep the sparse bytes."""
import os
import random
import shutil

import pytest

import tcharness
from conftest import CLIENT
from test_hll import hll_sparse, xzero

HDR = 16
DENSE_LEN = HDR + 12288
DEFAULT_MAX = 3000


@pytest.fixture
def hd(d):
    """d (a Diff on flushed servers), hll-sparse-max-bytes put back to Redis's default after."""
    yield d
    for c in (d.tc, d.rs):
        c.execute_command("CONFIG", "SET", "hll-sparse-max-bytes", DEFAULT_MAX)


def set_max(d, n):
    d("CONFIG", "SET", "hll-sparse-max-bytes", n)
    d("CONFIG", "GET", "hll-sparse-max-bytes")


def elements(rng, n, prefix="e"):
    return ["%s%d:%d" % (prefix, rng.randrange(1 << 30), i) for i in range(n)]


def both(d, cmds):
    """Pipeline cmds to both servers; every reply must be equal. Returns twincache's."""
    out = []
    for c in (d.tc, d.rs):
        p = c.pipeline(transaction=False)
        for cmd in cmds:
            p.execute_command(*cmd)
        out.append(p.execute(raise_on_error=False))
    a, b = out
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, Exception) or isinstance(y, Exception):
            x, y = repr(x), repr(y)
        assert x == y, "step %d %r:\n twincache: %r\n redis:     %r" % (
            i, cmds[i][:3], x if len(repr(x)) < 300 else repr(x)[:300],
            y if len(repr(y)) < 300 else repr(y)[:300])
    return a


def hll(ops, card=0, invalid=True, enc=1, magic=b"HYLL"):
    """A HYLL string with these register bytes (sparse opcodes by default), its cached
    cardinality marked invalid unless told otherwise."""
    return hll_sparse(ops, card, invalid, enc, magic)


def val(v, n):
    return 0x80 | ((v - 1) << 2) | (n - 1)


def stream(rng, key, limit, count_p=0.3):
    """PFADD batches of random sizes (with repeats) up to limit elements, GET after each."""
    cmds, total = [], 0
    while total < limit:
        n = rng.choice([1, 1, 2, 5, 20, 100, 400])
        els = elements(rng, n)
        if rng.random() < 0.3:
            els += els[: n // 2 + 1]
        cmds += [("PFADD", key, *els), ("GET", key)]
        if rng.random() < count_p:
            cmds += [("PFCOUNT", key), ("GET", key)]
        total += n
    return cmds + [("PFDEBUG", "ENCODING", key), ("PFCOUNT", key), ("GET", key)]


@pytest.mark.parametrize("maxb", [0, 1, 25, 100, 1000, 3000, 5000, 8000, 20000])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pfadd_streams(hd, seed, maxb):
    """Random PFADD streams under each limit: promoted at the same step, same bytes always."""
    set_max(hd, maxb)
    rng = random.Random(seed * 100003 + maxb)
    limit = 11000 if maxb >= 8000 else 4000
    got = both(hd, [("PFADD", "h")] + stream(rng, "h", limit))
    lens = [len(v) for v in got if isinstance(v, bytes) and v[:4] == b"HYLL"]
    sparse = [n for n in lens if n != DENSE_LEN]
    assert max(sparse, default=18) <= max(maxb, 18)  # never past the limit (an empty HLL is 18 bytes)
    if maxb >= 20000:
        assert lens[-1] != DENSE_LEN  # this many elements still fit sparse
    else:
        assert lens[-1] == DENSE_LEN


@pytest.mark.parametrize("maxb", [60, 500, 3000])
def test_one_by_one_around_promotion(hd, maxb):
    """One element per PFADD across the promotion, the value compared after every add."""
    set_max(hd, maxb)
    rng = random.Random(maxb)
    n = {60: 40, 500: 400, 3000: 1900}[maxb]
    cmds = []
    for e in elements(rng, n):
        cmds += [("PFADD", "h", e), ("GET", "h")]
    got = both(hd, cmds)
    assert len(got[-1]) == DENSE_LEN and len(got[1]) < DENSE_LEN


def test_limit_changed_mid_stream(hd):
    """CONFIG SET between adds: a value already longer than a lowered limit stays sparse
    until an add would grow it (an in-place update does not promote), as in Redis."""
    rng = random.Random(5)
    set_max(hd, 20000)
    both(hd, stream(rng, "a", 3000) + stream(rng, "b", 300))
    set_max(hd, 1000)
    # b is under 1000 bytes, a is past it: the next growing add promotes a only
    cmds = []
    for e in elements(rng, 200):
        cmds += [("PFADD", "a", e), ("GET", "a"), ("PFADD", "b", e), ("GET", "b")]
    both(hd, cmds)
    set_max(hd, 0)
    both(hd, [("PFADD", "z"), ("GET", "z"), ("PFADD", "z", "x"), ("GET", "z"),
              ("PFDEBUG", "ENCODING", "z")])
    set_max(hd, 50000)
    both(hd, stream(rng, "c", 6000) + [("STRLEN", "c")])
    set_max(hd, 4000)
    both(hd, stream(rng, "c", 500))


def test_config_at_start_up(tc_factory):
    """--hll-sparse-max-bytes on the command line, as on redis-server's."""
    tc = tc_factory("--hll-sparse-max-bytes", "200")
    rs = tcharness.start_redis("--hll-sparse-max-bytes", "200", client_defaults=CLIENT)
    try:
        a, b = tc.client(), rs.client()
        assert a.execute_command("CONFIG", "GET", "hll-sparse-max-bytes") == \
            b.execute_command("CONFIG", "GET", "hll-sparse-max-bytes")
        rng = random.Random(9)
        for e in elements(rng, 300):
            a.execute_command("PFADD", "h", e)
            b.execute_command("PFADD", "h", e)
            assert a.execute_command("GET", "h") == b.execute_command("GET", "h")
        assert len(a.execute_command("GET", "h")) == DENSE_LEN
    finally:
        rs.stop()


def build_sources(d, rng):
    """Keys: sparse small, sparse near the default limit, dense (promoted), dense (PFDEBUG
    TODENSE of a small one), an empty sparse one."""
    cmds = [("PFADD", "s1", *elements(rng, 10)), ("PFADD", "s2", *elements(rng, 200)),
            ("PFADD", "s3", *elements(rng, 1500)), ("PFADD", "dn", *elements(rng, 4000)),
            ("PFADD", "td", *elements(rng, 30)), ("PFDEBUG", "TODENSE", "td"),
            ("PFADD", "e")]
    cmds += [("PFDEBUG", "ENCODING", k) for k in ("s1", "s2", "s3", "dn", "td", "e")]
    got = both(d, cmds)
    assert got[-6:] == [b"sparse", b"sparse", b"sparse", b"dense", b"dense", b"sparse"]


@pytest.mark.parametrize("maxb", [100, 3000, 20000])
@pytest.mark.parametrize("seed", [1, 2])
def test_pfmerge_sparse_dense(hd, seed, maxb):
    """PFMERGE of random sparse and dense sources into missing, sparse and dense
    destinations (a sparse destination stays sparse only while every input is sparse and it
    fits the limit), then PFCOUNT; every step's bytes compared."""
    rng = random.Random(seed)
    build_sources(hd, rng)
    set_max(hd, maxb)
    srcs = ["s1", "s2", "s3", "dn", "td", "e", "missing"]
    cmds = []
    for i in range(40):
        ks = rng.sample(srcs, rng.randint(1, 4))
        dst = rng.choice(["new%d" % i, "d1", "d2", ks[0]])
        if dst == "d1" and rng.random() < 0.3:
            cmds.append(("DEL", "d1"))
        cmds += [("PFMERGE", dst, *ks), ("GET", dst), ("PFDEBUG", "ENCODING", dst)]
        if rng.random() < 0.5:
            cmds += [("PFCOUNT", dst), ("GET", dst)]
        if rng.random() < 0.3:
            cmds += [("PFCOUNT", *ks), *[("GET", k) for k in ks]]  # no cache written
        if rng.random() < 0.3:
            cmds += [("PFADD", dst, *elements(rng, rng.choice([1, 50]))), ("GET", dst)]
    both(hd, cmds)


def test_pfmerge_promotes_mid_merge(hd):
    """A sparse destination that outgrows the limit while the registers are merged in."""
    rng = random.Random(3)
    set_max(hd, 20000)
    both(hd, [("PFADD", "big", *elements(rng, 3000)), ("PFADD", "small", *elements(rng, 5))])
    for m in (200, 2000, 2500, 5000):
        set_max(hd, m)
        both(hd, [("DEL", "dst"), ("PFADD", "dst", "x"), ("PFMERGE", "dst", "big"),
                  ("GET", "dst"), ("PFMERGE", "fresh%d" % m, "small", "big"),
                  ("GET", "fresh%d" % m), ("PFCOUNT", "dst"), ("GET", "dst")])


def test_pfcount_cache(hd):
    """PFCOUNT writes the cardinality into the header (cache bit cleared) on sparse and dense
    values alike; a PFADD that changes a register sets the invalid bit again, one that
    changes nothing leaves the cache."""
    rng = random.Random(4)
    els = elements(rng, 100)
    cmds = [("PFADD", "h", *els), ("GET", "h"), ("PFCOUNT", "h"), ("GET", "h"),
            ("PFADD", "h", *els[:10]), ("GET", "h"), ("PFADD", "h", "new"), ("GET", "h"),
            ("PFCOUNT", "h"), ("GET", "h"), ("PFDEBUG", "TODENSE", "h"), ("GET", "h"),
            ("PFCOUNT", "h"), ("GET", "h"), ("PFCOUNT", "h", "nokey"), ("GET", "h")]
    got = both(hd, cmds)
    assert got[3][15] & 0x80 == 0 and got[1][15] & 0x80


def corrupt_values():
    body = xzero(16384)
    return {
        "tail_junk": hll(body + list(b"hello")),
        "tail_big_junk": hll(body + [val(3, 2)] * 4000),
        "too_few": hll(xzero(16000)),
        "too_many": hll(body + body),
        "val_past_end": hll(xzero(16383) + [val(6, 4)]),
        "trunc_xzero": hll(xzero(16000) + [0x41]),
        "xzero_alone": hll([0x7F]),
        "hdr_only": hll([]),
        "many_val": hll([0xFF] * 5000),
        "zeros_over": hll([0x3F] * 300),
        "xzero_overflow": hll([0x7F, 0xFF] * 50),
        "valid_cache_bad_body": hll(xzero(100), card=42, invalid=False),
    }


@pytest.mark.parametrize("maxb", [100, 3000, 40000])
def test_corrupt_sparse(hd, maxb):
    """SET a corrupt sparse string, then PFCOUNT / PFADD / PFMERGE / PFDEBUG: the same
    INVALIDOBJ errors, and the same bytes after them (registers set before the corruption is
    met stay set, as in Redis)."""
    set_max(hd, maxb)
    rng = random.Random(maxb)
    for name, v in sorted(corrupt_values().items()):
        els = elements(rng, 60)
        cmds = [("SET", "x", v), ("PFCOUNT", "x"), ("GET", "x"), ("PFADD", "x", *els),
                ("GET", "x"), ("PFCOUNT", "x"), ("PFCOUNT", "x", "nokey"),
                ("PFMERGE", "dst", "x"), ("EXISTS", "dst"), ("PFADD", "good", "q"),
                ("PFMERGE", "good", "x"), ("GET", "good"), ("PFDEBUG", "DECODE", "x"),
                ("PFDEBUG", "TODENSE", "x"), ("GET", "x"), ("PFDEBUG", "GETREG", "x"),
                ("GET", "x"), ("DEL", "x", "good", "dst")]
        got = both(hd, cmds)
        if name != "valid_cache_bad_body":
            errs = [g for g in got if isinstance(g, Exception)]
            assert errs and all("INVALIDOBJ Corrupted HLL object detected" in str(e)
                                for e in errs), (name, errs)


def fuzz_value(rng):
    """Random sparse opcodes: junk, one XZERO plus junk, or random runs; often ending in a
    truncated XZERO (its second byte missing)."""
    kind = rng.random()
    if kind < 0.3:
        ops = [rng.randrange(256) for _ in range(rng.randrange(1, 60))]
    elif kind < 0.6:
        ops = xzero(rng.randrange(1, 16385)) + [rng.randrange(256)
                                                for _ in range(rng.randrange(10))]
    else:
        ops, n = [], rng.randrange(1, 300)
        while len(ops) < n:
            r = rng.random()
            ops += ([rng.randrange(64)] if r < 0.3 else
                    xzero(rng.randrange(1, 400)) if r < 0.6 else [0x80 | rng.randrange(128)])
    if rng.random() < 0.4:
        ops.append(0x40 | rng.randrange(64))
    return hll(ops)


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_sparse(hd, seed):
    """Random (mostly corrupt) sparse values under random limits: each command runs on a fresh
    SET of the value, and its reply and the bytes it leaves match Redis's. (A fresh SET each
    time: Redis may leave a byte past a corrupt string's end that its next command reads,
    which twincache does not keep between commands; see cmd_hll.c, struct hll.)"""
    rng = random.Random(seed)
    for _ in range(25):
        cmds = []
        for _ in range(20):
            v = fuzz_value(rng)
            els = elements(rng, rng.choice([1, 5, 60, 300]))
            cmds.append(("CONFIG", "SET", "hll-sparse-max-bytes", rng.choice([100, 3000, 40000])))
            for cmd in (("PFADD", "x", *els), ("PFCOUNT", "x"), ("PFCOUNT", "x", "nokey"),
                        ("PFMERGE", "x", "x"), ("PFMERGE", "d", "x"), ("PFDEBUG", "TODENSE", "x"),
                        ("PFDEBUG", "DECODE", "x"), ("PFDEBUG", "GETREG", "x")):
                cmds += [("DEL", "d"), ("SET", "x", v), cmd, ("GET", "x"), ("GET", "d")]
        both(hd, cmds)


def test_wrongtype(hd):
    """Values that are not HLLs: WRONGTYPE with Redis's texts, nothing written."""
    cases = [b"", b"HYLL", b"HYLL\x01" + b"\x00" * 10, b"HYLX" + bytes(hll(xzero(16384)))[4:],
             hll(xzero(16384), enc=2), hll([0] * 100, enc=0), hll([0] * 12289, enc=0),
             b"12345678901234567890", b"x" * 40]
    for v in cases:
        cmds = [("SET", "s", v), ("PFADD", "s", "a"), ("PFCOUNT", "s"),
                ("PFCOUNT", "nokey", "s"), ("PFMERGE", "s", "nokey"), ("PFMERGE", "d", "s"),
                ("EXISTS", "d"), ("PFDEBUG", "ENCODING", "s"), ("PFDEBUG", "TODENSE", "s"),
                ("GET", "s")]
        got = both(hd, cmds)
        assert "Key is not a valid HyperLogLog string value." in str(got[1])
    got = both(hd, [("RPUSH", "l", "a"), ("PFADD", "l", "a"), ("PFCOUNT", "l"),
                    ("PFMERGE", "l", "nokey"), ("PFMERGE", "d", "l")])
    assert "WRONGTYPE" in str(got[1])


def test_sparse_past_dense_size(hd):
    """Limits above the 12 KB dense size: a valid sparse value that grows past it, in one
    PFADD and in many; PFMERGE into such a value; and a (corrupt) value longer than any valid
    one that grows (twincache's copy moves from its work area to the heap)."""
    set_max(hd, 40000)
    rng = random.Random(8)
    # runs of 3 zero registers as 2-byte XZEROs: every add in the middle of one grows the
    # value by a byte (ZERO VAL ZERO)
    base = hll(xzero(3) * 5461 + xzero(1))
    cmds = [("SET", "g", base), ("PFADD", "g", *elements(rng, 6000)), ("GET", "g"),
            ("STRLEN", "g"), ("PFCOUNT", "g"), ("GET", "g"), ("SET", "g2", base)]
    for _ in range(30):
        cmds += [("PFADD", "g2", *elements(rng, 100)), ("GET", "g2")]
    cmds += [("PFMERGE", "g2", "g"), ("GET", "g2"), ("PFDEBUG", "ENCODING", "g2"),
             ("SET", "g3", base), ("PFMERGE", "g3", "g2"), ("GET", "g3"),
             ("PFDEBUG", "ENCODING", "g3")]
    got = both(hd, cmds)
    assert got[3] > DENSE_LEN  # sparse, longer than dense
    set_max(hd, 12000)
    both(hd, [("SET", "g4", base), ("PFADD", "g4", *elements(rng, 3000)), ("GET", "g4")])
    set_max(hd, 100000)
    junk = hll(xzero(16384) + [val(3, 2)] * 32800)
    cmds = [("SET", "j", junk)]
    for _ in range(20):
        cmds += [("PFADD", "j", *elements(rng, 200)), ("STRLEN", "j"), ("GET", "j")]
    cmds += [("PFCOUNT", "j"), ("PFMERGE", "j2", "j"), ("PFDEBUG", "TODENSE", "j")]
    got = both(hd, cmds)
    assert got[-5] > len(junk)


def test_dump_restore_keeps_sparse(hd):
    """DUMP of a sparse HLL RESTOREs to the same bytes on the other server, and back."""
    rng = random.Random(12)
    both(hd, [("PFADD", "a", *elements(rng, 5)), ("PFADD", "b", *elements(rng, 800)),
              ("PFCOUNT", "b"), ("PFADD", "c", *elements(rng, 5000)), ("PFADD", "e")])
    for k in ("a", "b", "c", "e"):
        pt = hd.tc.execute_command("DUMP", k)
        pr = hd.rs.execute_command("DUMP", k)
        assert hd.tc.execute_command("RESTORE", "r-" + k, 0, pr) == b"OK"
        assert hd.rs.execute_command("RESTORE", "r-" + k, 0, pt) == b"OK"
        got = both(hd, [("GET", k), ("GET", "r-" + k), ("PFDEBUG", "ENCODING", "r-" + k),
                        ("PFADD", "r-" + k, "more"), ("GET", "r-" + k)])
        assert got[0] == got[1]
        assert got[2] == (b"dense" if k == "c" else b"sparse")


def test_rdb_round_trip_keeps_sparse(hd, tc_server, redis_server, tmp_path):
    """DEBUG RELOAD keeps the sparse bytes; an RDB saved by either server loads in the other
    with the same bytes."""
    rng = random.Random(13)
    keys = {"a": 3, "b": 500, "c": 2000, "d": 5000}
    cmds = [("PFADD", k, *elements(rng, n)) for k, n in keys.items()]
    cmds += [("PFCOUNT", "b"), ("PFADD", "e"), ("SET", "junk", hll([0x3F] * 300))]
    both(hd, cmds)
    names = sorted(keys) + ["e", "junk"]
    before = both(hd, [("GET", k) for k in names])
    both(hd, [("DEBUG", "RELOAD")])
    assert both(hd, [("GET", k) for k in names]) == before
    for src, srv, kind in ((hd.tc, tc_server, "redis"), (hd.rs, redis_server, "twincache")):
        assert src.execute_command("SAVE") == b"OK"
        rdb = os.path.join(srv.dir, src.execute_command("CONFIG", "GET", "dir")[1].decode(),
                           src.execute_command("CONFIG", "GET", "dbfilename")[1].decode())
        run = tmp_path / kind
        run.mkdir()
        shutil.copy(rdb, run / "dump.rdb")
        if kind == "redis":
            other = tcharness.start_redis(dir=run, client_defaults=CLIENT)
        else:
            other = tcharness.start_twincache(dir=run, check=True, client_defaults=CLIENT)
        try:
            c = other.client()
            assert [c.execute_command("GET", k) for k in names] == before
            assert c.execute_command("PFDEBUG", "ENCODING", "b") == b"sparse"
        finally:
            other.stop()


def test_replicas_get_the_same_bytes(tc_factory, tmp_path):
    """A twincache master's sparse and dense HLLs reach a redis-server replica and a twincache
    replica byte for byte: by the full sync's RDB, then by the command stream (each replica
    under the master's hll-sparse-max-bytes)."""
    master = tc_factory("--hll-sparse-max-bytes", "1500")
    rtc = tc_factory("--hll-sparse-max-bytes", "1500")
    rrs = tcharness.start_redis("--hll-sparse-max-bytes", "1500", "--repl-diskless-sync-delay",
                                "0", client_defaults=CLIENT)
    try:
        m = master.client()
        rng = random.Random(17)
        for k, n in (("a", 5), ("b", 300), ("c", 3000)):
            m.execute_command("PFADD", k, *elements(rng, n))
        m.execute_command("PFCOUNT", "b")
        replicas = [rtc.client(), rrs.client()]
        for r in replicas:
            assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK"
        for _ in range(40):
            m.execute_command("PFADD", rng.choice("abdef"), *elements(rng, rng.choice([1, 30])))
        m.execute_command("PFMERGE", "m", "a", "d")
        m.execute_command("PFMERGE", "m2", "a", "c")
        m.execute_command("PFCOUNT", "d")
        m.execute_command("PFCOUNT", "a", "b")
        assert m.execute_command("WAIT", 2, 20000) == 2
        keys = sorted(m.execute_command("KEYS", "*"))
        want = [m.execute_command("GET", k) for k in keys]
        assert any(len(v) < 1500 for v in want) and any(len(v) == DENSE_LEN for v in want)
        for r in replicas:
            assert [r.execute_command("GET", k) for k in keys] == want
    finally:
        rrs.stop()
