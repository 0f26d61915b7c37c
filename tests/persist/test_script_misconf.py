"""Scripts while a failed BGSAVE stops writes (stop-writes-on-bgsave-error), side by side with
redis-server 7.0: a script's write commands are refused with MISCONF (redis.call raises it,
redis.pcall returns it), its reads run, a shebang script without no-writes is refused before it
runs, and one with no-writes runs."""
import os
import time

import redis
from persist_harness import wait_bgsave  # noqa: E402


def call(r, *args):
    try:
        return r.execute_command(*args)
    except redis.exceptions.ResponseError as e:
        return ("error", str(e))


def scenario(srv, tmp):
    r = srv.client()
    r.set("a", "1")
    gone = os.path.join(tmp, "gone")
    os.mkdir(gone)
    r.config_set("dir", gone)
    os.rmdir(gone)  # the BGSAVE cannot create its file
    try:
        r.bgsave()
    except redis.exceptions.ResponseError:
        pass
    assert wait_bgsave(r)["rdb_last_bgsave_status"] == "err"
    out = [
        call(r, "EVAL", "return redis.call('SET', 'b', '2')", 0),
        call(r, "EVAL", "return redis.pcall('SET', 'b', '2')", 0),
        call(r, "EVAL", "return redis.call('GET', 'a')", 0),
        call(r, "EVAL", "#!lua\nreturn redis.call('GET', 'a')", 0),
        call(r, "EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'a')", 0),
        call(r, "EVAL", "#!lua flags=no-writes\nreturn redis.pcall('SET', 'a', 'x')", 0),
        call(r, "GET", "b"),
    ]
    r.config_set("dir", tmp)
    assert r.save()
    out.append(call(r, "EVAL", "return redis.call('SET', 'b', '2')", 0))
    return out


def test_script_writes_refused_while_misconf(tc_factory, redis_factory, tmp_path):
    a_dir, b_dir = tmp_path / "tc", tmp_path / "rs"
    a_dir.mkdir()
    b_dir.mkdir()
    tc = tc_factory("--save", "3600 1000000", "--enable-protected-configs", "yes")
    rs = redis_factory("--save", "3600 1000000", "--enable-protected-configs", "yes")
    a, b = scenario(tc, str(a_dir)), scenario(rs, str(b_dir))
    assert a == b, "\n twincache: %r\n redis:     %r" % (a, b)
