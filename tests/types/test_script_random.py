"""Random scripts, side by side with redis-server 7.0 (a property test of the scripting
surface): each script is generated from a seed — a sequence of redis.call / redis.pcall of
commands of every family on a few keys (some declared in KEYS, some not), with arguments that
are strings, binary bytes, integers, floats and negative numbers, wrong types and wrong arity,
and Lua values built from the replies (tables nested, booleans, nils, numbers) returned — and
run on both servers with the same KEYS and ARGV (binary included) after a FLUSHALL. Replies
and error texts must be equal, and so must the data left behind (DUMP-free: each key's TYPE and
a canonical read). TC_SCRIPT_RANDOM sets the number of scripts (default 300)."""
import os
import random

import pytest

from conftest import call

N = int(os.environ.get("TC_SCRIPT_RANDOM", "300"))
KEYS = ["k1", "k2", "k3", "{x}k4"]

STR_ARGS = ["'v'", "''", "'12'", "'-3'", "'3.5'", "'abc\\0def'", "'\\255\\254'", "ARGV[1]",
            "ARGV[2]", "KEYS[1]", "tostring(7)", "7", "-2", "0", "1.5", "-0.25", "1e3", "2^53"]
COMMANDS = [
    ("SET", ["K", "S"]), ("SET", ["K", "S", "'EX'", "'100'"]), ("GET", ["K"]),
    ("GETSET", ["K", "S"]), ("APPEND", ["K", "S"]), ("STRLEN", ["K"]),
    ("INCR", ["K"]), ("INCRBY", ["K", "S"]), ("INCRBYFLOAT", ["K", "S"]), ("DECR", ["K"]),
    ("GETRANGE", ["K", "S", "S"]), ("SETRANGE", ["K", "'2'", "S"]), ("MGET", ["K", "K"]),
    ("DEL", ["K"]), ("EXISTS", ["K", "K"]), ("TYPE", ["K"]), ("TTL", ["K"]),
    ("EXPIRE", ["K", "'100'"]), ("PERSIST", ["K"]),
    ("LPUSH", ["K", "S", "S"]), ("RPUSH", ["K", "S"]), ("LPOP", ["K"]), ("LRANGE", ["K", "'0'", "'-1'"]),
    ("LLEN", ["K"]), ("LINDEX", ["K", "S"]),
    ("HSET", ["K", "S", "S"]), ("HGET", ["K", "S"]), ("HINCRBY", ["K", "'f'", "S"]),
    ("HLEN", ["K"]), ("HDEL", ["K", "S"]), ("HMGET", ["K", "S", "'f'"]),
    ("SADD", ["K", "S", "S"]), ("SISMEMBER", ["K", "S"]), ("SCARD", ["K"]), ("SREM", ["K", "S"]),
    ("ZADD", ["K", "S", "S"]), ("ZSCORE", ["K", "S"]), ("ZRANGE", ["K", "'0'", "'-1'", "'WITHSCORES'"]),
    ("ZINCRBY", ["K", "S", "S"]), ("ZCARD", ["K"]), ("ZRANK", ["K", "S"]),
    ("SETBIT", ["K", "'7'", "'1'"]), ("GETBIT", ["K", "'7'"]), ("BITCOUNT", ["K"]),
    ("PFADD", ["K", "S"]), ("PFCOUNT", ["K"]),
    ("XADD", ["K", "'1-1'", "'f'", "S"]), ("XADD", ["K", "'2-1'", "'f'", "S"]), ("XLEN", ["K"]),
    ("NOSUCHCMD", ["K"]), ("GET", []), ("SET", ["K"]), ("PING", []), ("ECHO", ["S"]),
    ("SELECT", ["'1'"]), ("SELECT", ["'0'"]),
]


def gen_script(rnd):
    lines = ["local r = {}"]
    for i in range(rnd.randint(1, 8)):
        name, args = rnd.choice(COMMANDS)
        parts = ["'%s'" % name]
        for a in args:
            if a == "K":
                parts.append(rnd.choice(["KEYS[1]", "KEYS[2]", "'k3'", "'{x}k4'"]))
            elif a == "S":
                parts.append(rnd.choice(STR_ARGS))
            else:
                parts.append(a)
        fn = rnd.choice(["redis.call", "redis.pcall", "redis.pcall"])
        call_ = "%s(%s)" % (fn, ", ".join(parts))
        if fn == "redis.call":
            # a raised error ends the script: keep some, catch the others with pcall
            if rnd.random() < 0.5:
                call_ = "(function() local ok, e = pcall(function() return %s end) " \
                        "if ok then return e else return {err = 'caught'} end end)()" % call_
        lines.append("r[#r + 1] = %s" % call_)
    ret = rnd.choice([
        "return r", "return r[1]", "return #r", "return {r, true, false, 1.5, -2}",
        "return {type(r[1]), tostring(r[1] == false)}", "return {r[#r]}",
        "return redis.status_reply(tostring(#r))", "return {1, {2, {3, r}}}",
    ])
    lines.append(ret)
    return "\n".join(lines)


def snapshot(client):
    out = []
    for db in (0, 1):
        call(client, "SELECT", db)
        for k in sorted(call(client, "KEYS", "*") or []):
            t = call(client, "TYPE", k)
            if t == b"string":
                v = call(client, "GET", k)
            elif t == b"list":
                v = call(client, "LRANGE", k, 0, -1)
            elif t == b"hash":
                v = sorted(call(client, "HGETALL", k))
            elif t == b"set":
                v = sorted(call(client, "SMEMBERS", k))
            elif t == b"zset":
                v = call(client, "ZRANGE", k, 0, -1, "WITHSCORES")
            else:
                v = call(client, "XLEN", k)
            out.append((db, k, t, v))
    call(client, "SELECT", 0)
    return out


def norm(x):
    if isinstance(x, Exception):
        return ("error", str(x))
    if isinstance(x, list):
        return [norm(v) for v in x]
    return x


@pytest.mark.parametrize("chunk", range(4))
def test_random_scripts_as_redis(d, chunk):
    tc, rs = d.tc, d.rs
    for i in range(chunk * N // 4, (chunk + 1) * N // 4):
        rnd = random.Random(i)
        body = gen_script(rnd)
        argv = [rnd.choice([b"a", b"", b"17", b"\x00\xff", b"-1.5", b"x" * 50]),
                rnd.choice([b"b", b"3", b"\r\n"])]
        for c in (tc, rs):
            call(c, "FLUSHALL")
        a = norm(call(tc, "EVAL", body, 2, "k1", "k2", *argv))
        b = norm(call(rs, "EVAL", body, 2, "k1", "k2", *argv))
        if isinstance(a, tuple) and isinstance(b, tuple):
            # the sha in "script: <sha>, on ..." is the same; compare whole texts
            pass
        assert a == b, "seed %d script:\n%s\n twincache: %r\n redis:     %r" % (i, body, a, b)
        sa, sb = snapshot(tc), snapshot(rs)
        assert sa == sb, "seed %d script:\n%s\n twincache data: %r\n redis data:     %r" % (
            i, body, sa, sb)
