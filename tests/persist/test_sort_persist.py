"""SORT ... STORE is logged to the AOF and a restart replays it to the same state, with the
pattern keys changed after the SORT (the replay must run it at its place in the log), an
unsorted set stored (sorted ALPHA, so the replay is deterministic), an empty result deleting
the destination, and SORT inside MULTI/EXEC."""
import signal

AOF = ("--appendonly", "yes")


def state(r):
    out = {}
    for k in sorted(r.keys("*")):
        t = r.type(k)
        if t == b"list":
            out[k] = (t, r.lrange(k, 0, -1))
        elif t == b"string":
            out[k] = (t, r.get(k))
        elif t == b"hash":
            out[k] = (t, sorted(r.hgetall(k).items()))
        elif t == b"set":
            out[k] = (t, sorted(r.smembers(k)))
        else:
            out[k] = (t, r.zrange(k, 0, -1, withscores=True))
    return out


def test_sort_store_survives_restart(tc_factory):
    tc = tc_factory(*AOF)
    r = tc.client()
    r.rpush("l", *range(20, 0, -1))
    r.sadd("s", "b", "a", "c", "x y", "10")
    r.zadd("z", {"m%d" % i: i % 4 for i in range(12)})
    for i in range(1, 21):
        r.set("w_%d" % i, (i * 7) % 11)
        r.hset("h_%d" % i, mapping={"f": i % 3, "g": "v%d" % i})
    r.set("d_empty", "x")
    assert r.execute_command("SORT", "l", "BY", "w_*", "GET", "#", "GET", "h_*->g",
                             "STORE", "d1") == 40
    assert r.execute_command("SORT", "s", "BY", "nosort", "STORE", "d2") == 5
    assert r.execute_command("SORT", "z", "BY", "nosort", "DESC", "LIMIT", 2, 5,
                             "STORE", "d3") == 5
    assert r.execute_command("SORT", "l", "LIMIT", 50, 1, "STORE", "d_empty") == 0
    assert r.execute_command("SORT", "l", "BY", "h_*->f", "ALPHA", "STORE", "l") == 20
    with r.pipeline(transaction=True) as p:
        p.set("w_3", 100)
        p.execute_command("SORT", "l", "BY", "w_*", "DESC", "LIMIT", 0, 3, "STORE", "d4")
        p.set("w_3", -1)
        p.execute()
    # change the pattern keys after the SORTs: replaying them at the end would differ
    for i in range(1, 21):
        r.set("w_%d" % i, -i)
        r.hset("h_%d" % i, "g", "changed")
    before = state(r)
    assert before[b"d1"][1][:2] != [] and b"d_empty" not in before
    assert before[b"d2"][1] == [b"10", b"a", b"b", b"c", b"x y"]
    tc.stop(sig=signal.SIGKILL)
    tc.start()
    assert state(tc.client()) == before
