"""CLIENT PAUSE / UNPAUSE against redis-server 7.0: WRITE holds writes (and EXEC of a
transaction that writes) but not reads, ALL holds everything, a held client's later pipelined
commands wait behind it, UNPAUSE releases them at once, a longer pause extends the current
one; Redis's errors."""
import threading
import time

import pytest

from conftest import call


def timed(c, *args):
    t = time.time()
    r = call(c, *args)
    return r, time.time() - t


def scenario(srv):
    admin, c = srv.client(), srv.client(socket_timeout=10)
    call(admin, "FLUSHALL")
    out = []
    for args in (("x",), (-1,), (10, "bogus"), (10, "write", "x")):
        out.append(call(admin, "CLIENT", "PAUSE", *args))
    out.append(call(admin, "CLIENT", "PAUSE", 800, "WRITE"))
    r, t = timed(c, "GET", "k")
    out.append((r, t < 0.4))
    r, t = timed(c, "SET", "k", "1")
    out.append((r, t > 0.5))
    # a transaction: reads only run at once, with a write it waits
    call(admin, "CLIENT", "PAUSE", 800, "WRITE")
    call(c, "MULTI")
    call(c, "GET", "k")
    r, t = timed(c, "EXEC")
    out.append((r, t < 0.4))
    call(c, "MULTI")
    call(c, "INCR", "k")
    r, t = timed(c, "EXEC")
    out.append((r, t > 0.5))
    # ALL holds reads; UNPAUSE releases at once
    call(admin, "CLIENT", "PAUSE", 5000, "ALL")
    got = []
    th = threading.Thread(target=lambda: got.append(timed(c, "GET", "k")))
    th.start()
    time.sleep(0.2)
    out.append(call(admin, "CLIENT", "UNPAUSE"))
    th.join(5)
    out.append((got[0][0], got[0][1] < 2))
    # pipelined: the GET after a held SET waits behind it
    call(admin, "CLIENT", "PAUSE", 800, "WRITE")
    p = c.pipeline(transaction=False)
    p.set("k", "5")
    p.get("k")
    t = time.time()
    out.append((p.execute(), time.time() - t > 0.5))
    return out


def test_client_pause_as_redis(tc_server, redis_server):
    a, b = scenario(tc_server), scenario(redis_server)
    assert a == b, "\n twincache: %r\n redis:     %r" % (a, b)


def scripts_scenario(srv):
    """WRITE pause by the flags a command runs with: no-writes scripts and functions run at
    once, a script without flags and a transaction of many writes wait (the held EXEC reloads
    its queue of more arguments than EXEC itself: it used to overrun the held copy)."""
    admin, c = srv.client(), srv.client(socket_timeout=10)
    call(admin, "FLUSHALL")
    call(admin, "FUNCTION", "LOAD", "REPLACE", "#!lua name=pauselib\n"
         "redis.register_function{function_name='pf', callback=function() return 'hi' end, "
         "flags={'no-writes'}}")
    out = []
    call(admin, "CLIENT", "PAUSE", 800, "WRITE")
    for args in (("EVAL", "#!lua flags=no-writes\nreturn 1", 0), ("FCALL", "pf", 0),
                 ("EVAL_RO", "return 2", 0), ("PFCOUNT", "hll")):
        r, t = timed(c, *args)
        out.append((r, t < 0.4))
    r, t = timed(c, "EVAL", "return 3", 0)
    out.append((r, t > 0.5))
    call(admin, "CLIENT", "PAUSE", 800, "WRITE")
    call(c, "MULTI")
    for i in range(20):
        call(c, "MSET", *["k%d" % j for j in range(40)])
    r, t = timed(c, "EXEC")
    out.append((len(r), t > 0.5))
    call(admin, "FUNCTION", "DELETE", "pauselib")
    return out


def test_pause_write_by_flags_as_redis(tc_server, redis_server):
    assert scripts_scenario(tc_server) == scripts_scenario(redis_server)
