"""The aclfile (ACL LOAD / ACL SAVE), `user` lines given at start-up, acllog-max-len and
acl-pubsub-default against redis-server 7.0: the same users, file contents and error texts
(file paths differ between the two servers and are replaced by FILE)."""

import os
import shutil
import tempfile

import pytest
import redis

from conftest import CLIENT, tcharness, reply
from test_acl_users import norm_rules


@pytest.fixture(scope="module")
def pair():
    """(twincache, redis-server), each with its own aclfile"""
    dirs = [tempfile.mkdtemp(prefix="acl2-") for _ in range(2)]
    files = [os.path.join(d, "users.acl") for d in dirs]
    for f in files:
        with open(f, "w") as fh:
            fh.write("user alice on >pw ~* &* +@all\n")
    tc = tcharness.start_twincache("--aclfile", files[0], check=True, client_defaults=CLIENT)
    rs = tcharness.start_redis("--aclfile", files[1], client_defaults=CLIENT)
    yield [(tc, files[0]), (rs, files[1])]
    tc.stop()
    rs.stop()
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


def both(pair, content, *cmds):
    out = []
    for srv, f in pair:
        if content is not None:
            with open(f, "w") as fh:
                fh.write(content)
        c = srv.client()
        r = []
        for args in cmds:
            x = reply(c, *args)
            if isinstance(x, tuple) and len(x) > 1:
                x = (x[0], x[1].replace(f, "FILE"))
            if args[:2] == ("ACL", "LIST"):
                x = [norm_rules(u) for u in x]
            r.append(x)
        c.close()
        out.append(r)
    return out


def test_loaded_at_start(pair):
    got = both(pair, None, ("ACL", "LIST"))
    assert got[0] == got[1]
    assert any("user alice " in u for u in got[0][0])


BAD = [
    "user alice on >pw ~* +@all bogus +nosuch\n",
    "foo bar\n",
    "user bob (+get\n",
    "\n# comment\n",
    "user alice on\nuser alice off\n",
    "user\n",
    "user a b\n",
    "user x ~* ~a\n",
    "user x #abc\n",
    "user x on >pw\nuser y (nosuch) +get\n",
]


@pytest.mark.parametrize("content", BAD, ids=range(len(BAD)))
def test_load_errors_same(pair, content):
    got = both(pair, content, ("ACL", "LOAD"), ("ACL", "LIST"))
    assert got[0] == got[1]
    assert got[0][0][0] == "error"


GOOD = [
    "user bob on nopass ~x +get\r\nuser default on nopass ~* &* +@all -flushall\n",
    "user bob on nopass ~x +get\n",
    "  user carol on >pw %R~r:* &c* +@read (+set ~w:*)\n\n",
    "user zed off\nuser amy on nopass allkeys allcommands\n",
]


@pytest.mark.parametrize("content", GOOD, ids=range(len(GOOD)))
def test_load_same(pair, content):
    got = both(pair, content, ("ACL", "LOAD"), ("ACL", "LIST"), ("ACL", "USERS"))
    assert got[0] == got[1]
    both(pair, "user default on nopass ~* &* +@all\n", ("ACL", "LOAD"))


def test_save_same(pair):
    both(pair, "user default on nopass ~* &* +@all\n", ("ACL", "LOAD"))
    got = both(pair, None, ("ACL", "SETUSER", "zed", "on", ">p", "(+get ~x)"),
               ("ACL", "SETUSER", "amy", "on", "%R~a", "&c", "+@read", "-get"), ("ACL", "SAVE"))
    assert got[0] == got[1]
    texts = []
    for srv, f in pair:
        with open(f) as fh:
            texts.append(sorted(norm_rules(l) for l in fh.read().splitlines()))
    assert texts[0] == texts[1]
    # and it loads back
    got = both(pair, None, ("ACL", "LOAD"), ("ACL", "LIST"))
    assert got[0] == got[1]
    both(pair, "user default on nopass ~* &* +@all\n", ("ACL", "LOAD"))


def test_load_closes_connections_of_old_users(pair):
    got = []
    for srv, f in pair:
        with open(f, "w") as fh:
            fh.write("user default on nopass ~* &* +@all\nuser u on >pw ~* +@all\n")
        a = srv.client()
        a.cmd("ACL", "LOAD")
        c = srv.client(single_connection_client=True)
        d = srv.client(single_connection_client=True)
        r = [reply(c, "AUTH", "u", "pw"), reply(d, "PING"), reply(a, "ACL", "LOAD"),
             reply(c, "PING"), reply(d, "PING")]
        got.append(r)
        for x in (a, c, d):
            x.close()
    assert got[0] == got[1]


def test_no_aclfile_errors(tc, rs):
    for args in (("ACL", "SAVE"), ("ACL", "LOAD")):
        assert reply(tc, *args) == reply(rs, *args)


