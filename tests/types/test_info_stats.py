"""INFO commandstats, errorstats and total_error_replies against redis-server 7.0: after CONFIG
RESETSTAT, the same commands on both servers — successes, failures (WRONGTYPE, not an
integer), rejections (arity, MULTI-only errors, unknown commands, unknown subcommands), a
transaction with a failing command, a script — give the same calls, rejected_calls and
failed_calls per command (usec aside), the same error counts per code and the same total."""
import pytest

from conftest import call


def parse(info):
    out = {}
    for line in info.splitlines():
        if line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        out[k] = v
    return out


def cmdstats(c):
    res = {}
    for k, v in parse(call(c, "INFO", "commandstats").decode()).items():
        fields = dict(f.split("=") for f in v.split(","))
        res[k] = (fields["calls"], fields["rejected_calls"], fields["failed_calls"])
    return res


SEQUENCE = [
    ("SET", "k", "v"), ("GET", "k"), ("LPUSH", "k", "x"), ("INCR", "k"), ("GET",),
    ("SET", "k"), ("NOSUCH", "a"), ("CONFIG", "NOSUCH"), ("CONFIG", "GET", "hz"),
    ("OBJECT", "ENCODING", "k"), ("HSET", "h", "f", "1"), ("HINCRBY", "h", "f", "x"),
    ("MULTI",), ("INCR", "k"), ("SET", "n", "1"), ("EXEC",),
    ("MULTI",), ("GET",), ("EXEC",), ("EXEC",), ("DISCARD",),
    ("EVAL", "return redis.call('GET', 'k')", 0),
    ("EVAL", "return redis.call('INCR', 'k')", 0),
    ("EVAL", "return redis.pcall('INCR', 'k')", 0),
    ("SELECT", 99), ("SELECT", 0), ("PING",), ("ECHO", "x"), ("EXPIRE", "k", "x"),
]


def test_command_and_error_stats_as_redis(tc_server, redis_server):
    out = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        call(c, "FLUSHALL")
        call(c, "CONFIG", "RESETSTAT")
        for args in SEQUENCE:
            call(c, *args)
        stats = parse(call(c, "INFO", "stats").decode())
        out.append((cmdstats(c), parse(call(c, "INFO", "errorstats").decode()),
                    stats["total_error_replies"]))
    assert out[0][0] == out[1][0], "commandstats:\n twincache: %r\n redis:     %r" % (
        out[0][0], out[1][0])
    assert out[0][1] == out[1][1], "errorstats"
    assert out[0][2] == out[1][2], "total_error_replies"


def test_default_info_has_errorstats_not_commandstats(tc_server):
    c = tc_server.client()
    text = call(c, "INFO").decode()
    assert "# Errorstats" in text and "# Commandstats" not in text
    assert "# Commandstats" in call(c, "INFO", "all").decode()


def test_acl_denial_counts_as_noperm(tc_server, redis_server):
    """A command the user may not run is an errorstat of NOPERM, as in Redis."""
    out = []
    for srv in (tc_server, redis_server):
        admin, c = srv.client(), srv.client()
        call(admin, "CONFIG", "RESETSTAT")
        call(admin, "ACL", "SETUSER", "statsuser", "on", ">pw", "~cached:*", "+get")
        call(c, "AUTH", "statsuser", "pw")
        call(c, "SET", "a", "b")
        call(c, "GET", "other")
        errs = parse(call(admin, "INFO", "errorstats").decode())
        call(admin, "ACL", "DELUSER", "statsuser")
        out.append(errs)
    assert out[0] == out[1] and "errorstat_NOPERM" in out[0], out


def test_percentiles_config_and_container_histogram(tc_server, redis_server):
    """latency-tracking-info-percentiles kept as Redis prints doubles, bad ones refused; LATENCY
    HISTOGRAM of a container command answers its subcommands."""
    out = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        res = [call(c, "CONFIG", "SET", "latency-tracking-info-percentiles", "0.0 50.0 100.0"),
               call(c, "CONFIG", "GET", "latency-tracking-info-percentiles"),
               call(c, "CONFIG", "SET", "latency-tracking-info-percentiles", "10.0 50.0 a")[0],
               call(c, "CONFIG", "SET", "latency-tracking-info-percentiles", "10 101")[0],
               call(c, "CONFIG", "GET", "latency-tracking-info-percentiles")]
        call(c, "CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
        call(c, "CONFIG", "RESETSTAT")
        call(c, "CLIENT", "ID")
        call(c, "CLIENT", "GETNAME")
        h = call(c, "LATENCY", "HISTOGRAM", "client")
        res.append(sorted(h.keys()) if isinstance(h, dict) else sorted(h[0::2]))
        out.append(res)
    assert out[0] == out[1], out
