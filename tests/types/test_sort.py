"""SORT and SORT_RO: every option compared with Debian's redis-server (fixed cases and a
fixed-seed random differential), RESP3, transactions, WATCH, BLPOP wake-up by STORE, and a
concurrency stress with writers changing the pattern keys while SORT reads them."""
import random
import socket
import threading
import time

import redis

ERR_SCORE = "ERR One or more scores can't be converted into double"


def test_numeric_and_alpha(d):
    d("RPUSH", "l", 3, 1, 2, "", " 5", "0x10", "-inf", "1e3", "1.0", "01", "+1", "1")
    d("SORT", "l")
    d("SORT", "l", "DESC")
    d("SORT", "l", "ASC")
    d("SORT", "l", "ALPHA")
    d("SORT", "l", "ALPHA", "DESC")
    d("SORT_RO", "l")
    d("SORT_RO", "l", "alpha", "desc", "asc")
    d("RPUSH", "u", "b", "a\x00z", "a\x00b", "A", "ä", "a", "", "b")
    d("SORT", "u", "ALPHA")
    d("SORT", "u", "ALPHA", "DESC")
    d("SORT", "u", "ALPHA", "STORE", "ud")
    d("LRANGE", "ud", 0, -1)
    d("SADD", "s", 10, -3, 7, "2.5", "1e2")
    d("SORT", "s")
    d("SORT", "s", "DESC", "ALPHA")
    d("ZADD", "z", 1, "b", 2, "a", 3, "10", 4, "9")
    d("SORT", "z", "ALPHA")
    d("SORT", "z", "BY", "nosort")
    d("SORT", "z")
    d("SORT", "nokey")
    d("SORT", "nokey", "ALPHA", "LIMIT", 0, 10)


def test_score_conversion(d):
    d("RPUSH", "ok", "inf", "-infinity", " 7", "1e-300", "0x1p3", "", "0x1.8p1", "\t-2")
    d("SORT", "ok")
    d("MSET", "w_1", "x", "w_2", "3")
    d("RPUSH", "p", 1, 2)
    d("SORT", "p", "BY", "w_*")
    d("SORT", "p", "BY", "w_*", "ALPHA")
    d("SORT", "p", "BY", "w_*", "LIMIT", 0, 1)
    # Redis does not clear errno before strtod, so after an ERANGE (last two values) every
    # later conversion on that connection fails in Redis: those come last here
    for i, v in enumerate(["abc", "nan", "1 ", "5x", "0x", "--1", "1e400", "1e-400"]):
        d("RPUSH", "b%d" % i, 1, v)
        d("SORT", "b%d" % i)
        d("SORT", "b%d" % i, "ALPHA")
        d("SORT", "b%d" % i, "BY", "nosort")
        d("SORT", "b%d" % i, "STORE", "dst")
    d("EXISTS", "dst")


def test_limit(d):
    d("RPUSH", "l", *range(10, 0, -1))
    d("ZADD", "z", *[x for i in range(10) for x in (i, "m%d" % i)])
    d("SADD", "s", *range(10))
    big, small = "9223372036854775807", "-9223372036854775808"
    for key in ("l", "z", "s", "nokey"):
        for off, cnt in ((0, 3), (2, 3), (8, 5), (9, 1), (10, 1), (11, 0), (-5, 2), (2, -1),
                         (2, 0), (-1, -1), (big, big), (5, big), (small, small), (small, 3),
                         (big, -1), (3, small)):
            d("SORT", key, "LIMIT", off, cnt, "ALPHA")
            d("SORT", key, "LIMIT", off, cnt, "DESC")
            if key != "s":
                d("SORT", key, "BY", "nosort", "LIMIT", off, cnt)
                d("SORT", key, "BY", "nosort", "LIMIT", off, cnt, "DESC")
            d("SORT", key, "LIMIT", off, cnt, "STORE", "dst")
            d("LRANGE", "dst", 0, -1)
    d("SORT", "l", "LIMIT", "9223372036854775808", 1)
    d("SORT", "l", "LIMIT", 1, "x")
    d("SORT", "l", "LIMIT", "1.5", 1)
    d("SORT", "l", "LIMIT", 1, 2, "LIMIT", 3, 4)