def test_user_lines_at_start():
    args = ("--user", "alice", "on", ">pw", "~app:*", "+@all", "--user", "bob", "off")
    tc = tcharness.start_twincache(*args, check=True, client_defaults=CLIENT)
    rs = tcharness.start_redis(*args, client_defaults=CLIENT)
    try:
        got = []
        for s in (tc, rs):
            c = s.client()
            got.append([norm_rules(u) for u in c.cmd("ACL", "LIST")])
            c.close()
            d = s.client(single_connection_client=True)
            got.append((reply(d, "AUTH", "alice", "pw"), reply(d, "GET", "x")))
            d.close()
        assert got[0:2] == got[2:4]
    finally:
        tc.stop()
        rs.stop()


def test_acllog_max_len_and_pubsub_default(tc, rs):
    got = []
    for c in (tc, rs):
        c.cmd("ACL", "LOG", "RESET")
        r = [reply(c, "CONFIG", "SET", "acllog-max-len", "2")]
        for u in ("a", "b", "c", "d"):
            d = c.connection_pool  # noqa: F841 (a failing AUTH on a connection of its own)
            r.append(reply(c, "AUTH", u, "x"))
        r.append(len(c.cmd("ACL", "LOG")))
        r.append(reply(c, "CONFIG", "GET", "acllog-max-len"))
        r.append(reply(c, "CONFIG", "SET", "acllog-max-len", "128"))
        r.append(reply(c, "CONFIG", "GET", "acl-pubsub-default"))
        r.append(reply(c, "CONFIG", "SET", "acl-pubsub-default", "allchannels"))
        c.cmd("ACL", "SETUSER", "q")
        r.append([norm_rules(u) for u in c.cmd("ACL", "LIST") if u.startswith(b"user q")])
        c.cmd("ACL", "SETUSER", "q", "reset")
        r.append([norm_rules(u) for u in c.cmd("ACL", "LIST") if u.startswith(b"user q")])
        r.append(reply(c, "CONFIG", "SET", "acl-pubsub-default", "resetchannels"))
        c.cmd("ACL", "DELUSER", "q")
        c.cmd("ACL", "LOG", "RESET")
        got.append(r)
    assert got[0] == got[1]


def test_config_rewrite_writes_user_lines(tmp_path):
    """Without an aclfile, CONFIG REWRITE replaces the config file's `user` lines with the
    users as they are now (Redis's rewriteConfigUserOption); a restart from the file has
    them."""
    got = []
    for kind in ("tc", "redis"):
        conf = tmp_path / ("%s.conf" % kind)
        conf.write_text("user old on >x ~* +@all\nuser alice off\n")
        start = tcharness.start_twincache if kind == "tc" else tcharness.start_redis
        kw = {"check": True} if kind == "tc" else {}
        s = start(config_file=str(conf), client_defaults=CLIENT, **kw)
        try:
            c = s.client()
            c.cmd("ACL", "SETUSER", "alice", "on", ">pw", "~app:*", "+get")
            c.cmd("ACL", "DELUSER", "old")
            c.cmd("ACL", "SETUSER", "carol", "on", "nopass", "%R~r:*", "+@read")
            assert c.cmd("CONFIG", "REWRITE") == b"OK"
            lines = [l for l in conf.read_text().splitlines() if l.startswith("user ")]
            got.append(sorted(norm_rules(l.encode()) for l in lines))
            before = sorted(norm_rules(u) for u in c.cmd("ACL", "LIST"))
            c.close()
        finally:
            s.stop()
        s = start(config_file=str(conf), client_defaults=CLIENT, **kw)
        try:
            c = s.client()
            got.append((before, sorted(norm_rules(u) for u in c.cmd("ACL", "LIST"))))
            c.close()
        finally:
            s.stop()
    for a, b in zip(got[0:2], got[2:4]):
        assert a == b, (a, b)
    assert any("carol" in str(u) for u in got[0]) and not any(" old " in str(u) for u in got[0])


def test_relative_aclfile_in_dir(tmp_path):
    """A relative aclfile is read and written in `dir` (Redis changes its working directory
    to it), at start-up, by ACL LOAD and by ACL SAVE."""
    (tmp_path / "rel.acl").write_text("user carol on >pw ~* &* +@all\n")
    srv = tcharness.start_twincache("--dir", str(tmp_path), "--aclfile", "rel.acl",
                                    check=True, client_defaults=CLIENT)
    try:
        c = srv.client()
        assert any(b"user carol " in u for u in c.cmd("ACL", "LIST"))
        c.cmd("ACL", "SETUSER", "dave", "on", ">x")
        assert c.cmd("ACL", "SAVE") == b"OK"
        assert "user dave " in (tmp_path / "rel.acl").read_text()
        (tmp_path / "rel.acl").write_text("user erin on >pw ~* &* +@all\n")
        assert c.cmd("ACL", "LOAD") == b"OK"
        names = c.cmd("ACL", "USERS")
        assert b"erin" in names and b"dave" not in names
        c.close()
    finally:
        srv.stop()
