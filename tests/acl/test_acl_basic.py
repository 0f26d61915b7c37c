"""ACL's default-user subcommands (WHOAMI, USERS, LIST, GETUSER, DRYRUN, CAT, GENPASS, SAVE,
LOAD, HELP) against redis-server 7.0:
same replies, same error texts. ACL CAT <category> is compared as a set of command names over
the commands both servers have (the tables differ by a few commands)."""

import re
import socket

import pytest
import redis
from conftest import reply


SAME = [
    ("ACL", "WHOAMI"),
    ("ACL", "USERS"),
    ("ACL", "CAT"),
    ("ACL", "CAT", "nosuchcat"),
    ("ACL", "CAT", "read", "extra"),
    ("ACL", "GENPASS", "0"),
    ("ACL", "GENPASS", "-1"),
    ("ACL", "GENPASS", "4097"),
    ("ACL", "GENPASS", "abc"),
    ("ACL", "GENPASS", "1", "2"),
    ("ACL", "WHOAMI", "x"),
    ("ACL", "USERS", "x"),
    ("ACL", "NOSUCHSUB"),
    ("ACL", "LIST"),
    ("ACL", "LIST", "x"),
    ("ACL", "GETUSER", "default"),
    ("ACL", "GETUSER", "nobody"),
    ("ACL", "GETUSER", "DEFAULT"),
    ("ACL", "GETUSER"),
    ("ACL", "DRYRUN", "default", "get", "k"),
    ("ACL", "DRYRUN", "default", "get"),
    ("ACL", "DRYRUN", "default", "get", "k", "x"),
    ("ACL", "DRYRUN", "default", "set", "k", "v", "EX", "10"),
    ("ACL", "DRYRUN", "default", "nosuch", "k"),
    ("ACL", "DRYRUN", "default", "config"),
    ("ACL", "DRYRUN", "default", "config", "get", "x"),
    ("ACL", "DRYRUN", "default", "config", "nosuch"),
    ("ACL", "DRYRUN", "default", "config", "get"),
    ("ACL", "DRYRUN", "default", "flushall"),
    ("ACL", "DRYRUN", "nobody", "get", "k"),
    ("ACL", "DRYRUN", "default"),
    ("ACL", "SAVE"),
    ("ACL", "LOAD"),
    ("ACL", "SAVE", "x"),
    ("ACL",),
    ("ACL", "HELP"),
]


@pytest.mark.parametrize("args", SAME, ids=lambda a: " ".join(a))
def test_same_reply(tc, rs, args):
    assert reply(tc, *args) == reply(rs, *args)


@pytest.mark.parametrize("bits,length", [(None, 64), ("1", 1), ("4", 1), ("5", 2), ("128", 32),
                                         ("4096", 1024), ("255", 64)])
def test_genpass_length(tc, rs, bits, length):
    args = ("ACL", "GENPASS") + ((bits,) if bits else ())
    for c in (tc, rs):
        p = c.cmd(*args)
        assert len(p) == length
        assert re.fullmatch(rb"[0-9a-f]+", p)
    assert tc.cmd(*args) != tc.cmd(*args) or length == 1


def test_cat_members(tc, rs):
    cats = [x.decode() for x in rs.cmd("ACL", "CAT")]
    tc_all = {x.decode() for x in tc.cmd("COMMAND", "LIST")}
    rs_all = {x.decode() for x in rs.cmd("COMMAND", "LIST")}
    both = tc_all & rs_all
    assert len(both) > 200
    for cat in cats:
        a = {x.decode() for x in tc.cmd("ACL", "CAT", cat)}
        b = {x.decode() for x in rs.cmd("ACL", "CAT", cat)}
        assert a <= tc_all, cat
        assert a & both == b & both, (cat, sorted((a ^ b) & both))
    # case-insensitive category names
    assert set(tc.cmd("ACL", "CAT", "DANGEROUS")) == set(tc.cmd("ACL", "CAT", "dangerous"))


def test_help_names_subcommands(tc):
    lines = [x.decode() for x in tc.cmd("ACL", "HELP")]
    assert lines[0].startswith("ACL <subcommand>")
    for sub in ("CAT", "USERS", "WHOAMI", "GENPASS", "HELP"):
        assert any(line.startswith(sub) for line in lines), sub


def test_command_info_acl(tc, rs):
    a = tc.cmd("COMMAND", "INFO", "acl")[0]
    b = rs.cmd("COMMAND", "INFO", "acl")[0]
    assert a[0] == b[0] == b"acl"
    assert a[1] == b[1] == -2


@pytest.mark.parametrize("pw", ["foo", "", "x" * 55, "y" * 56, "z" * 64, "p" * 200, "\u00e9t\u00e9"])
def test_requirepass_hash(tc, rs, pw):
    """requirepass shows as the default user's SHA-256 password hash in LIST and GETUSER
    (lengths around the hash's 64-byte block padding edges)."""
    try:
        for c in (tc, rs):
            c.cmd("CONFIG", "SET", "requirepass", pw)
            if pw:
                c.cmd("AUTH", pw)
        for args in (("ACL", "LIST"), ("ACL", "GETUSER", "default")):
            assert tc.cmd(*args) == rs.cmd(*args)
    finally:
        for c in (tc, rs):
            c.cmd("CONFIG", "SET", "requirepass", "")


def raw_resp3(srv, *cmd):
    """The exact bytes of one command's reply on a RESP3 (HELLO 3) connection: each request is
    followed by a PING, so the reply ends where +PONG starts."""
    def roundtrip(sock, line):
        sock.sendall(line + b"PING\r\n")
        data = b""
        while not data.endswith(b"+PONG\r\n"):
            d = sock.recv(65536)
            assert d, data
            data += d
        return data[:-len(b"+PONG\r\n")]
    req = b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in cmd)
    with socket.create_connection((srv.host, srv.port), timeout=10) as sock:
        roundtrip(sock, b"HELLO 3\r\n")
        return roundtrip(sock, req)


@pytest.mark.parametrize("cmd", [(b"ACL", b"GETUSER", b"default"), (b"ACL", b"GETUSER", b"x"),
                                 (b"ACL", b"LIST"), (b"ACL", b"USERS"), (b"ACL", b"WHOAMI")])
def test_resp3_bytes(tc_server, redis_server, cmd):
    assert raw_resp3(tc_server, *cmd) == raw_resp3(redis_server, *cmd)
