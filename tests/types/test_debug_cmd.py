"""DEBUG subcommands test tools use, against redis-server 7.0 (started with
enable-debug-command yes): POPULATE (keys, values, padding, existing keys kept, errors), ERROR,
LOG, SLEEP, SET-ACTIVE-EXPIRE (0 stops active expiry: an expired key stays counted until
touched; 1 resumes it)."""
import time

import pytest

import tcharness
from conftest import CLIENT, call


@pytest.fixture(scope="module")
def pair():
    tc = tcharness.start_twincache("--hz", "50", "--enable-debug-command", "yes", check=True,
                                   client_defaults=CLIENT)
    rs = tcharness.start_redis("--enable-debug-command", "yes", "--hz", "50",
                               client_defaults=CLIENT)
    yield tc.client(), rs.client()
    tc.stop()
    rs.stop()


def both(pair, *args):
    return [call(c, *args) for c in pair]


def test_populate_error_log_sleep(pair):
    both(pair, "FLUSHALL")
    for args in (("POPULATE", 3), ("POPULATE", 2, "pfx", 10), ("POPULATE", 2, "key", 5),
                 ("POPULATE", "x"), ("POPULATE", -1), ("POPULATE", 1, "p", "x"),
                 ("ERROR", "FOO bar"), ("LOG", "hello"), ("SLEEP", 0), ("SLEEP", "0.01"),
                 ("SET-ACTIVE-EXPIRE", 1), ("NOSUCH",)):
        a, b = both(pair, "DEBUG", *args)
        assert a == b, args
    for args in (("DBSIZE",), ("GET", "key:0"), ("GET", "key:1"), ("GET", "pfx:1"),
                 ("GET", "key:2")):
        a, b = both(pair, *args)
        assert a == b, args


def test_set_active_expire(pair):
    both(pair, "FLUSHALL")
    both(pair, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
    both(pair, "SET", "e", "v", "PX", 50)
    time.sleep(0.5)
    assert both(pair, "DBSIZE") == [1, 1]  # not expired in the background
    both(pair, "DEBUG", "SET-ACTIVE-EXPIRE", 1)
    deadline = time.time() + 5
    while time.time() < deadline and both(pair, "DBSIZE") != [0, 0]:
        time.sleep(0.05)
    assert both(pair, "DBSIZE") == [0, 0]


def raw_replies(srv, resp3, commands):
    """The raw bytes srv answers to commands (after HELLO 3 when resp3)."""
    import socket
    s = socket.create_connection((srv.host, srv.port), timeout=5)
    pre = [("HELLO", "3")] if resp3 else []
    out = b""
    for cmd in pre + list(commands) + [("PING", "END-OF-TEST")]:
        s.sendall(b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode())
                                                     for a in cmd))
    while not out.endswith(b"END-OF-TEST\r\n") and not out.endswith(b"+END-OF-TEST\r\n"):
        d = s.recv(65536)
        if not d:
            break
        out += d
    s.close()
    if resp3:
        out = out[out.index(b"\r\n", out.index(b"proto")) + 2:]  # after HELLO's map
        out = out[out.index(b"modules") + len(b"modules") + 2:]
        out = out[out.index(b"\r\n") + 2:]
    return out


@pytest.fixture(scope="module")
def servers():
    tc = tcharness.start_twincache("--hz", "50", "--enable-debug-command", "yes", check=True,
                                   client_defaults=CLIENT)
    rs = tcharness.start_redis("--enable-debug-command", "yes", "--hz", "50",
                               client_defaults=CLIENT)
    yield tc, rs
    tc.stop()
    rs.stop()


def test_protocol_every_type(servers):
    """DEBUG PROTOCOL <type>: the bytes of each RESP2 and RESP3 reply, as redis-server."""
    types = ["string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib",
             "push", "verbatim", "true", "false", "nope"]
    cmds = [("DEBUG", "PROTOCOL", t) for t in types]
    for resp3 in (False, True):
        got = raw_replies(servers[0], resp3, cmds)
        want = raw_replies(servers[1], resp3, cmds)
        assert b"Hello World" in want and (b"#t" in want) == resp3
        assert got == want, resp3


def test_object(pair):
    """DEBUG OBJECT: Redis's fields, with the same encoding, refcount and serialized length."""
    both(pair, "FLUSHALL")
    both(pair, "SET", "s", "v")
    both(pair, "SET", "n", "123")
    both(pair, "RPUSH", "l", "a", "b", "c")
    both(pair, "HSET", "h", "f", "v")
    for key in ("s", "n", "l", "h"):
        a, b = both(pair, "DEBUG", "OBJECT", key)

        def fields(line):
            return dict(f.split(":", 1) for f in line.decode().split(" ")[2:])
        fa, fb = fields(a), fields(b)
        assert sorted(fa) == sorted(fb), key
        for f in ("refcount", "encoding", "serializedlength", "ql_nodes", "ql_avg_node",
                  "ql_listpack_max", "ql_compressed"):
            assert fa.get(f) == fb.get(f), (key, f)
    assert both(pair, "DEBUG", "OBJECT", "nokey")[0] == both(pair, "DEBUG", "OBJECT", "nokey")[1]


