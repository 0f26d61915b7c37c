"""Geo writes survive an AOF restart: GEOADD (NX/XX/CH), GEOSEARCHSTORE, GEORADIUS* STORE /
STOREDIST (a movable key) and a transaction replay to the state they left, which is also the
state redis-server reaches with the same commands."""
import random
import signal

AOF = ("--appendonly", "yes")


def commands():
    rng = random.Random(5)
    args = []
    for i in range(300):
        args += [rng.uniform(-180, 180), rng.uniform(-85, 85), "p%d" % i]
    yield ("GEOADD", "g", *args)
    yield ("GEOADD", "g", "NX", "CH", 1, 1, "p1", 2, 2, "new")
    yield ("GEOADD", "g", "XX", "CH", 3, 3, "p2", 4, 4, "nope")
    yield ("GEOSEARCHSTORE", "s1", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 5000, "km", "STOREDIST")
    yield ("GEOSEARCHSTORE", "s2", "g", "FROMMEMBER", "p3", "BYBOX", 8000, 3000, "km",
           "COUNT", 7)
    yield ("GEORADIUS", "g", 10, 10, 4000, "km", "STORE", "s3", "DESC", "COUNT", 20)
    yield ("GEORADIUSBYMEMBER", "g", "p4", 3000, "mi", "STOREDIST", "s4")
    yield ("GEORADIUS", "g", 10, 10, 4000, "km", "WITHDIST")  # a read, logged or not
    yield ("SET", "gone", "x")
    yield ("GEOSEARCHSTORE", "gone", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 0, "m")
    yield ("MULTI",)
    yield ("GEOADD", "t", 5, 5, "a", 6, 6, "b")
    yield ("GEORADIUS", "t", 5, 5, 500, "km", "STOREDIST", "t2")
    yield ("GEOSEARCHSTORE", "t", "t", "FROMMEMBER", "a", "BYRADIUS", 10, "km")
    yield ("EXEC",)


KEYS = ("g", "s1", "s2", "s3", "s4", "gone", "t", "t2")


def state(srv):
    r = srv.client()
    r.response_callbacks = {}
    return {k: (r.type(k), r.execute_command("ZRANGE", k, 0, -1, "WITHSCORES")
                if r.type(k) == b"zset" else None) for k in KEYS}


def test_geo_aof_restart(tc_factory, redis_factory, tmp_path):
    tc = tc_factory(*AOF)
    (tmp_path / "r").mkdir()
    rs = redis_factory(dir=tmp_path / "r")
    for srv in (tc, rs):
        c = srv.client()
        c.response_callbacks = {}
        for cmd in commands():
            c.execute_command(*cmd)
    before = state(tc)
    assert before == state(rs)
    assert before["s1"][1] and before["s3"][1] and before["s4"][1] and before["t2"][1]
    assert before["gone"][0] == b"none"
    tc.stop(sig=signal.SIGKILL)  # no shutdown save: only the AOF brings the data back
    tc.start()
    assert state(tc) == before
