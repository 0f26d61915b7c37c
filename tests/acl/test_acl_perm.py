"""ACL permission checks against redis-server 7.0: NOPERM for commands, keys and channels
with Redis 7.0.15's texts, inside MULTI (checked when queued) and in scripts (the caller's
user, per redis.call), SORT BY / GET patterns, ACL LOG entries for each reason, ACL DRYRUN,
the connections of a deleted user closed, and a permission matrix over the whole command
table: every command both servers have, run by a user limited to ~app:* and by one without
@dangerous, allowed or denied alike."""

import pytest
import redis
from conftest import reply

FIELDS = [b"count", b"reason", b"context", b"object", b"username", b"age-seconds", b"client-info"]


def as_user(srv, user, *cmds):
    c = srv.client(single_connection_client=True)
    try:
        out = [reply(c, "AUTH", user, "pw")]
        for args in cmds:
            out.append(reply(c, *args))
        return out
    finally:
        c.close()


def setup_users(srv):
    a = srv.client()
    a.cmd("ACL", "LOG", "RESET")
    a.cmd("ACL", "SETUSER", "app", "reset", "on", ">pw", "~app:*", "&ch*", "+@all", "-flushall")
    a.cmd("ACL", "SETUSER", "ro", "reset", "on", ">pw", "%R~*", "%W~w:*", "+@all")
    a.cmd("ACL", "SETUSER", "nodanger", "reset", "on", ">pw", "~*", "&*", "+@all",
          "-@dangerous")
    a.cmd("ACL", "SETUSER", "sel", "reset", "on", ">pw", "~a:*", "+get", "(~b:* +set)")
    a.cmd("ACL", "SETUSER", "fa", "reset", "on", ">pw", "~*", "-@all", "+select|0",
          "+config|get", "+client")
    return a


def log_of(a, n=50):
    out = []
    for e in a.cmd("ACL", "LOG", str(n)):
        assert e[0::2] == FIELDS
        d = dict(zip(e[0::2], e[1::2]))
        assert 0 <= float(d.pop(b"age-seconds")) < 60
        info = d.pop(b"client-info")
        assert info.startswith(b"id=") and b" user=" in info, info
        out.append(d)
    return out


EVAL_GET = "return redis.call('get', KEYS[1])"
SEQS = {
    "app": [
        ("GET", "foo"), ("GET", "app:1"), ("SET", "app:1", "v"), ("FLUSHALL",),
        ("MGET", "app:1", "app:2", "foo"), ("MSET", "app:1", "1", "x", "2"),
        ("COPY", "app:1", "app:2"), ("COPY", "app:1", "other"), ("LMOVE", "app:l", "x", "LEFT", "LEFT"),
        ("PUBLISH", "zz", "1"), ("PUBLISH", "ch1", "1"), ("SPUBLISH", "zz", "1"),
        ("SORT", "app:l", "BY", "x*"), ("SORT", "app:l", "GET", "x*"), ("SORT", "app:l", "BY", "nosort"),
        ("SORT", "app:l", "STORE", "other"), ("SORT_RO", "app:l", "GET", "#"),
        ("EVAL", EVAL_GET, "1", "foo"), ("EVAL", EVAL_GET, "1", "app:1"),
        ("EVAL", "return redis.call('flushall')", "0"),
        ("EVAL", "return redis.pcall('get', 'foo')", "0"),
        ("EVAL", "return redis.call('publish', 'zz', 'x')", "0"),
        ("EVAL", "return redis.call('sort', 'app:l', 'by', 'x*')", "0"),
        ("ZUNIONSTORE", "app:z", "2", "app:a", "foo"), ("ZUNIONSTORE", "app:z", "x", "app:a"),
        ("XREAD", "STREAMS", "app:s", "foo", "0", "0"),
        ("CONFIG", "GET", "maxmemory"), ("ACL", "WHOAMI"), ("ACL", "DRYRUN", "app", "get", "x"),
        ("OBJECT", "ENCODING", "foo"), ("EXISTS", "foo"), ("TOUCH", "foo"),
        ("MULTI",), ("GET", "foo"), ("GET", "app:1"), ("EXEC",),
        ("MULTI",), ("FLUSHALL",), ("DISCARD",),
        ("MIGRATE", "127.0.0.1", "1", "foo", "0", "100"),
        ("MIGRATE", "127.0.0.1", "1", "", "0", "100", "KEYS", "app:1", "foo"),
        ("MIGRATE", "127.0.0.1", "1", "app:nokey", "0", "100"),
        ("PSUBSCRIBE", "zz*"),
    ],
    "ro": [
        ("GET", "k"), ("SET", "k", "v"), ("SET", "w:k", "v"), ("GET", "w:k"), ("SET", "w:k", "v", "GET"),
        ("APPEND", "w:k", "x"), ("EXISTS", "w:k"), ("DEL", "k"), ("DEL", "w:k"),
        ("RENAME", "k", "w:k2"), ("LPUSH", "w:l", "a"), ("LRANGE", "w:l", "0", "-1"),
        ("BITFIELD", "w:b", "GET", "u8", "0"), ("BITFIELD", "k", "GET", "u8", "0"),
        ("BITFIELD", "k", "SET", "u8", "0", "1"), ("BITFIELD_RO", "k", "GET", "u8", "0"),
        ("SORT", "k", "BY", "x*"), ("SORT", "k", "GET", "#"), ("GETDEL", "w:k"), ("TYPE", "w:k"),
    ],
    "nodanger": [
        ("FLUSHALL",), ("CONFIG", "GET", "maxmemory"), ("DEBUG", "SLEEP", "0"), ("KEYS", "*"),
        ("INFO", "server"), ("SHUTDOWN",), ("GET", "x"), ("CLIENT", "LIST"), ("SORT", "x"),
        ("ACL", "LOG"), ("ACL", "SETUSER", "zz"), ("MONITOR",), ("SAVE",),
    ],
    "sel": [
        ("GET", "a:1"), ("GET", "b:1"), ("SET", "b:1", "v"), ("SET", "a:1", "v"),
        ("MGET", "a:1", "b:1"), ("DEL", "a:1"),
    ],
    "fa": [
        ("SELECT", "0"), ("SELECT", "1"), ("CONFIG", "GET", "x"), ("CONFIG", "SET", "x", "y"),
        ("CLIENT", "GETNAME"), ("GET", "k"), ("PING",), ("ECHO", "x"),
    ],
}


