"""ACL users against redis-server 7.0: ACL SETUSER with every rule (and its error texts), then
GETUSER / LIST / USERS compared; DELUSER; AUTH and HELLO AUTH with other users; WRONGPASS.

The command rules ACL LIST prints are compared exactly up to the last category; the single
commands after them come in the order of Redis's command dict, which is hashed with a seed
drawn at start-up (it changes from run to run of redis-server), so they are compared as a
set."""

import re

import pytest
import redis
from conftest import reply

HASH = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"  # "password"


def norm_rules(s):
    """A description with its runs of single-command rules sorted (see the module doc)."""
    if isinstance(s, bytes):
        s = s.decode()
    s = s.replace("(", "( ").replace(")", " )")
    out, run = [], []
    for t in s.split(" "):
        if len(t) > 1 and t[0] in "+-" and t[1] != "@":
            run.append(t)
            continue
        out += sorted(run)
        run = []
        out.append(t)
    out += sorted(run)
    return " ".join(out)


def norm_getuser(r):
    if not isinstance(r, list):
        return r
    d = dict(zip(r[0::2], r[1::2]))
    d[b"commands"] = norm_rules(d[b"commands"])
    d[b"selectors"] = [
        {k: (norm_rules(v) if k == b"commands" else v) for k, v in zip(s[0::2], s[1::2])}
        for s in d[b"selectors"]
    ]
    return d


def state(c, name="t"):
    users = reply(c, "ACL", "LIST")
    line = [norm_rules(u) for u in users if u.startswith(("user %s " % name).encode())]
    return norm_getuser(reply(c, "ACL", "GETUSER", name)), line, reply(c, "ACL", "USERS")


RULES = [
    [],
    ["on"],
    ["off"],
    ["on", "off"],
    [">pw"],
    [">pw", ">pw2", "<pw"],
    [">pw", ">pw"],
    ["#" + HASH],
    ["#" + HASH, "!" + HASH],
    ["#abc"],
    ["#" + HASH.upper()],
    ["!abc"],
    ["!" + HASH],
    ["<nope"],
    ["nopass"],
    [">pw", "nopass"],
    ["nopass", ">pw"],
    [">pw", "resetpass"],
    ["~app:*"],
    ["~app:*", "~app:*"],
    ["%R~r:*", "%W~w:*", "%RW~rw:*", "%WR~wr:*"],
    ["%R~a", "%W~a"],
    ["%r~lower"],
    ["%X~a"],
    ["%RR~a"],
    ["%R"],
    ["%~a"],
    ["~a b"],
    ["allkeys", "~a"],
    ["~a", "allkeys"],
    ["~*", "%R~a"],
    ["~a", "resetkeys", "~b"],
    ["&ch"],
    ["&ch", "&ch", "&c*"],
    ["allchannels", "&x"],
    ["&*", "&x"],
    ["&a", "resetchannels", "&b"],
    ["&a", "allchannels"],
    ["+get"],
    ["+GET"],
    ["+nosuch"],
    ["-nosuch"],
    ["+"],
    ["-"],
    ["+@"],
    ["+config|get"],
    ["+config|nosuch"],
    ["+config|"],
    ["+config|get|x"],
    ["+config", "-config|get"],
    ["+config|get", "+config"],
    ["+@all", "-config|get", "+config"],
    ["+select|0"],
    ["+select|0", "+select|1", "+select"],
    ["+select|0", "-select"],
    ["-select|0"],
    ["+@read"],
    ["+@READ"],
    ["+@nosuch"],
    ["-@nosuch"],
    ["+@all"],
    ["-@all"],
    ["allcommands"],
    ["nocommands"],
    ["+@all", "-@dangerous"],
    ["+@all", "-@dangerous", "+flushall"],
    ["allcommands", "-get"],
    ["+@all", "-get", "+get"],
    ["nocommands", "+get"],
    ["+@all", "-@write", "+set"],
    ["+@set", "-sadd"],
    ["+get", "+set", "-get"],
    ["+get", "+@string"],
    ["+@string", "-@string", "+get"],
    ["+@read", "+@write", "-@read"],
    ["+@read", "-@set"],
    ["+@hash", "+@list", "-@write"],
    ["+@admin", "+@dangerous"],
    ["+@pubsub", "+@connection", "+@transaction", "+@scripting"],
    ["+@keyspace", "-del"],
    ["+@all", "-@slow"],
    ["+@fast", "+@blocking"],
    ["(+get ~x)"],
    ["(+get", "~x)"],
    ["(+get", "~x", "&c)"],
    ["(+get"],
    ["(+get", "x"],
    ["(~a ~*"],
    ["(+get ~x)", "(+set ~y)"],
    ["(+get ~x)", "clearselectors"],
    ["(~x %R~y &c +@read -get)"],
    ["(nosuch)"],
    ["(on)"],
    ["(+nosuch)"],
    ["()"],
    ["(allkeys ~x)"],
    ["reset"],
    ["on", ">pw", "~*", "+@all", "reset"],
    ["skip-sanitize-payload"],
    ["sanitize-payload"],
    ["skip-sanitize-payload", "sanitize-payload"],
    ["", "on"],
    ["bogus"],
    ["ON", "NOPASS", "ALLKEYS", "ALLCHANNELS", "ALLCOMMANDS"],
    ["on", ">pw", "~app:*", "&news.*", "+@read", "-keys", "(+set ~app:w:*)"],
]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: " ".join(r) or "none")
def test_setuser_same(tc, rs, rules):
    got = []
    for c in (tc, rs):
        c.cmd("ACL", "DELUSER", "t")
        r = reply(c, "ACL", "SETUSER", "t", *rules)
        got.append((r, state(c)))
        c.cmd("ACL", "DELUSER", "t")
    assert got[0] == got[1]


