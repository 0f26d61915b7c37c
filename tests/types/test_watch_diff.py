"""WATCH against redis-server 7.0: a key is invalidated only when a command modifies it (Redis's
signalModifiedKey), not when a write command merely names it. Each case sets keys up, WATCHes
one, runs one command from another connection, then EXECs: whether EXEC aborts must be the same
on both servers. The cases pair a write that changes nothing with the same write changing
something, across the families whose handlers report the keys they modify."""
import pytest

SETUP = [
    ("DEL", "s", "h", "l", "z", "str", "ttl", "hll", "dst", "other", "e", "n", "x", "geo"),
    ("SADD", "s", "a", "b"),
    ("HSET", "h", "f", "v", "n", "1"),
    ("RPUSH", "l", "x", "y", "x"),
    ("ZADD", "z", "1", "m"),
    ("SET", "str", "v"),
    ("SET", "ttl", "v", "EX", "1000"),
    ("PFADD", "hll", "a", "b"),
    ("SET", "n", "10"),
    ("XADD", "x", "1-1", "f", "v"),
    ("XADD", "x", "2-1", "f", "v"),
    ("XGROUP", "CREATE", "x", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "x", ">"),
    ("GEOADD", "geo", "13.361389", "38.115556", "Palermo"),
]

# (watched key, command)
CASES = [
    # keyspace
    ("absent", ("DEL", "absent")),
    ("str", ("DEL", "str")),
    ("str", ("UNLINK", "absent", "str")),
    ("absent", ("EXPIRE", "absent", "100")),
    ("str", ("EXPIRE", "str", "100")),
    ("str", ("EXPIRE", "str", "100", "XX")),
    ("ttl", ("EXPIRE", "ttl", "100", "NX")),
    ("ttl", ("PEXPIRE", "ttl", "-1")),
    ("str", ("PERSIST", "str")),
    ("ttl", ("PERSIST", "ttl")),
    ("str", ("RENAME", "str", "str")),
    ("str", ("RENAME", "str", "dst")),
    ("dst", ("RENAME", "str", "dst")),
    ("dst", ("RENAMENX", "str", "s")),
    ("s", ("RENAMENX", "str", "s")),
    ("dst", ("COPY", "absent", "dst")),
    ("dst", ("COPY", "str", "dst")),
    ("s", ("COPY", "str", "s")),
    ("str", ("MOVE", "str", "1")),
    ("absent", ("MOVE", "absent", "1")),
    # strings
    ("str", ("SET", "str", "v")),
    ("str", ("SET", "str", "w", "NX")),
    ("absent", ("SET", "absent", "w", "XX")),
    ("str", ("SET", "str", "w", "XX", "GET")),
    ("str", ("SETNX", "str", "w")),
    ("absent", ("SETNX", "absent", "w")),
    ("dst", ("MSETNX", "str", "x", "dst", "y")),
    ("dst", ("MSETNX", "e", "x", "dst", "y")),
    ("str", ("MSET", "str", "x")),
    ("absent", ("GETDEL", "absent")),
    ("str", ("GETDEL", "str")),
    ("str", ("GETEX", "str")),
    ("str", ("GETEX", "str", "PERSIST")),
    ("ttl", ("GETEX", "ttl", "PERSIST")),
    ("str", ("GETEX", "str", "EX", "100")),
    ("str", ("APPEND", "str", "")),
    ("str", ("APPEND", "str", "x")),
    ("str", ("SETRANGE", "str", "0", "")),
    ("str", ("SETRANGE", "str", "0", "v")),
    ("absent", ("SETRANGE", "absent", "0", "")),
    ("str", ("INCRBYFLOAT", "str", "1")),
    ("n", ("INCRBY", "n", "0")),
    ("n", ("INCRBYFLOAT", "n", "0")),
    # hashes
    ("h", ("HSET", "h", "f", "v")),
    ("h", ("HSETNX", "h", "f", "w")),
    ("h", ("HSETNX", "h", "g", "w")),
    ("h", ("HDEL", "h", "nosuch")),
    ("h", ("HDEL", "h", "f")),
    ("h", ("HINCRBY", "h", "n", "0")),
    ("h", ("HINCRBY", "h", "f", "1")),
    # lists
    ("l", ("LPUSH", "l", "a")),
    ("absent", ("LPUSHX", "absent", "a")),
    ("l", ("RPUSHX", "l", "a")),
    ("absent", ("LPOP", "absent")),
    ("l", ("RPOP", "l")),
    ("l", ("LPOP", "l", "0")),
    ("l", ("LREM", "l", "0", "nosuch")),
    ("l", ("LREM", "l", "1", "x")),
    ("l", ("LINSERT", "l", "BEFORE", "nosuch", "v")),
    ("l", ("LINSERT", "l", "AFTER", "y", "v")),
    ("l", ("LSET", "l", "0", "x")),
    ("l", ("LTRIM", "l", "0", "-1")),
    ("absent", ("LTRIM", "absent", "0", "-1")),
    ("dst", ("LMOVE", "absent", "dst", "LEFT", "RIGHT")),
    ("dst", ("LMOVE", "l", "dst", "LEFT", "RIGHT")),
    ("l", ("LMOVE", "l", "l", "LEFT", "LEFT")),
    ("l", ("RPOPLPUSH", "absent", "l")),
    ("l", ("LMPOP", "2", "absent", "l", "LEFT")),
    ("l", ("BLMOVE", "absent", "l", "LEFT", "RIGHT", "0.01")),
    ("l", ("BLMPOP", "0.01", "1", "l", "RIGHT", "COUNT", "5")),
    # sets
    ("s", ("SADD", "s", "a")),
    ("s", ("SADD", "s", "c")),
    ("s", ("SREM", "s", "nosuch")),
    ("s", ("SMOVE", "s", "dst", "nosuch")),
    ("dst", ("SMOVE", "s", "dst", "a")),
    ("s", ("SUNIONSTORE", "dst", "s")),
    ("dst", ("SUNIONSTORE", "dst", "s")),
    # sorted sets
    ("z", ("ZREM", "z", "nosuch")),
    ("z", ("ZREM", "z", "m")),
    ("z", ("ZUNIONSTORE", "dst", "1", "z")),
    ("z", ("ZADD", "z", "1", "m")),
    ("z", ("ZADD", "z", "2", "m")),
    ("z", ("ZADD", "z", "NX", "5", "m")),
    ("z", ("ZADD", "z", "XX", "5", "new")),
    ("z", ("ZADD", "z", "GT", "0", "m")),
    ("z", ("ZINCRBY", "z", "0", "m")),
    ("z", ("ZINCRBY", "z", "1", "m")),
    ("absent", ("ZPOPMIN", "absent")),
    ("z", ("ZPOPMAX", "z")),
    ("z", ("ZPOPMIN", "z", "0")),
    ("z", ("ZREMRANGEBYSCORE", "z", "5", "10")),
    ("z", ("ZREMRANGEBYRANK", "z", "0", "0")),
    ("z", ("ZREMRANGEBYLEX", "z", "[x", "[y")),
    ("z", ("ZMPOP", "1", "z", "MIN")),
    ("absent", ("BZPOPMIN", "absent", "z", "0.01")),
    ("z", ("BZPOPMIN", "absent", "z", "0.01")),
    ("l", ("BLPOP", "absent", "l", "0.01")),
    ("absent", ("BRPOP", "absent", "0.01")),
    # bitmaps
    ("str", ("SETBIT", "str", "1", "1")),
    ("str", ("SETBIT", "str", "0", "1")),
    ("str", ("SETBIT", "str", "20", "0")),
    ("absent", ("SETBIT", "absent", "0", "0")),
    ("str", ("BITFIELD", "str", "SET", "u8", "16", "0")),
    ("str", ("BITFIELD", "str", "GET", "u8", "0")),
    ("str", ("BITFIELD", "str", "SET", "u8", "0", "118")),
    ("str", ("BITFIELD", "str", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9")),
    ("dst", ("BITOP", "AND", "dst", "absent")),
    ("str", ("BITOP", "AND", "str", "absent")),
    ("dst", ("BITOP", "OR", "dst", "str")),
    # HyperLogLog
    ("hll", ("PFADD", "hll", "a")),
    ("hll", ("PFADD", "hll", "zz-new-element")),
    ("absent", ("PFADD", "absent")),
    # streams
    ("x", ("XADD", "x", "*", "f", "v")),
    ("absent", ("XADD", "absent", "NOMKSTREAM", "*", "f", "v")),
    ("x", ("XDEL", "x", "9-9")),
    ("x", ("XDEL", "x", "1-1")),
    ("x", ("XTRIM", "x", "MAXLEN", "10")),
    ("x", ("XTRIM", "x", "MAXLEN", "1")),
    ("x", ("XACK", "x", "g", "1-1")),
    ("x", ("XACK", "x", "g", "9-9")),
    ("x", ("XGROUP", "CREATE", "x", "g2", "$")),
    ("x", ("XGROUP", "SETID", "x", "g", "0")),
    ("x", ("XGROUP", "DESTROY", "x", "g")),
    ("x", ("XGROUP", "DESTROY", "x", "nosuch")),
    ("x", ("XGROUP", "CREATECONSUMER", "x", "g", "c2")),
    ("x", ("XGROUP", "DELCONSUMER", "x", "g", "c")),
    ("x", ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">")),
    ("x", ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", "0")),
    ("x", ("XCLAIM", "x", "g", "c3", "0", "1-1")),
    ("x", ("XAUTOCLAIM", "x", "g", "c3", "0", "0")),
    ("x", ("XSETID", "x", "5-5")),
    # geo
    ("geo", ("GEOADD", "geo", "13.361389", "38.115556", "Palermo")),
    ("geo", ("GEOADD", "geo", "15.087269", "37.502669", "Catania")),
    ("geo", ("GEOADD", "geo", "NX", "1", "1", "Palermo")),
    ("dst", ("GEOSEARCHSTORE", "dst", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km")),
    ("dst", ("GEOSEARCHSTORE", "dst", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "900", "km")),
    ("dst", ("GEORADIUS", "geo", "15", "37", "900", "km", "STORE", "dst")),
    # SORT ... STORE, PFMERGE
    ("dst", ("SORT", "absent", "STORE", "dst")),
    ("dst", ("SORT", "l", "ALPHA", "STORE", "dst")),
    ("hll", ("PFMERGE", "hll", "hll")),
    ("dst", ("PFMERGE", "dst", "hll")),
    # errors change nothing
    ("str", ("LPUSH", "str", "x")),
    ("h", ("HINCRBY", "h", "f", "notanumber")),
    ("str", ("INCR", "str")),
    ("h", ("LSET", "h", "0", "x")),
    ("s", ("SETRANGE", "s", "0", "x")),
    # reads
    ("l", ("LRANGE", "l", "0", "-1")),
]


def aborted(srv, watched, cmd):
    conn = srv.client(raw=True)
    w = conn.connection_pool.get_connection("WATCH")
    other = srv.client(raw=True)
    try:
        other.execute_command("SELECT", "0")
        other.execute_command("FLUSHALL")
        for s in SETUP:
            other.execute_command(*s)
        w.send_command("WATCH", watched)
        assert w.read_response() in (b"OK", "OK")
        try:
            other.execute_command(*cmd)
        except Exception:
            pass  # error replies are part of the case (they change nothing)
        w.send_command("MULTI")
        w.read_response()
        w.send_command("ECHO", "ok")
        w.read_response()
        w.send_command("EXEC")
        return w.read_response() is None
    finally:
        conn.connection_pool.release(w)


@pytest.mark.parametrize("watched,cmd", CASES, ids=[" ".join(c) + " / " + w for w, c in CASES])
def test_watch_matches_redis(tc_server, redis_server, watched, cmd):
    expect = aborted(redis_server, watched, cmd)
    got = aborted(tc_server, watched, cmd)
    assert got == expect, "EXEC aborted: twincache %s, redis %s" % (got, expect)
