"""ACL's stateless subcommands (WHOAMI, USERS, CAT, GENPASS, HELP) against redis-server 7.0:
same replies, same error texts. ACL CAT <category> is compared as a set of command names over
the commands both servers have (the tables differ by a few commands)."""

import re

import pytest
import redis


def reply(c, *args):
    try:
        return c.cmd(*args)
    except redis.exceptions.ResponseError as e:
        return ("error", str(e))


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
    ("ACL",),
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