def test_digest(pair):
    """DEBUG DIGEST / DIGEST-VALUE: zeros for nothing; a change changes it and undoing it brings
    it back; equal contents built in other orders (hashtable-encoded sets and hashes) give equal
    value digests; a RELOAD keeps the digest. Checked on both servers (the hex is each
    server's own)."""
    for c in pair:
        call(c, "FLUSHALL")
        assert call(c, "DEBUG", "DIGEST") == b"0" * 40
        assert call(c, "DEBUG", "DIGEST-VALUE", "none") == [b"0" * 40]
        call(c, "SET", "k", "v")
        d1 = call(c, "DEBUG", "DIGEST")
        call(c, "SET", "k", "w")
        assert call(c, "DEBUG", "DIGEST") != d1
        call(c, "SET", "k", "v")
        assert call(c, "DEBUG", "DIGEST") == d1
        n = 300
        call(c, "SADD", "s1", *["m%d" % i for i in range(n)])
        call(c, "SADD", "s2", *["m%d" % i for i in reversed(range(n))])
        call(c, "HSET", "h1", *sum([["f%d" % i, "v%d" % i] for i in range(n)], []))
        call(c, "HSET", "h2", *sum([["f%d" % i, "v%d" % i] for i in reversed(range(n))], []))
        call(c, "ZADD", "z", 1, "a", 2, "b")
        call(c, "XADD", "x", "1-1", "f", "v")
        v = call(c, "DEBUG", "DIGEST-VALUE", "s1", "s2", "h1", "h2", "k")
        assert v[0] == v[1] and v[2] == v[3] and v[0] != v[2] and len(set(v)) == 3
        call(c, "HSET", "h2", "f0", "changed")
        assert call(c, "DEBUG", "DIGEST-VALUE", "h2")[0] != v[2]
        call(c, "HSET", "h2", "f0", "v0")
        call(c, "EXPIRE", "z", 1000)
        before = call(c, "DEBUG", "DIGEST")
        assert call(c, "DEBUG", "RELOAD") == b"OK"
        assert call(c, "DEBUG", "DIGEST") == before


def test_reload(pair):
    """DEBUG RELOAD and its options: errors, NOFLUSH over existing keys, MERGE, NOSAVE, and
    functions kept across a reload."""
    both(pair, "FLUSHALL")
    both(pair, "FUNCTION", "FLUSH")
    lib = "#!lua name=dbglib\nredis.register_function('dbgf', function() return 7 end)"
    assert both(pair, "FUNCTION", "LOAD", lib)[0] == b"dbglib"
    both(pair, "SET", "a", "1")
    both(pair, "RPUSH", "l", "x", "y")
    for args in (("RELOAD",), ("GET", "a"), ("LRANGE", "l", 0, -1), ("FCALL", "dbgf", 0),
                 ("RELOAD", "NOFLUSH"), ("RELOAD", "NOFLUSH", "MERGE"), ("GET", "a"),
                 ("SET", "b", "2"), ("RELOAD", "NOSAVE"), ("GET", "b"), ("DBSIZE",),
                 ("FCALL", "dbgf", 0), ("RELOAD", "BAD"), ("RELOAD", "MERGE")):
        a, b = both(pair, *(("DEBUG",) + args if args[0] == "RELOAD" else args))
        assert a == b, args
    both(pair, "FUNCTION", "FLUSH")


@pytest.fixture(scope="module")
def defaults():
    """Both servers with their default settings (DEBUG and MODULE LOAD refused)."""
    tc = tcharness.start_twincache(check=True, client_defaults=CLIENT)
    rs = tcharness.start_redis(client_defaults=CLIENT)
    yield tc.client(), rs.client()
    tc.stop()
    rs.stop()


def test_refused_by_default_module_cluster(defaults):
    """enable-debug-command / enable-module-command no (the defaults), MODULE with no module,
    and the cluster commands of a server without cluster support: the same replies."""
    for args in (("DEBUG", "SLEEP", 0), ("DEBUG", "HELP"), ("DEBUG",), ("MODULE", "LIST"),
                 ("MODULE", "HELP"), ("MODULE", "LOAD", "/nonexistent.so"),
                 ("MODULE", "LOADEX", "/x.so", "ARGS", "a"), ("MODULE", "UNLOAD", "m"),
                 ("MODULE", "NOPE"), ("MODULE",), ("CONFIG", "GET", "enable-*-command"),
                 ("CONFIG", "SET", "enable-debug-command", "yes"),
                 ("CLUSTER", "INFO"), ("CLUSTER", "SLOTS"), ("CLUSTER", "KEYSLOT", "k"),
                 ("CLUSTER", "HELP"), ("CLUSTER", "NOPE"), ("CLUSTER",), ("READONLY",),
                 ("READWRITE",), ("ASKING",), ("RESTORE-ASKING", "k", 0, "bad"),
                 ("COMMAND", "INFO", "cluster", "readonly", "asking", "restore-asking"),
                 ("COMMAND", "COUNT")):
        a, b = both(defaults, *args)
        if args[0] == "COMMAND" and args[1] == "COUNT":
            continue  # replication and ACL commands are still to come
        if args[0] == "COMMAND":
            a, b = [sorted(x, key=lambda e: e[0]) if isinstance(x, list) else x for x in (a, b)]
            # cluster subcommands: the same names, arities and flags
            a = [e[:8] + [sorted(s[:3] for s in e[9])] if len(e) > 9 else e[:8] for e in a]
            b = [e[:8] + [sorted(s[:3] for s in e[9])] if len(e) > 9 else e[:8] for e in b]
        if isinstance(a, list) and args[:2] == ("CONFIG", "GET"):
            a, b = sorted(zip(a[::2], a[1::2])), sorted(zip(b[::2], b[1::2]))
        assert a == b, args


