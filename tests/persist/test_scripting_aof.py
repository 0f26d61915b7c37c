"""Scripts and the append-only file: the writes a script performs are logged as the commands
they are (their propagated forms: PXAT for relative expiries, SREM for SPOP), wrapped in one
MULTI ... EXEC (a script that wrote once: that command alone, as redis-server 7.0 logs it), and
survive a restart; a script that writes nothing logs nothing; a script that
fails half way keeps, and logs, the writes it did; SELECT inside a script is logged with the
database of each write; redis.set_repl(redis.REPL_NONE) stops the logging."""
import glob
import os
import signal

from test_aof import AOF, last_incr

SCRIPT = """
redis.call('SET', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], 5)
redis.call('SET', KEYS[3], 'exp', 'EX', 1000)
redis.call('SADD', KEYS[4], 'a', 'b')
redis.call('SPOP', KEYS[4])
local v = redis.call('GET', KEYS[1])
redis.call('SELECT', 3)
redis.call('SET', 'in3', 'v3')
return v
"""


def test_script_writes_survive_restart(tc_factory):
    tc = tc_factory(*AOF)
    r = tc.client()
    assert r.eval(SCRIPT, 4, "k", "n", "e", "s", "hello") == b"hello"
    sha = r.script_load("return redis.call('INCR', KEYS[1])")
    for _ in range(3):
        r.evalsha(sha, 1, "cnt")
    r.eval("return redis.call('GET', 'k')", 0)  # a read-only script logs nothing
    # a script that fails half way keeps (and logs) what it wrote before the error
    try:
        r.eval("redis.call('SET', 'half', '1'); error('stop')", 0)
    except Exception:
        pass
    # redis.set_repl(REPL_NONE): the next writes are not logged
    r.eval("redis.set_repl(redis.REPL_NONE); redis.call('SET', 'unlogged', 'x')", 0)
    # a script inside MULTI: logged in the transaction's block
    p = r.pipeline(transaction=True)
    p.eval("return redis.call('INCR', 'cnt')", 0)
    p.incr("cnt")
    p.execute()
    data = open(last_incr(tc), "rb").read()
    # the big script and the transaction; the one-write scripts are logged unwrapped
    assert data.count(b"MULTI") == 2 and data.count(b"EXEC") == 2, data
    assert data.count(b"INCR\r\n$3\r\ncnt") == 4, data  # 3 EVALSHA, the EVAL in MULTI
    assert b"PXAT" in data and b"SREM" in data and b"SPOP" not in data.upper()
    assert b"unlogged" not in data
    assert b"eval" not in data.lower()
    os.kill(tc.proc.pid, signal.SIGKILL)
    tc.proc.wait()
    tc.start()
    r = tc.client()
    assert r.get("k") == b"hello" and r.get("n") == b"5"
    assert 990 * 1000 < r.pttl("e") <= 1000 * 1000
    assert r.scard("s") == 1
    assert tc.client(db=3).get("in3") == b"v3" and r.get("in3") is None
    assert r.get("cnt") == b"5"
    assert r.get("half") == b"1"
    assert r.get("unlogged") is None
    assert glob.glob(os.path.join(tc.dir, "appendonlydir", "*"))