def run_seq(srv, user):
    a = setup_users(srv)
    try:
        out = as_user(srv, user, *SEQS[user])
        out = ["script-error:" + r[1].split(" script:")[0] if isinstance(r, tuple) and
               r[0] == "error" and " script:" in r[1] else r for r in out]
        return out, log_of(a)
    finally:
        a.close()


@pytest.mark.parametrize("user", sorted(SEQS))
def test_perm_sequence_same(tc_server, redis_server, user):
    got = [run_seq(s, user) for s in (tc_server, redis_server)]
    assert got[0][0] == got[1][0]
    assert got[0][1] == got[1][1]


DRY = [
    ("app", "get", "x"), ("app", "get", "app:x"), ("app", "flushall"), ("app", "publish", "zz", "m"),
    ("app", "publish", "ch1", "m"), ("app", "subscribe", "ch1", "zz"), ("app", "psubscribe", "ch*"),
    ("app", "psubscribe", "c*"), ("app", "mset", "app:1", "v", "x", "v"), ("ro", "set", "k", "v"),
    ("ro", "set", "w:k", "v"), ("ro", "get", "k"), ("nodanger", "flushall"),
    ("nodanger", "config", "get", "x"), ("sel", "set", "b:1", "v"), ("sel", "get", "b:1"),
    ("fa", "select", "0"), ("fa", "select", "1"), ("fa", "config", "get", "x"),
    ("fa", "config", "set", "x", "y"), ("nobody", "get", "x"), ("app", "nosuch"),
    ("app", "get"),
]


@pytest.mark.parametrize("args", DRY, ids=lambda a: " ".join(a))
def test_dryrun_same(tc_server, redis_server, args):
    got = []
    for s in (tc_server, redis_server):
        a = setup_users(s)
        got.append(reply(a, "ACL", "DRYRUN", *args))
        a.close()
    assert got[0] == got[1]


