"""Scripts over maxmemory with noeviction, against redis-server 7.0: a plain script's write is
refused with -OOM, a writing shebang script without allow-oom is refused before it runs, one
with allow-oom writes, no-writes scripts and reads run; functions likewise."""
import pytest

from conftest import call

CASES = [
    ("EVAL", "return redis.call('SET', 'oom:a', 'b')", 0),
    ("EVAL", "return redis.pcall('SET', 'oom:a', 'b')", 0),
    ("EVAL", "return redis.call('GET', 'oom:k')", 0),
    ("EVAL", "#!lua\nreturn redis.call('SET', 'oom:a', 'b')", 0),
    ("EVAL", "#!lua\nreturn redis.call('GET', 'oom:k')", 0),
    ("EVAL", "#!lua flags=allow-oom\nreturn redis.call('SET', 'oom:b', 'c')", 0),
    ("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'oom:k')", 0),
    ("FCALL", "oomw", 0), ("FCALL", "oomok", 0), ("FCALL_RO", "oomr", 0),
]
LIB = ("#!lua name=oomlib\n"
       "redis.register_function('oomw', function() return redis.call('SET', 'oom:c', 'd') end)\n"
       "redis.register_function{function_name='oomok', callback=function() "
       "return redis.call('SET', 'oom:d', 'e') end, flags={'allow-oom'}}\n"
       "redis.register_function{function_name='oomr', callback=function() "
       "return redis.call('GET', 'oom:k') end, flags={'no-writes'}}\n")


@pytest.mark.parametrize("args", CASES)
def test_scripts_over_maxmemory_as_redis(d, args):
    for c in (d.tc, d.rs):
        call(c, "SET", "oom:k", "v")
        call(c, "FUNCTION", "LOAD", "REPLACE", LIB)
        call(c, "CONFIG", "SET", "maxmemory-policy", "noeviction")
        call(c, "CONFIG", "SET", "maxmemory", "1")
    try:
        d(*args)
    finally:
        for c in (d.tc, d.rs):
            call(c, "CONFIG", "SET", "maxmemory", "0")
            call(c, "FUNCTION", "DELETE", "oomlib")
    d("MGET", "oom:a", "oom:b", "oom:c", "oom:d")