def test_setuser_twice_keeps_rules(tc, rs):
    got = []
    for c in (tc, rs):
        c.cmd("ACL", "DELUSER", "t")
        c.cmd("ACL", "SETUSER", "t", "on", ">a", "~x", "+get")
        r = reply(c, "ACL", "SETUSER", "t", "+set", "~y", "+nosuch")  # fails: nothing changes
        got.append((r, state(c)))
        c.cmd("ACL", "SETUSER", "t", "+set", "~y")
        got.append(state(c))
        c.cmd("ACL", "DELUSER", "t")
    assert got[0:2] == got[2:4]


@pytest.mark.parametrize("args", [
    ("ACL", "SETUSER", "a b"),
    ("ACL", "SETUSER", "a\x00b"),
    ("ACL", "SETUSER"),
    ("ACL", "DELUSER"),
    ("ACL", "DELUSER", "default"),
    ("ACL", "DELUSER", "nobody"),
    ("ACL", "DELUSER", "nobody", "default"),
    ("ACL", "GETUSER", "nobody"),
], ids=lambda a: " ".join(a))
def test_errors_same(tc, rs, args):
    assert reply(tc, *args) == reply(rs, *args)


def test_users_sorted_and_deluser_count(tc, rs):
    got = []
    for c in (tc, rs):
        for n in ("zed", "alice", "Bob", "_x"):
            c.cmd("ACL", "SETUSER", n)
        got.append((reply(c, "ACL", "USERS"), [norm_rules(x) for x in reply(c, "ACL", "LIST")],
                    reply(c, "ACL", "DELUSER", "zed", "alice", "nobody", "zed"),
                    reply(c, "ACL", "DELUSER", "Bob", "_x"), reply(c, "ACL", "USERS")))
    assert got[0] == got[1]


def per_conn(srv, *cmds):
    c = srv.client(single_connection_client=True)
    try:
        out = []
        for args in cmds:
            r = reply(c, *args)
            if isinstance(r, list) and args[0] == "HELLO":
                r = "hello-ok"
            out.append(r)
        return out
    finally:
        c.close()