def test_deleted_user_connections_closed(tc_server, redis_server):
    got = []
    for s in (tc_server, redis_server):
        a = setup_users(s)
        c1 = s.client(single_connection_client=True)
        c2 = s.client(single_connection_client=True)
        r = [reply(c1, "AUTH", "app", "pw"), reply(c2, "AUTH", "ro", "pw")]
        r.append(reply(a, "ACL", "DELUSER", "app"))
        r.append(reply(c1, "PING"))
        r.append(reply(c2, "PING"))
        # a connection deleting its own user gets the reply, then is closed
        c3 = s.client(single_connection_client=True)
        r.append(reply(c3, "AUTH", "nodanger", "pw"))
        r.append(reply(c3, "ACL", "DELUSER", "nodanger"))
        r.append(reply(c3, "PING"))
        got.append(r)
        for c in (a, c1, c2, c3):
            c.close()
    assert got[0] == got[1]
    assert got[0][3] == ("closed",)


def test_setuser_changes_apply_to_open_connections(tc_server, redis_server):
    got = []
    for s in (tc_server, redis_server):
        a = setup_users(s)
        c = s.client(single_connection_client=True)
        r = [reply(c, "AUTH", "ro", "pw"), reply(c, "SET", "k", "v")]
        a.cmd("ACL", "SETUSER", "ro", "~*")
        r.append(reply(c, "SET", "k", "v"))
        a.cmd("ACL", "SETUSER", "ro", "-set")
        r.append(reply(c, "SET", "k", "v"))
        a.cmd("ACL", "SETUSER", "default", "-flushall")
        d = s.client(single_connection_client=True)
        r.append(reply(d, "FLUSHALL"))
        a.cmd("ACL", "SETUSER", "default", "+flushall")
        r.append(reply(d, "FLUSHALL"))
        got.append(r)
        for x in (a, c, d):
            x.close()
    assert got[0] == got[1]


def test_repeated_command_check_follows_keys_and_rule_changes(tc_server, redis_server):
    """A connection repeating one command (twincache caches the last command allowed and the
    key pattern that allowed it): every new key is still checked, short and long literal
    prefixes and exact patterns alike, and a SETUSER in between takes effect at once."""
    got = []
    for s in (tc_server, redis_server):
        a = s.client()
        a.cmd("ACL", "SETUSER", "rep", "reset", "on", ">pw", "~key:*", "~ab*", "~exact",
              "%R~longprefix:x*", "+@all")
        c = s.client(single_connection_client=True)
        r = [reply(c, "AUTH", "rep", "pw")]
        for k in ["key:1", "key:2", "kez:1", "key:", "ke", "abc", "ab", "axc", "a", "exact",
                  "exactly", "exac", "longprefix:xy", "longprefix:y", "longprefix:x", "key:3",
                  "", "k", "abd"]:
            r.append(reply(c, "GET", k))
        for k in ["longprefix:xy", "key:9", "key:10", "abq"]:
            r.append(reply(c, "SET", k, "v"))
        r.append(reply(c, "GET", "key:1"))
        a.cmd("ACL", "SETUSER", "rep", "resetkeys", "~other:*")
        r += [reply(c, "GET", "key:1"), reply(c, "GET", "other:1"), reply(c, "GET", "other:2")]
        a.cmd("ACL", "SETUSER", "rep", "allkeys")
        r += [reply(c, "GET", "key:1"), reply(c, "GET", "zzz")]
        a.cmd("ACL", "SETUSER", "rep", "resetkeys", "-get")
        r += [reply(c, "GET", "key:1"), reply(c, "GET", "zzz")]
        got.append(r)
        a.cmd("ACL", "DELUSER", "rep")
        for x in (a, c):
            x.close()
    assert got[0] == got[1]
    assert ("error" in str(got[0][3])) and got[0][1] is None  # kez:1 denied, key:1 allowed


# ---- the permission matrix ----
SKIP = {
    "shutdown", "debug", "monitor", "sync", "psync", "replconf", "replicaof", "slaveof",
    "failover", "quit", "reset", "auth", "hello", "multi", "save", "bgsave", "bgrewriteaof",
    "subscribe", "psubscribe", "ssubscribe", "client|pause", "client|kill", "acl|deluser",
    "acl|setuser", "acl|load", "acl|save", "config|set", "config|rewrite", "config|resetstat",
    "cluster|reset", "cluster|failover", "module|load", "module|loadex", "script|kill",
    "function|kill", "client|reply", "wait", "waitaof", "client|no-evict", "swapdb",
}


def command_lines(srv):
    c = srv.client()
    out = {}
    for e in c.cmd("COMMAND"):
        name, arity = e[0].decode(), e[1]
        subs = e[9] if len(e) > 9 else []
        if subs:
            for s in subs:
                sub, sa = s[0].decode(), s[1]
                out[sub] = (sub.split("|"), sa)
        else:
            out[name] = ([name], arity)
    c.close()
    return out