def test_lolwut(defaults):
    """LOLWUT: the version line alone by default and for unknown versions; versions 5 and 6
    draw (art of one's own: only the shape is compared); argument errors as Redis."""
    for args in ((), ("VERSION", 4), ("VERSION", 7), ("foo",), ("VERSION", "x"),
                 ("VERSION", 5, "x"), ("VERSION", 6, 1, "y")):
        a, b = both(defaults, "LOLWUT", *args)
        assert a == b, args
    for args, tail in ((("VERSION", 5), b"Redis ver. 7.0"), (("VERSION", 5, 40, 4, 3), None),
                       (("VERSION", 6), None), (("VERSION", 6, 30, 8), None)):
        a, b = both(defaults, "LOLWUT", *args)
        la, lb = a.split(b"\n"), b.split(b"\n")
        assert la[-1] == lb[-1] == b"" and la[-2].endswith(lb[-2][-17:]), args
        if args[1] == 6:
            assert len(la) == len(lb), args  # rows + blank + credit lines
            assert la[0].count(b"\x1b[0m") == lb[0].count(b"\x1b[0m"), args  # columns
        else:
            assert len(la[0].decode()) == len(lb[0].decode()), args  # Braille columns


def test_role_without_replicas(defaults):
    """ROLE of a master with no replica (twincache has no replication yet), RESP2 and RESP3,
    and its COMMAND INFO, as redis-server."""
    for args in (("ROLE",), ("ROLE", "x"), ("COMMAND", "INFO", "role")):
        a, b = both(defaults, *args)
        assert a == b, args


def test_quicklist_packed_threshold(pair):
    """DEBUG QUICKLIST-PACKED-THRESHOLD: entries over it live alone in their chunk; list
    commands give the same results across plain and packed chunks; bad sizes refused."""
    both(pair, "FLUSHALL")
    for size in ("1b", "5b", "0"):
        assert both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", size) == [b"OK", b"OK"]
        both(pair, "DEL", "l")
        for ch in "abcd":
            both(pair, "LPUSH", "l", ch * 500)
        for ch in "efg":
            both(pair, "LINSERT", "l", "AFTER", "d" * 500, ch * 500)
        both(pair, "RPUSH", "l", "aa", "bb", "cc")
        both(pair, "LSET", "l", 0, "x" * 50001)
        both(pair, "LSET", "l", -1, "yy")
        a, b = both(pair, "LRANGE", "l", 0, -1)
        assert a == b and len(a) == 10
        a, b = both(pair, "LPOP", "l", 3)
        assert a == b
        a, b = both(pair, "LRANGE", "l", 0, -1)
        assert a == b
    for bad in ("5gb", "x", "-1"):
        a, b = both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", bad)
        assert a == b, bad
    both(pair, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", 0)


def _sleep_stops_everyone(port):
    """DEBUG SLEEP 0.6 on one connection, then a PING on six others (on twincache they spread
    over its workers): (seconds until the sleeper's +OK, seconds until each PING's reply), from
    the moment the PINGs were sent."""
    import socket
    sleeper = socket.create_connection(("127.0.0.1", port))
    others = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
    for s in others:  # connected and served once before the sleep
        s.sendall(b"PING\r\n")
        assert s.recv(64) == b"+PONG\r\n"
    sleeper.sendall(b"DEBUG SLEEP 0.6\r\n")
    time.sleep(0.1)
    t0 = time.monotonic()
    for s in others:
        s.sendall(b"PING\r\n")
    got = []
    for s in others:
        assert s.recv(64) == b"+PONG\r\n"
        got.append(time.monotonic() - t0)
    assert sleeper.recv(64) == b"+OK\r\n"
    for s in others + [sleeper]:
        s.close()
    return got


def test_sleep_stops_the_whole_server(pair):
    """Redis's DEBUG SLEEP stops the server: no other client is served until it ends (Redis's
    own tests use it to make a server look stuck, e.g. MIGRATE's timeout). twincache stops
    every worker, not only the one that runs it."""
    for c in pair:
        port = c.connection_pool.connection_kwargs["port"]
        waits = _sleep_stops_everyone(port)
        # the PINGs went out 0.1 s into a 0.6 s sleep: none is answered before it ends
        assert min(waits) > 0.35, (port, waits)