AUTHS = [
    [("AUTH", "alice", "pw"), ("ACL", "WHOAMI"), ("GET", "k")],
    [("AUTH", "alice", "bad"), ("ACL", "WHOAMI")],
    [("AUTH", "Alice", "pw")],
    [("AUTH", "alice", "pw2"), ("ACL", "WHOAMI")],
    [("AUTH", "bob", "anything"), ("ACL", "WHOAMI")],
    [("AUTH", "carol", "pw")],
    [("AUTH", "nobody", "pw")],
    [("HELLO", "2", "AUTH", "alice", "pw"), ("ACL", "WHOAMI")],
    [("HELLO", "2", "AUTH", "bob", "x", "SETNAME", "n"), ("CLIENT", "GETNAME")],
    [("HELLO", "2", "AUTH", "alice", "bad"), ("ACL", "WHOAMI")],
    [("HELLO", "2", "AUTH", "carol", "pw")],
    [("AUTH", "alice", "pw"), ("RESET",), ("ACL", "WHOAMI")],
    [("AUTH", "alice", "pw"), ("AUTH", "bob", "x"), ("ACL", "WHOAMI")],
    [("AUTH", "alice", "pw"), ("AUTH", "alice", "bad"), ("ACL", "WHOAMI")],
]


@pytest.mark.parametrize("cmds", AUTHS, ids=lambda c: " / ".join(" ".join(a) for a in c))
def test_auth_users_same(tc_server, redis_server, cmds):
    got = []
    for srv in (tc_server, redis_server):
        a = srv.client()
        a.cmd("ACL", "SETUSER", "alice", "reset", "on", ">pw", ">pw2", "~*", "&*", "+@all")
        a.cmd("ACL", "SETUSER", "bob", "reset", "on", "nopass", "~*", "+@all")
        a.cmd("ACL", "SETUSER", "carol", "reset", "off", ">pw", "~*", "+@all")
        got.append(per_conn(srv, *cmds))
        a.cmd("ACL", "DELUSER", "alice", "bob", "carol")
        a.close()
    assert got[0] == got[1]


def test_requirepass_is_default_password(tc, rs):
    got = []
    for c in (tc, rs):
        c.cmd("CONFIG", "SET", "requirepass", "secret")
        try:
            c.cmd("AUTH", "secret")
            got.append(state(c, "default"))
            c.cmd("ACL", "SETUSER", "default", ">other")
            got.append(state(c, "default"))
        finally:
            c.cmd("CONFIG", "SET", "requirepass", "")
            got.append(state(c, "default"))
            c.cmd("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all")
    assert got[0:3] == got[3:6]


def test_many_failing_auths_counted_and_others_served(tc_server, redis_server):
    """20,000 wrong passwords pipelined on one connection: each answered WRONGPASS, one ACL
    LOG entry counts them all (as Redis groups them), and another client is served meanwhile."""
    import socket
    got = []
    n = 20000
    for s in (tc_server, redis_server):
        a = s.client()
        a.cmd("ACL", "LOG", "RESET")
        a.cmd("ACL", "SETUSER", "victim", "on", ">right", "~*", "+@all")
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        sock.sendall(b"*3\r\n$4\r\nAUTH\r\n$6\r\nvictim\r\n$5\r\nwrong\r\n" * n)
        other = s.client()
        assert other.cmd("PING") in (b"PONG", True)
        data = b""
        want = n * len(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n")
        while len(data) < want:
            chunk = sock.recv(1 << 20)
            assert chunk
            data += chunk
        sock.close()
        lines = data.split(b"\r\n")[:-1]
        entry = a.cmd("ACL", "LOG", "1")[0]
        d = dict(zip(entry[0::2], entry[1::2]))
        got.append((len(lines), set(lines), d[b"count"], d[b"reason"], d[b"username"]))
        a.cmd("ACL", "DELUSER", "victim")
        a.close()
        other.close()
    assert got[0] == got[1]
    assert got[0][0] == n and got[0][2] == n
