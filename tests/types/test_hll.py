"""HyperLogLog: PFADD PFCOUNT PFMERGE compared with Debian's redis-server, byte for byte: the
same commands must give the same replies and the same HYLL string (GET), sparse and dense and
across the promotion, and HLLs move between the two servers by GET/SET. Corrupted values
must be refused with Redis's errors, never crash."""
import random
import socket
import struct
import time

import pytest
import redis

from conftest import call


HDR = 16
DENSE_LEN = 16 + 12288


def same(d, key):
    """GET of key is identical on both servers (and is returned)."""
    return d("GET", key)


def elements(rng, n, prefix="e"):
    return ["%s%d:%d" % (prefix, rng.randrange(1 << 30), i) for i in range(n)]


def test_basic(d):
    d("PFADD", "h")
    same(d, "h")
    d("PFCOUNT", "h")
    same(d, "h")  # cache written by PFCOUNT
    d("PFADD", "h", "a", "b", "c")
    same(d, "h")
    d("PFADD", "h", "a")
    d("PFADD", "h")
    d("PFCOUNT", "h")
    same(d, "h")
    d("PFCOUNT", "nokey")
    d("PFCOUNT", "nokey", "h")
    d("PFCOUNT", "nokey", "nokey2")
    d("EXISTS", "nokey")
    d("PFADD", "e", "")
    d("PFADD", "e", "", "x" * 100, "\x00\xff", "1234567", "12345678", "123456789")
    same(d, "e")
    d("PFCOUNT", "e")
    d("TYPE", "e")
    d("STRLEN", "e")