def matrix(srv, user, names, table, filler):
    res = {}
    c = srv.client(single_connection_client=True)
    assert c.cmd("AUTH", user, "pw") == b"OK"
    for name in names:
        words, arity = table[name]
        n = arity if arity > 0 else -arity
        args = list(words) + [filler] * max(0, n - len(words))
        r = reply(c, *args)
        if r == ("closed",):
            c = srv.client(single_connection_client=True)
            c.cmd("AUTH", user, "pw")
        res[name] = r[1] if isinstance(r, tuple) and len(r) > 1 and r[1].startswith("NOPERM") else "-"
    c.close()
    return res


@pytest.mark.parametrize("user,filler", [("app", "x"), ("app", "app:x"), ("nodanger", "x")])
def test_permission_matrix(tc_server, redis_server, user, filler):
    tables = [command_lines(s) for s in (tc_server, redis_server)]
    names = sorted(n for n in set(tables[0]) & set(tables[1]) if n not in SKIP)
    assert len(names) > 200
    got = []
    for s, t in zip((tc_server, redis_server), tables):
        a = setup_users(s)
        got.append(matrix(s, user, names, t, filler))
        a.cmd("FLUSHALL")
        a.close()
    diff = {n: (got[0][n], got[1][n]) for n in names if got[0][n] != got[1][n]}
    assert diff == {}
    denied = sum(1 for v in got[1].values() if v != "-")
    assert denied > (100 if filler == "x" and user == "app" else 0 if user == "app" else 20)


def test_exec_rechecks_and_off_keeps_connection(tc_server, redis_server):
    """EXEC checks each queued command again (Redis's "ACLs rules changed" NOPERM, logged with
    context multi); SETUSER off does not close the user's connections in Redis 7.0."""
    got = []
    for s in (tc_server, redis_server):
        a = setup_users(s)
        a.cmd("ACL", "SETUSER", "pu", "reset", "on", ">pw", "~*", "&*", "+@all")
        c = s.client(single_connection_client=True)
        r = [reply(c, "AUTH", "pu", "pw"), reply(c, "MULTI"), reply(c, "GET", "x"),
             reply(c, "SET", "k:1", "v"), reply(c, "PUBLISH", "ch", "m"), reply(c, "PING")]
        a.cmd("ACL", "SETUSER", "pu", "-get", "resetkeys", "~j:*", "resetchannels")
        r.append([("error", str(x)) if isinstance(x, Exception) else x for x in reply(c, "EXEC")])
        a.cmd("ACL", "SETUSER", "pu", "off")
        r.append(reply(c, "PING"))
        r.append(log_of(a))
        a.cmd("ACL", "DELUSER", "pu")
        got.append(r)
        a.close()
        c.close()
    assert got[0] == got[1]


def test_subscribers_of_disallowed_channels_closed(tc_server, redis_server):
    """SETUSER narrowing a user's channels closes its connections subscribed to a channel (or
    pattern) they no longer allow, as Redis 7.0; others, and allowed subscribers, stay."""
    import socket
    import time

    def raw(s, *a):
        s.sendall(("*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a)).encode())
        time.sleep(0.1)
        try:
            return s.recv(65536)
        except OSError:
            return b"error"

    got = []
    for srv in (tc_server, redis_server):
        a = srv.client()
        a.cmd("ACL", "SETUSER", "psu", "reset", "on", ">pw", "~*", "&ch*", "&keep", "+@all")
        conns = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(4)]
        for c in conns:
            c.settimeout(0.5)
            raw(c, "AUTH", "psu", "pw")
        r = [raw(conns[0], "SUBSCRIBE", "ch1"), raw(conns[1], "PSUBSCRIBE", "ch*"),
             raw(conns[2], "SUBSCRIBE", "keep")]
        a.cmd("ACL", "SETUSER", "psu", "resetchannels", "&keep", "&ch1")
        r += [raw(c, "PING") for c in conns]
        a.cmd("ACL", "DELUSER", "psu")
        for c in conns:
            c.close()
        a.close()
        got.append(r)
    assert got[0] == got[1]
    assert got[0][3] != b"" and got[0][4] == b""  # ch1 allowed still; the pattern ch* is not
