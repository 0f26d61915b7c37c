"""SLOWLOG against redis-server 7.0: passwords are logged as "(redacted)" (AUTH, HELLO AUTH,
ACL SETUSER, CONFIG SET requirepass/masterauth, MIGRATE AUTH/AUTH2), and the commands of a
transaction are logged without EXEC."""
from conftest import call


def entries(srv):
    c = srv.client()
    call(c, "CONFIG", "SET", "slowlog-log-slower-than", 0)
    call(c, "SLOWLOG", "RESET")
    call(c, "ACL", "SETUSER", "redact user", "+get")
    call(c, "CONFIG", "SET", "masterauth", "")
    call(c, "MIGRATE", "127.0.0.1", 1, "k", 0, 10, "AUTH", "pw")
    call(c, "MIGRATE", "127.0.0.1", 1, "k", 0, 10, "AUTH2", "u", "pw", "KEYS")
    call(c, "MULTI")
    call(c, "SET", "slowk", "v")
    call(c, "EXEC")
    call(c, "CONFIG", "SET", "slowlog-log-slower-than", -1)
    out = [e[3] for e in call(c, "SLOWLOG", "GET", -1)]
    call(c, "ACL", "DELUSER", "redact user")
    call(c, "CONFIG", "SET", "slowlog-log-slower-than", 10000)
    return out


def test_slowlog_redaction_as_redis(tc_server, redis_server):
    assert entries(tc_server) == entries(redis_server)


def blocked_entries(srv):
    """A blocked BLPOP and XREAD ... $ are logged once, when served, as they were sent."""
    import threading
    c = srv.client()
    call(c, "DEL", "bl", "bs")
    call(c, "XADD", "bs", "1-1", "f", "v")
    call(c, "CONFIG", "SET", "slowlog-log-slower-than", 0)
    call(c, "SLOWLOG", "RESET")
    out = []
    waiters = [("BLPOP", "bl", 0), ("XREAD", "BLOCK", 0, "STREAMS", "bs", "$")]
    for args in waiters:
        t = threading.Thread(target=lambda a=args: out.append(call(srv.client(), *a)))
        t.start()
        for _ in range(200):
            if call(c, "INFO", "clients").find(b"blocked_clients:1") >= 0:
                break
            threading.Event().wait(0.01)
        call(c, "MULTI")
        call(c, "RPUSH", "bl", "x")
        call(c, "XADD", "bs", "*", "f", "v")
        call(c, "SLOWLOG", "RESET")
        call(c, "EXEC")
        t.join(10)
        assert out and out[-1]
        out.append([e[3] for e in call(c, "SLOWLOG", "GET", -1)])
    call(c, "CONFIG", "SET", "slowlog-log-slower-than", 10000)
    return out[1::2]


def test_blocked_command_logged_as_sent(tc_server, redis_server):
    got = blocked_entries(tc_server)
    assert got == blocked_entries(redis_server)
    assert got[1][0] == [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"bs", b"$"]