def test_arity_and_wrongtype(d):
    d("PFADD")
    d("PFCOUNT")
    d("PFMERGE")
    d("RPUSH", "l", "a")
    d("PFADD", "l", "x")
    d("PFCOUNT", "l")
    d("PFCOUNT", "l", "nokey")
    d("PFMERGE", "l", "nokey")
    d("PFMERGE", "dst", "l")
    d("EXISTS", "dst")
    d("SET", "s", "hello")
    d("PFADD", "s", "x")
    d("PFCOUNT", "s")
    d("PFCOUNT", "nokey", "s")
    d("PFMERGE", "s")
    d("PFMERGE", "d2", "s")
    d("SET", "i", "12345")
    d("PFADD", "i", "x")
    d("SET", "n", "")
    d("PFCOUNT", "n")
    d("GET", "s")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_sparse_dense_promotion(d, seed):
    """Grow one HLL in batches past the sparse limit; bytes and counts equal at every step."""
    rng = random.Random(seed)
    total = 0
    while total < 6000:
        n = rng.choice([1, 3, 10, 50, 200])
        els = elements(rng, n)
        if rng.random() < 0.3:
            els += els[: n // 2]  # repeats
        d("PFADD", "h", *els)
        total += n
        if rng.random() < 0.5:
            d("PFCOUNT", "h")
        same(d, "h")
    v = d("GET", "h")
    assert v[4] == 0 and len(v) == DENSE_LEN  # promoted
    d("PFCOUNT", "h")
    d("PFADD", "h", *elements(rng, 30000))
    d("PFCOUNT", "h")
    same(d, "h")


def pipelined(client, cmds):
    p = client.pipeline(transaction=False)
    for c in cmds:
        p.execute_command(*c)
    return p.execute(raise_on_error=False)


@pytest.mark.parametrize("seed", range(6))
def test_one_by_one_around_promotion(d, seed):
    """One element per PFADD, the value compared after each: the promotion happens at the
    same add, at exactly hll-sparse-max-bytes (3000)."""
    rng = random.Random(100 + seed)
    cmds = []
    for e in elements(rng, 1900):
        cmds += [("PFADD", "h", e), ("GET", "h")]
    a, b = pipelined(d.tc, cmds), pipelined(d.rs, cmds)
    assert a == b
    lens = [len(v) for v in a[1::2]]
    assert max(n for n in lens if n != DENSE_LEN) <= 3000 and lens[-1] == DENSE_LEN
    d("PFCOUNT", "h")


M64 = (1 << 64) - 1


def murmur64a(data):
    m = 0xC6A4A7935BD1E995
    h = (0xADC83B19 ^ (len(data) * m)) & M64
    nb = len(data) // 8 * 8
    for i in range(0, nb, 8):
        k = (int.from_bytes(data[i:i + 8], "little") * m) & M64
        k ^= k >> 47
        h ^= (k * m) & M64
        h = (h * m) & M64
    if len(data) > nb:
        h = ((h ^ int.from_bytes(data[nb:], "little")) * m) & M64
    h ^= h >> 47
    h = (h * m) & M64
    return h ^ (h >> 47)


def patlen(e):
    h = murmur64a(e.encode())
    rest = (h >> 14) | (1 << 50)
    return h & 16383, (rest & -rest).bit_length()


def encode_sparse(regs, rng):
    """Registers as sparse opcodes, runs split at random (still a valid encoding)."""
    ops, i = [], 0
    while i < len(regs):
        j = i
        while j < len(regs) and regs[j] == regs[i]:
            j += 1
        n, v = j - i, regs[i]
        while n:
            if v:
                k = min(n, rng.randint(1, 4))
                ops.append(0x80 | ((v - 1) << 2) | (k - 1))
            elif rng.random() < 0.5:
                k = min(n, rng.randint(1, 64))
                ops.append(k - 1)
            else:
                k = min(n, rng.choice([1, 2, 65, 300, 16384]))
                ops += xzero(k)
            n -= k
        i = j
    return ops


def test_python_hash_matches(d):
    """The test's own MurmurHash64A picks the register Redis picks."""
    for e in ["", "a", "hello", "12345678", "123456789abcdef0x"]:
        idx, cnt = patlen(e)
        d("DEL", "p")
        d("PFADD", "p", e)
        ops = d("GET", "p")[16:]
        want = (xzero(idx) if idx > 64 else [idx - 1] if idx else []) + \
            [0x80 | ((cnt - 1) << 2)]
        assert list(ops[:len(want)]) == want, (e, idx, cnt, list(ops[:4]))


def test_sparse_splits_and_merges(d):
    """Random run layouts around the register an element lands on: the split into up to
    three opcodes and the merge of equal neighbours give Redis's bytes."""
    rng = random.Random(77)
    cands = []
    for i in range(4000):
        idx, cnt = patlen("m%d" % i)
        if 2 <= cnt <= 32 and 10 <= idx < 16374:
            cands.append(("m%d" % i, idx, cnt))
    cmds = []
    for t in range(400):
        e, idx, cnt = rng.choice(cands)
        regs = [0] * 16384
        for j in range(idx - 9, idx + 10):
            regs[j] = rng.choice([0, 0, cnt, cnt, cnt - 1, min(cnt + 1, 32)])
        regs[idx] = rng.randrange(cnt)
        if rng.random() < 0.3:
            for j in range(rng.randrange(200)):
                regs[rng.randrange(16384)] = rng.randint(1, 32)
        v = hll_sparse(encode_sparse(regs, rng), invalid=True)
        cmds += [("SET", "k", v), ("PFADD", "k", e), ("GET", "k"), ("PFCOUNT", "k"),
                 ("GET", "k")]
    a, b = pipelined(d.tc, cmds), pipelined(d.rs, cmds)
    for i in range(0, len(a), 5):
        assert a[i:i + 5] == b[i:i + 5], cmds[i:i + 5]


def test_value_over_32_promotes(d):
    """A register value above 32 cannot be sparse: merging it in promotes the destination
    (an element with such a run is a 2^-32 event, so the source is a crafted dense HLL)."""
    regs = bytearray(12288)
    # register 5 = 40: bits 30..35, byte 3 bits 6-7 and byte 4 bits 0-3
    regs[3] |= (40 << 6) & 0xFF
    regs[4] |= 40 >> 2
    d("SET", "dense", b"HYLL\x00\x00\x00\x00" + b"\x00" * 7 + b"\x80" + bytes(regs))
    d("PFCOUNT", "dense")
    same(d, "dense")
    d("PFADD", "s", "a", "b")
    d("PFMERGE", "s", "dense")
    v = same(d, "s")
    assert v[4] == 0
    d("PFCOUNT", "s")
    d("PFADD", "t", "x")
    d("PFMERGE", "t2", "t", "dense")
    same(d, "t2")


@pytest.mark.parametrize("seed", [11, 12])
def test_pfcount_many_and_pfmerge(d, seed):
    rng = random.Random(seed)
    sizes = [0, 1, 5, 100, 700, 3000, 20000]
    for i, n in enumerate(sizes):
        if n:
            d("PFADD", "k%d" % i, *elements(rng, n))
        else:
            d("PFADD", "k%d" % i)
    keys = ["k%d" % i for i in range(len(sizes))]
    for _ in range(12):
        ks = rng.sample(keys + ["missing"], rng.randint(2, 5))
        d("PFCOUNT", *ks)
        for k in ks:
            same(d, k)  # the multi-key form writes no cache
        dst = rng.choice(["dst", "dst2", ks[0]])
        d("PFMERGE", dst, *ks[1:])
        same(d, dst)
        d("PFCOUNT", dst)
        same(d, dst)
    d("PFMERGE", "fresh")
    same(d, "fresh")
    d("PFMERGE", "fresh2", "missing", "missing2")
    same(d, "fresh2")
    d("PFMERGE", "k1")
    same(d, "k1")
    d("PFMERGE", "k3", "k4", "k4")
    same(d, "k3")


def test_interop_get_set(d, tc_server, redis_server):
    """An HLL built on redis-server, copied into twincache, counts and grows identically."""
    tc, rs = d.tc, d.rs
    rng = random.Random(21)
    for key, n in (("a", 10), ("b", 400), ("c", 5000)):
        rs.execute_command("PFADD", key, *elements(rng, n))
        raw = rs.execute_command("GET", key)
        tc.execute_command("SET", key, raw)
        d("PFCOUNT", key)
        same(d, key)
        more = elements(rng, 300)
        d("PFADD", key, *more)
        same(d, key)
        d("PFCOUNT", key)
    # and the other way
    tc.execute_command("PFADD", "t", *elements(rng, 800))
    rs.execute_command("SET", "t", tc.execute_command("GET", "t"))
    d("PFCOUNT", "t")
    d("PFCOUNT", "t", "a", "b")


def test_ttl_kept(d):
    d("PFADD", "h", "a")
    d("EXPIRE", "h", 1000)
    d("PFADD", "h", *["x%d" % i for i in range(3000)])  # promoted to a new item
    d("TTL", "h")
    d("PFCOUNT", "h")
    d("TTL", "h")
    d("PFMERGE", "h", "h")
    d("TTL", "h")


def hll_sparse(ops, card=0, invalid=False, enc=1, magic=b"HYLL"):
    hdr = magic + bytes([enc, 0, 0, 0]) + struct.pack("<Q", card)
    if invalid:
        hdr = hdr[:15] + bytes([hdr[15] | 0x80])
    return hdr + bytes(ops)


def xzero(n):
    return [0x40 | ((n - 1) >> 8), (n - 1) & 0xFF]


CORRUPT = {
    "short": b"HYLL\x01\x00",
    "badmagic": hll_sparse(xzero(16384), magic=b"HYLX"),
    "badenc": hll_sparse(xzero(16384), enc=2),
    "dense_short": hll_sparse([0] * 100, enc=0),
    "dense_long": hll_sparse([0] * 12289, enc=0),
    "hdr_only": hll_sparse([], invalid=True),
    "too_few": hll_sparse(xzero(16000), invalid=True),
    "too_many": hll_sparse(xzero(16384) + xzero(16384), invalid=True),
    "val_past_end": hll_sparse(xzero(16383) + [0x80 | (5 << 2) | 3], invalid=True),
    "trunc_xzero": hll_sparse(xzero(16000) + [0x41], invalid=True),
    "xzero_only_hdr": hll_sparse([0x7F], invalid=True),
    "many_val": hll_sparse([0xFF] * 5000, invalid=True),
    "many_xzero": hll_sparse(xzero(16384) * 3000, invalid=True),
    "zeros_over": hll_sparse([0x3F] * 300, invalid=True),
    "valid_cache_bad_body": hll_sparse(xzero(100), card=42),
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupted(d, name):
    v = CORRUPT[name]
    d("SET", "x", v)
    d("SET", "ok", v)
    d("PFCOUNT", "x")
    d("GET", "x")
    d("PFADD", "x", "a", "b", "c", *["e%d" % i for i in range(50)])
    d("GET", "x")
    d("PFCOUNT", "x")
    d("PFCOUNT", "x", "x")
    d("PFCOUNT", "nokey", "x")
    d("PFMERGE", "dst", "x")
    d("EXISTS", "dst")
    d("PFMERGE", "ok", "nokey")
    d("GET", "ok")
    d("PFADD", "good", "q")
    d("PFMERGE", "good", "x")
    d("GET", "good")


def test_sparse_opcode_edges(d):
    """Valid but unusual sparse encodings (not what Redis writes) behave as in Redis."""
    rng = random.Random(3)
    forms = [
        [0x3F] * 256,                                   # 256 ZERO opcodes of 64
        [0x00] * 16384,                                 # ZERO of 1 each
        [0x80 | (31 << 2) | 3] * 4096,                  # VAL 32 x4 everywhere
        [0x83] * 4096,                                  # VAL 1 x4
        xzero(1) * 16384,                               # XZERO of 1
        xzero(8000) + [0x80 | (2 << 2)] + xzero(8383),
        [0x80] + [0x80] + xzero(16382),                 # unmerged equal VALs
    ]
    for i, ops in enumerate(forms):
        k = "f%d" % i
        d("SET", k, hll_sparse(ops, invalid=True))
        d("PFCOUNT", k)
        same(d, k)
        d("PFADD", k, *elements(rng, 5))
        same(d, k)
        d("PFCOUNT", k)
        d("PFCOUNT", k, "f0")
        d("PFMERGE", "m%d" % i, k)
        same(d, "m%d" % i)
    # a dense HLL with register values above the estimator's range
    d("SET", "dd", b"HYLL\x00\x00\x00\x00" + b"\x00" * 7 + b"\x80" + b"\xff" * 12288)
    d("PFCOUNT", "dd")
    d("PFCOUNT", "dd", "f1")
    d("PFMERGE", "sp", "f6", "dd")
    same(d, "sp")
    d("PFADD", "dd", "a")
    same(d, "dd")
    # a cached cardinality is trusted, whatever it says
    d("SET", "cc", hll_sparse(xzero(16384), card=(1 << 63) - 1))
    d("PFCOUNT", "cc")
    d("SET", "cc", hll_sparse(xzero(16384), card=123456789))
    d("PFCOUNT", "cc")


def test_multi_watch(d):
    d("PFADD", "h", "a")
    for cl in (d.tc, d.rs):
        p = cl.pipeline(transaction=True)
        p.execute_command("PFADD", "h", "b")
        p.execute_command("PFCOUNT", "h")
        p.execute_command("PFMERGE", "m", "h", "nokey")
        p.execute_command("PFCOUNT", "h", "m")
        assert p.execute() == [1, 2, b"OK", 2]
    same(d, "h")
    same(d, "m")

    def watched(client, key, *cmd):
        """EXEC result of a transaction WATCHing key while another client runs cmd."""
        pool = client.connection_pool
        other = redis.Redis(connection_pool=pool)
        p = client.pipeline(transaction=True)
        p.watch(key)
        other.execute_command(*cmd)
        p.multi()
        p.execute_command("PING")
        try:
            return p.execute()
        except redis.exceptions.WatchError:
            return "aborted"

    for cmd in (("PFADD", "h", "new1"), ("PFMERGE", "h", "m"), ("PFCOUNT", "h"),
                ("PFCOUNT", "h"), ("PFCOUNT", "h", "m")):
        # (a PFADD that changes nothing is left out: twincache's WATCH, like for every
        # write command, is invalidated by it; Redis's is not)
        a = watched(d.tc, "h", *cmd)
        b = watched(d.rs, "h", *cmd)
        assert a == b, (cmd, a, b)
    same(d, "h")


def raw_replies(port, cmds):
    """Send cmds over a raw socket after HELLO 3; the raw reply bytes (scalar replies only)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    buf = b""
    out = []
    for args in [("HELLO", "3")] + cmds:
        req = b"*%d\r\n" % len(args)
        for x in args:
            x = x if isinstance(x, bytes) else str(x).encode()
            req += b"$%d\r\n%s\r\n" % (len(x), x)
        sock.sendall(req)
        if args[0] == "HELLO":
            time.sleep(0.05)
            sock.recv(65536)
            continue
        while b"\r\n" not in buf:
            buf += sock.recv(65536)
        line, buf = buf.split(b"\r\n", 1)
        if line[:1] == b"$":
            n = int(line[1:])
            while len(buf) < n + 2:
                buf += sock.recv(65536)
            line, buf = line + b"|" + buf[:n], buf[n + 2:]
        out.append(line)
    sock.close()
    return out


def test_resp3(tc_server, redis_server):
    cmds = [("FLUSHALL",), ("PFADD", "h", "a", "b"), ("PFCOUNT", "h"), ("PFMERGE", "m", "h"),
            ("PFCOUNT", "m", "h"), ("GET", "m"), ("PFCOUNT", "nokey"), ("SET", "s", "x"),
            ("PFCOUNT", "s"), ("PFADD", "s", "x")]
    assert raw_replies(tc_server.port, cmds) == raw_replies(redis_server.port, cmds)


def test_command_info(d):
    for name in ("pfadd", "pfcount", "pfmerge"):
        a = d.tc.execute_command("COMMAND", "INFO", name)[0]
        b = d.rs.execute_command("COMMAND", "INFO", name)[0]
        assert a[:2] == b[:2] and a[3:6] == b[3:6], (a, b)


def test_pfdebug(d):
    d("PFDEBUG")
    d("PFDEBUG", "ENCODING")
    d("PFDEBUG", "ENCODING", "nokey")
    d("PFDEBUG", "NOPE", "nokey")
    d("PFADD", "h", "a", "b", "c", *["x%d" % i for i in range(100)])
    d("PFDEBUG", "NOPE", "h")
    d("PFDEBUG", "x" * 300 + "\r\nz", "h")
    d("PFDEBUG", "encoding", "h", "extra")
    d("PFDEBUG", "GETREG", "h", "extra")
    d("PFDEBUG", "ENCODING", "h")
    d("PFDEBUG", "DECODE", "h")
    d("PFDEBUG", "TODENSE", "h")
    same(d, "h")
    d("PFDEBUG", "TODENSE", "h")
    d("PFDEBUG", "ENCODING", "h")
    d("PFDEBUG", "DECODE", "h")
    d("PFADD", "g", "q")
    d("PFDEBUG", "GETREG", "g")
    same(d, "g")
    d("PFDEBUG", "GETREG", "h")
    d("SET", "s", "xx")
    d("PFDEBUG", "ENCODING", "s")
    d("RPUSH", "l", "a")
    d("PFDEBUG", "DECODE", "l")
    for name, v in sorted(CORRUPT.items()):
        d("SET", "c", v)
        d("PFDEBUG", "DECODE", "c")
        d("PFDEBUG", "ENCODING", "c")
        d("PFDEBUG", "TODENSE", "c")
        d("GET", "c")
    d("SET", "c", hll_sparse([0x80, 0x81, 0x3F] + xzero(300) + [0x41]))
    d("PFDEBUG", "DECODE", "c")
    d("SET", "c", hll_sparse([]))
    d("PFDEBUG", "DECODE", "c")
    a = d.tc.execute_command("COMMAND", "INFO", "pfdebug")[0]
    b = d.rs.execute_command("COMMAND", "INFO", "pfdebug")[0]
    assert a[:2] == b[:2] and a[3:6] == b[3:6], (a, b)


def test_pfselftest(d):
    d("PFSELFTEST")
    d("PFSELFTEST", "x")
    a = d.tc.execute_command("COMMAND", "INFO", "pfselftest")[0]
    b = d.rs.execute_command("COMMAND", "INFO", "pfselftest")[0]
    assert a[:2] == b[:2] and a[3:6] == b[3:6], (a, b)


def test_concurrent_clients(d, tc_server):
    """Clients on both workers add to the same HLLs and merge them at once: the registers
    end up as the union (the register maximum does not depend on order)."""
    import threading
    rng = random.Random(31)
    parts = [elements(rng, 3000, "c%d-" % t) for t in range(4)]
    errors = []

    def work(els):
        try:
            c = tc_server.client()
            for i in range(0, len(els), 50):
                c.execute_command("PFADD", "h", *els[i:i + 50])
                c.execute_command("PFADD", "h%d" % (i % 3), *els[i:i + 50])
                c.execute_command("PFMERGE", "m", "h", "h0", "h1")
                c.execute_command("PFCOUNT", "h")
                c.execute_command("PFCOUNT", "h", "h2")
            c.connection_pool.disconnect()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for p in parts:
        d.rs.execute_command("PFADD", "h", *p)
    d.tc.execute_command("PFMERGE", "m", "h")
    d.rs.execute_command("PFMERGE", "m", "h")
    d("PFDEBUG", "GETREG", "h")
    d("PFCOUNT", "h")
    d("PFDEBUG", "GETREG", "m")
    d("PFCOUNT", "m")


def test_value_held_by_a_slow_reader(d, tc_server):
    """A large sparse value being sent to a client that does not read (the reply references
    it) is copied, not changed under the reader: PFCOUNT's cache and PFADD still match Redis
    and the stuck reader gets the old bytes."""
    v = hll_sparse([0x00] * 16384, invalid=True)  # 16400 bytes: a refcounted value
    d("SET", "big", v)
    sock = socket.create_connection(("127.0.0.1", tc_server.port))
    n = 1500  # 24 MB of replies: more than the socket buffers take
    sock.sendall(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * n)
    time.sleep(0.2)
    seen = [v]
    d("PFCOUNT", "big")
    seen.append(same(d, "big"))
    d("PFADD", "big", "a", "b")
    seen.append(same(d, "big"))
    d("PFCOUNT", "big")
    seen.append(same(d, "big"))
    got = bytearray()
    sock.settimeout(10)
    replies = []
    while len(replies) < n:
        chunk = sock.recv(1 << 20)
        assert chunk
        got += chunk
        while True:
            end = got.find(b"\r\n")
            if end < 0:
                break
            size = int(got[1:end])
            if len(got) < end + 2 + size + 2:
                break
            replies.append(bytes(got[end + 2:end + 2 + size]))
            del got[:end + 2 + size + 2]
    sock.close()
    # each GET saw a whole value, old ones first (the values are never changed under it)
    order = [seen.index(x) for x in replies]
    assert order == sorted(order) and order[0] == 0, order[:5]
