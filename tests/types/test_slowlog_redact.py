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