def test_errors(d):
    d("SET", "str", "v")
    d("HSET", "h", "f", "v")
    d("RPUSH", "l", 1)
    for key in ("str", "h"):
        d("SORT", key)
        d("SORT_RO", key)
        d("SORT", key, "STORE", "dst")
        d("SORT", key, "foo")  # syntax first
        d("SORT", key, "LIMIT", "a", 1)
    for args in (("foo",), ("LIMIT",), ("LIMIT", 1), ("BY",), ("GET",), ("STORE",),
                 ("ALPHA", "x"), ("GET", "#", "GET"), ("BY", "x", "BY")):
        d("SORT", "l", *args)
        d("SORT", "nokey", *args)
    d("SORT_RO", "l", "STORE", "dst")
    d("SORT_RO", "l", "store")
    d("SORT")
    d("SORT_RO")
    d("EXISTS", "dst")


def test_by_get_patterns(d):
    d("RPUSH", "l", 3, 1, 2, 4, "x:y")
    d("MSET", "w_1", 30, "w_2", 20, "w_3", 10, "o_1", "one", "o_2", "two", "o_x:y", "xy",
      "w_x:y", "-5")
    d("HSET", "h_1", "f", 7, "g", "big")
    d("HSET", "h_2", "f", "-2")
    d("HSET", "h_4", "f", "1.5e1", "g", "z")
    d("RPUSH", "o_3", "a list")
    d("SADD", "h_3", "a set")
    for opts in ((), ("DESC",), ("ALPHA",), ("ALPHA", "DESC"), ("LIMIT", 1, 3)):
        d("SORT", "l", "BY", "w_*", *opts)
        d("SORT", "l", "BY", "h_*->f", *opts)
        d("SORT", "l", "BY", "h_*->g", "ALPHA", *opts)
        d("SORT", "l", "BY", "w_*", "GET", "#", "GET", "o_*", "GET", "h_*->f", *opts)
        d("SORT", "l", "BY", "nosort", "GET", "o_*", "GET", "h_*->g", *opts)
        d("SORT", "l", "BY", "nokey_*", "GET", "#", *opts)
    d("SORT", "l", "GET", "o_*", "GET", "h_*->", "GET", "h_*->x->y", "GET", "nostar",
      "GET", "#x", "GET", "*", "GET", "w_*")
    d("SORT", "l", "BY", "#")
    d("SORT", "l", "BY", "*", "GET", "**")
    d("SORT", "l", "BY", "->f*", "GET", "h_->*")
    d("SET", "a->b", "direct")
    d("SET", "1->", "arrow at end")
    d("SORT", "l", "GET", "*->", "GET", "a->*")
    d("SORT", "l", "BY", "w_*", "GET", "o_*", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    d("SORT", "l", "BY", "w_*", "GET", "h_*->g", "GET", "#", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)


def test_ties(d):
    # equal scores: compared as binary strings; ALPHA BY ties keep the list order (stable)
    d("RPUSH", "l", "b", "a", "c", "d", "e", "f")
    d("MSET", "w_a", 1, "w_b", 1, "w_c", 0, "w_f", "1.0", "s_a", "k", "s_b", "k", "s_d", "j")
    d("SORT", "l", "BY", "w_*")
    d("SORT", "l", "BY", "w_*", "DESC")
    d("SORT", "l", "BY", "w_*", "LIMIT", 1, 3)
    d("SORT", "l", "BY", "s_*", "ALPHA")
    d("SORT", "l", "BY", "s_*", "ALPHA", "DESC")
    d("SORT", "l", "BY", "s_*", "ALPHA", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    d("RPUSH", "n", "1.0", "1", "01", "+1", "1e0", "2", "0.5")
    d("SORT", "n")
    d("SORT", "n", "DESC")


def test_nosort(d):
    d("RPUSH", "l", 5, 3, 9, 1)
    d("SORT", "l", "BY", "nosort")
    d("SORT", "l", "BY", "nosort", "DESC")
    d("SORT", "l", "BY", "nosort", "ALPHA", "GET", "#")
    d("ZADD", "z", 3, "a", 1, "b", 2, "c", 2, "d")
    d("SORT", "z", "BY", "nosort")
    d("SORT", "z", "BY", "nosort", "DESC")
    d("SORT", "z", "BY", "nosort", "DESC", "LIMIT", 1, 2)
    d("SORT", "z", "BY", "nosort", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    # a set: Redis's order is its hash order, but STORE sorts it ALPHA
    d("SADD", "s", "b", "a", "c", 10, 9, "B")
    d("SORT", "s", "BY", "nosort", unordered=True)
    d("SORT", "s", "BY", "nosort", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    d("SORT", "s", "BY", "nosort", "DESC", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    d("SORT", "s", "BY", "nosort", "LIMIT", 1, 2, "GET", "x_*", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    d("SADD", "is", 5, 3, 9)
    d("SORT", "is", "BY", "nosort")  # intset: sorted in both


def test_store(d):
    d("RPUSH", "l", 3, 1, 2)
    d("SET", "dst", "string")
    d("EXPIRE", "dst", 100)
    d("SORT", "l", "STORE", "dst")
    d("TYPE", "dst")
    d("TTL", "dst")
    d("LRANGE", "dst", 0, -1)
    d("SORT", "l", "STORE", "l", "DESC")
    d("LRANGE", "l", 0, -1)
    d("SORT", "l", "LIMIT", 5, 5, "STORE", "dst")
    d("EXISTS", "dst")
    d("SORT", "l", "STORE", "a", "STORE", "b")
    d("EXISTS", "a", "b")
    d("SORT", "l", "GET", "nokey*", "GET", "#", "STORE", "dst")
    d("LRANGE", "dst", 0, -1)
    d("SORT", "l", "BY", "nosort", "LIMIT", 0, 0, "STORE", "dst")
    d("EXISTS", "dst")


def test_random_diff(d):
    rnd = random.Random(4242)
    words = ["a", "b", "B", "aa", "ab", "", "z", "10", "9", "-1", "1.5", "0", "x y"]
    keys = []
    for i in range(40):
        kind = rnd.choice(["nlist", "slist", "nset", "sset", "zset", "zsets"])
        key = "k%d" % i
        n = rnd.randint(0, 12)
        nums = [str(rnd.choice([rnd.randint(-20, 20), round(rnd.uniform(-50, 50), 2)]))
                for _ in range(n)]
        strs = [rnd.choice(words) + str(rnd.randint(0, 3)) for _ in range(n)]
        if n == 0:
            pass
        elif kind == "nlist":
            d("RPUSH", key, *nums)
        elif kind == "slist":
            d("RPUSH", key, *strs)
        elif kind == "nset":
            d("SADD", key, *nums)
        elif kind == "sset":
            d("SADD", key, *strs)
        elif kind in ("zset", "zsets"):
            el = nums if kind == "zset" else strs
            d("ZADD", key, *[x for e in el for x in (rnd.randint(0, 5), e)])
        keys.append((key, kind))
    # pattern keys for the elements: numbers, strings, hashes; some missing
    for e in set(words) | {str(i) for i in range(-20, 21)}:
        for j in range(4):
            el = e + str(j) if e in words else e
            if rnd.random() < 0.8:
                d("SET", "w_" + el, rnd.randint(-5, 5))
            if rnd.random() < 0.7:
                d("SET", "o_" + el, rnd.choice(words))
            if rnd.random() < 0.7:
                d("HSET", "h_" + el, "f", rnd.randint(0, 9), "g", rnd.choice(words))
    for _ in range(600):
        key, kind = rnd.choice(keys)
        args = ["SORT", key]
        by = rnd.choice([None, None, "w_*", "h_*->f", "o_*", "nosort", "h_*->g"])
        alpha = rnd.random() < 0.4 or kind in ("slist", "sset", "zsets")
        limit = rnd.random() < 0.4
        # ALPHA BY values tie; Redis orders ties by its (unstable) quicksort under LIMIT and
        # loads sets and zsets in hash order: compare ties only for lists without LIMIT
        if by in ("o_*", "h_*->g") and not alpha:
            by = None
        if alpha and by not in (None, "nosort") and (limit or kind not in ("nlist", "slist")):
            by = None
        if by:
            args += ["BY", by]
        if limit:
            args += ["LIMIT", rnd.randint(-2, 8), rnd.randint(-2, 8)]
        for _ in range(rnd.choice([0, 0, 1, 2, 3])):
            args += ["GET", rnd.choice(["#", "o_*", "h_*->g", "w_*", "nokey_*"])]
        if rnd.random() < 0.5:
            args.append(rnd.choice(["ASC", "DESC"]))
        if alpha:
            args.append("ALPHA")
        unordered = by == "nosort" and kind in ("nset", "sset")
        if rnd.random() < 0.25 and not unordered:
            args += ["STORE", "dst"]
            d(*args)
            d("LRANGE", "dst", 0, -1)
        elif unordered and limit:
            d("SORT", key, "BY", "nosort", unordered=True)  # which subset is hash order
        else:
            d(*args, unordered=unordered)


class Raw:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        time.sleep(0.05)
        self.s.settimeout(0.5)
        try:
            while True:
                chunk = self.s.recv(65536)
                if not chunk:
                    break
                self.buf += chunk
                if chunk.endswith(b"\r\n"):
                    break
        except socket.timeout:
            pass
        out, self.buf = self.buf, b""
        return out


def test_resp3(tc_server, redis_server, d):
    d("RPUSH", "l", 2, 1)
    d("SET", "o_1", "one")
    d("HSET", "h_2", "f", "v")
    a, b = Raw(tc_server.port), Raw(redis_server.port)
    for x in (a, b):
        x.send("HELLO", 3)
    for cmd in (("SORT", "l", "GET", "#", "GET", "o_*", "GET", "h_*->f"),
                ("SORT_RO", "l", "BY", "nokey*", "GET", "x*"),
                ("SORT", "nokey"), ("SORT", "l", "STORE", "dst"),
                ("SORT", "l", "BY", "o_*"), ("SORT_RO", "l", "STORE", "x")):
        assert a.send(*cmd) == b.send(*cmd), cmd


def test_multi_and_watch(tc_server, redis_server, d):
    for srv in (tc_server, redis_server):
        c1, c2 = srv.client(), srv.client()
        c1.rpush("src", 3, 1, 2)
        c1.mset({"w_1": 3, "w_2": 2, "w_3": 1, "o_1": "bad"})
        c1.execute_command("WATCH", "dst")
        c2.execute_command("SORT", "src", "STORE", "dst")
        c1.execute_command("MULTI")
        c1.execute_command("SET", "x", 1)
        assert c1.execute_command("EXEC") is None, srv.kind
        # a SORT that stores elsewhere leaves a WATCHed destination alone
        c1.execute_command("WATCH", "dst")
        c2.execute_command("SORT", "src", "STORE", "other")
        c1.execute_command("MULTI")
        c1.execute_command("SET", "x", 2)
        assert c1.execute_command("EXEC") == [b"OK"], srv.kind
        c1.execute_command("MULTI")
        c1.execute_command("SORT", "src", "BY", "w_*", "GET", "w_*", "STORE", "d2")
        c1.execute_command("SORT_RO", "src", "BY", "w_*")
        c1.execute_command("SORT", "src", "BY", "o_*")
        c1.execute_command("LRANGE", "d2", 0, -1)
        res = c1.execute_command("EXEC")
        assert res[:2] == [3, [b"3", b"2", b"1"]], (srv.kind, res)
        assert isinstance(res[2], redis.exceptions.ResponseError)
        assert res[3] == [b"1", b"2", b"3"]
        c1.connection_pool.disconnect()
        c2.connection_pool.disconnect()
    d("LRANGE", "dst", 0, -1)


def test_blpop_woken_by_store(tc_server):
    c1, c2 = tc_server.client(raw=False), tc_server.client()
    c1.flushall()
    c1.rpush("src", 5, 4, 6)
    out = []
    t = threading.Thread(target=lambda: out.append(c2.execute_command("BLPOP", "dst", 5)))
    t.start()
    deadline = time.time() + 5
    while c1.info("clients")["blocked_clients"] != 1 and time.time() < deadline:
        time.sleep(0.01)
    assert c1.execute_command("SORT", "src", "STORE", "dst") == 3
    t.join(5)
    assert out == [[b"dst", b"4"]]
    assert c1.lrange("dst", 0, -1) == [b"5", b"6"]
    c1.connection_pool.disconnect()
    c2.connection_pool.disconnect()


def test_concurrent_pattern_writes(tc_server):
    """Sorters read pattern keys (and the source) that writers keep replacing, deleting and
    retyping: every reply must be well formed and the server must survive."""
    setup = tc_server.client()
    setup.flushall()
    setup.rpush("src", *range(50))
    stop = time.time() + 2.0
    errors = []

    def writer(seed):
        rnd = random.Random(seed)
        c = tc_server.client()
        while time.time() < stop:
            i = rnd.randrange(50)
            op = rnd.randrange(8)
            if op == 0:
                c.set("w_%d" % i, rnd.randint(-100, 100))
            elif op == 1:
                c.set("o_%d" % i, "x" * rnd.randint(0, 20000))
            elif op == 2:
                c.hset("h_%d" % i, "f", rnd.randint(0, 9))
            elif op == 3:
                c.delete("w_%d" % i, "o_%d" % i, "h_%d" % i)
            elif op == 4:
                c.delete("o_%d" % i)
                try:
                    c.rpush("o_%d" % i, "list")
                except redis.exceptions.ResponseError:
                    pass  # another writer made it a string again
            elif op == 5:
                c.rpush("src", rnd.randrange(50))
                c.ltrim("src", -60, -1)
            elif op == 6:
                c.set("w_%d" % i, "notanumber")
            else:
                c.expire("w_%d" % i, 0)
        c.connection_pool.disconnect()

    def sorter(seed):
        rnd = random.Random(seed)
        c = tc_server.client()
        n = 0
        while time.time() < stop:
            gets = rnd.choice([["#"], ["o_*", "h_*->f"], ["w_*", "#", "o_*"]])
            args = ["SORT", "src", "BY", rnd.choice(["w_*", "h_*->f", "nosort"])]
            for g in gets:
                args += ["GET", g]
            if rnd.random() < 0.3:
                args.append("ALPHA")
            if rnd.random() < 0.3:
                args += ["STORE", "dst%d" % seed]
            try:
                rep = c.execute_command(*args)
            except redis.exceptions.ResponseError as e:
                if str(e) != ERR_SCORE:
                    errors.append(str(e))
                continue
            if "STORE" in args:
                if not isinstance(rep, int):
                    errors.append(rep)
            elif not (isinstance(rep, list) and len(rep) % len(gets) == 0
                      and all(v is None or isinstance(v, bytes) for v in rep)):
                errors.append(rep)
            n += 1
        c.connection_pool.disconnect()
        if n == 0:
            errors.append("sorter %d made no progress" % seed)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=sorter, args=(10 + i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert setup.ping()
    setup.connection_pool.disconnect()


# ---- LCS ----

def test_lcs_fixed(d):
    d("SET", "a", "ohmytext")
    d("SET", "b", "mynewtext")
    d("SET", "c", "abcabcabc")
    d("SET", "e", "cbacbacba")
    d("SET", "bin", b"a\x00b\xffc\x00")
    d("SET", "bin2", b"\x00\xff\x00c")
    d("SET", "n", 12345)
    d("SET", "m", 2340)
    for x, y in (("a", "b"), ("b", "a"), ("c", "e"), ("e", "c"), ("a", "a"), ("bin", "bin2"),
                 ("n", "m"), ("a", "nokey"), ("nokey", "nokey2"), ("nokey", "a")):
        d("LCS", x, y)
        d("LCS", x, y, "LEN")
        d("LCS", x, y, "IDX")
        d("LCS", x, y, "idx", "withmatchlen")
        d("LCS", x, y, "IDX", "MINMATCHLEN", 2, "WITHMATCHLEN")
        d("LCS", x, y, "MINMATCHLEN", 4, "IDX", "MINMATCHLEN", -3)
        d("LCS", x, y, "len", "minmatchlen", 100, "withmatchlen")


def test_lcs_errors(d):
    d("SET", "a", "abc")
    d("RPUSH", "l", "abc")
    d("HSET", "h", "f", "v")
    for args in (("a", "l"), ("l", "a"), ("h", "nokey"), ("l", "a", "foo"), ("a", "l", "IDX")):
        d("LCS", *args)
    for opts in (("IDX", "LEN"), ("LEN", "IDX"), ("foo",), ("MINMATCHLEN",),
                 ("MINMATCHLEN", "x"), ("MINMATCHLEN", "9223372036854775808"),
                 ("IDX", "MINMATCHLEN", 1, "LEN"), ("MINMATCHLEN", "x", "IDX", "LEN")):
        d("LCS", "a", "nokey", *opts)
    d("LCS", "a")
    d("LCS")


def test_lcs_random(d):
    rnd = random.Random(777)
    for i in range(60):
        alpha = rnd.choice(["ab", "abc", "acgt", "abcdefghij"])
        x = "".join(rnd.choice(alpha) for _ in range(rnd.randint(0, 40)))
        y = "".join(rnd.choice(alpha) for _ in range(rnd.randint(0, 40)))
        if rnd.random() < 0.3:  # a shared block
            blk = "".join(rnd.choice(alpha) for _ in range(rnd.randint(3, 12)))
            x, y = x[:10] + blk + x[10:], y[:5] + blk + y[5:]
        d("SET", "x", x)
        d("SET", "y", y)
        d("LCS", "x", "y")
        d("LCS", "x", "y", "LEN")
        d("LCS", "x", "y", "IDX", "MINMATCHLEN", rnd.randint(0, 4),
          *(["WITHMATCHLEN"] if rnd.random() < 0.5 else []))


def test_lcs_table_limit(d, tc_server, redis_server):
    # the DP table, (len1+1) * (len2+1) 4-byte cells, may not exceed proto-max-bulk-len
    d("CONFIG", "SET", "proto-max-bulk-len", 1048576)
    try:
        d("SET", "s511", "a" * 511)
        d("SET", "s512", "a" * 511 + "b")
        d("SET", "t512", "b" + "a" * 511)
        d("LCS", "s511", "s511", "LEN")  # exactly 1 MiB: allowed
        d("LCS", "s512", "s511", "LEN")
        d("LCS", "s512", "t512")
        d("LCS", "s512", "t512", "IDX", "LEN")  # option errors come first
        d("SET", "big", "x" * 300000)
        d("LCS", "big", "nokey")  # 300001 cells
        d("LCS", "big", "s511", "IDX")
    finally:
        d("CONFIG", "SET", "proto-max-bulk-len", 536870912)


def test_lcs_resp3_and_multi(tc_server, redis_server, d):
    d("SET", "a", "ohmytext")
    d("SET", "b", "mynewtext")
    a, b = Raw(tc_server.port), Raw(redis_server.port)
    for x in (a, b):
        x.send("HELLO", 3)
    for cmd in (("LCS", "a", "b", "IDX", "WITHMATCHLEN"), ("LCS", "a", "b"),
                ("LCS", "a", "b", "LEN"), ("LCS", "nokey", "b", "IDX")):
        assert a.send(*cmd) == b.send(*cmd), cmd
    for x in (a, b):
        x.send("MULTI")
        x.send("LCS", "a", "b", "IDX")
        x.send("SET", "b", "ohmy")
        x.send("LCS", "a", "b")
    assert a.send("EXEC") == b.send("EXEC")


def test_command_info(d, tc_server, redis_server):
    for name in ("sort", "sort_ro", "lcs"):
        a = call_raw(tc_server, "COMMAND", "INFO", name)[0][:6]
        b = call_raw(redis_server, "COMMAND", "INFO", name)[0][:6]
        assert a == b, (a, b)


def call_raw(srv, *args):
    c = srv.client()
    try:
        return c.execute_command(*args)
    finally:
        c.connection_pool.disconnect()


def test_hostile_arguments(tc_server):
    """Random option soups for SORT, SORT_RO and LCS: any reply, never a crash."""
    rnd = random.Random(99)
    c = tc_server.client()
    c.flushall()
    c.rpush("l", *range(30))
    c.sadd("s", *["m%d" % i for i in range(30)])
    c.zadd("z", {"m%d" % i: i for i in range(30)})
    c.set("a", "xyzzy" * 20)
    c.hset("h_1", "f", "1")
    words = ["BY", "GET", "LIMIT", "STORE", "ALPHA", "ASC", "DESC", "#", "*", "**", "->",
             "*->", "h_*->f", "nosort", "-1", "0", "9223372036854775807",
             "-9223372036854775808", "99999999999999999999", "", "\x00", "*\x00*", "#\x00",
             "IDX", "LEN", "MINMATCHLEN", "WITHMATCHLEN", "l", "s", "z", "a", "h_1"]
    for _ in range(1500):
        cmd = rnd.choice(["SORT", "SORT_RO", "LCS"])
        args = [cmd, rnd.choice(["l", "s", "z", "a", "h_1", "nokey"])]
        if cmd == "LCS":
            args.append(rnd.choice(["a", "l", "nokey", "h_1"]))
        args += [rnd.choice(words) for _ in range(rnd.randint(0, 8))]
        try:
            c.execute_command(*args)
        except redis.exceptions.ResponseError:
            pass
    assert c.ping()
    c.connection_pool.disconnect()
