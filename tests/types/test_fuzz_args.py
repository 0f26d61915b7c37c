"""Random, often nonsensical arguments to every collection command: the server must answer
each one (any reply or error) and stay up; under ASan any memory error fails the session.

    TYPES_FUZZ_OPS   number of commands (default 20000)"""
import os
import random

from conftest import call

OPS = int(os.environ.get("TYPES_FUZZ_OPS", "20000"))

COMMANDS = """LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LRANGE LLEN LINDEX LSET LREM LTRIM LINSERT LPOS
LMOVE RPOPLPUSH LMPOP HSET HSETNX HGET HMSET HMGET HGETALL HDEL HEXISTS HLEN HKEYS HVALS HINCRBY
HINCRBYFLOAT HSTRLEN HRANDFIELD HSCAN SADD SREM SISMEMBER SMISMEMBER SMEMBERS SCARD SPOP
SRANDMEMBER SMOVE SINTER SUNION SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE SINTERCARD SSCAN ZADD
ZINCRBY ZREM ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE
ZRANGEBYLEX ZREVRANGEBYLEX ZREVRANGE ZRANK ZREVRANK ZPOPMIN ZPOPMAX ZRANDMEMBER ZREMRANGEBYRANK
ZREMRANGEBYSCORE ZREMRANGEBYLEX ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZUNION ZINTER ZDIFF
ZRANGESTORE ZMPOP ZINTERCARD ZSCAN XADD XLEN XRANGE XREVRANGE XDEL XTRIM COPY RENAME DEL
OBJECT TYPE GETBIT BITCOUNT BITPOS BITOP BITFIELD_RO PFADD PFCOUNT PFMERGE GEOADD GEOPOS GEODIST
GEOHASH GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUS_RO GEORADIUSBYMEMBER SORT SORT_RO LCS""".split()
# SETBIT, BITFIELD and SETRANGE are left out: a random large offset would allocate up to 512 MB

WORDS = ["LEFT", "RIGHT", "BEFORE", "AFTER", "RANK", "COUNT", "MAXLEN", "MINID", "LIMIT",
         "WITHSCORES", "WITHVALUES", "BYSCORE", "BYLEX", "REV", "NX", "XX", "GT", "LT", "CH",
         "INCR", "WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX", "MATCH", "NOMKSTREAM", "~", "=",
         "*", "-", "+", "(", "[", "(1", "[a", "0-0", "1-*", "18446744073709551615-1", "ENCODING",
         "REPLACE", "BY", "GET", "STORE", "ALPHA", "ASC", "DESC", "#", "*->f", "FROMMEMBER",
         "FROMLONLAT", "BYRADIUS", "BYBOX", "km", "m", "WITHDIST", "WITHCOORD", "WITHHASH", "ANY",
         "STOREDIST", "AND", "OR", "XOR", "NOT", "BIT", "BYTE", "u8", "i64", "IDX", "LEN",
         "MINMATCHLEN", "WITHMATCHLEN"]
NUMS = ["0", "1", "-1", "2", "3", "10", "-10", "100", "9223372036854775807",
        "-9223372036854775808", "4611686018427387904", "18446744073709551616", "1e308", "inf",
        "-inf", "nan", "0.5", "-0", "", " ", "1 ", "0x10", "99999999999"]
KEYS = ["k1", "k2", "k3", "k4", "k5"]


def arg(r):
    x = r.random()
    if x < 0.3:
        return r.choice(KEYS)
    if x < 0.55:
        return r.choice(NUMS)
    if x < 0.8:
        return r.choice(WORDS)
    if x < 0.95:
        return r.choice("abcxyz") * r.randint(1, 3)
    return "v" * r.randint(60, 3000)


def test_fuzz_arguments(d):
    r = random.Random(int(os.environ.get("TYPES_FUZZ_SEED", "4242")))
    for i in range(OPS):
        name = r.choice(COMMANDS)
        args = [name] + [arg(r) for _ in range(r.randint(0, 9))]
        if r.random() < 0.5 and len(args) > 1:
            args[1] = r.choice(KEYS)
        call(d.tc, *args)
    assert call(d.tc, "PING") in (b"PONG", "PONG")
