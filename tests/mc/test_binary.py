"""memcached binary protocol: differential tests against memcached 1.6 (byte-for-byte replies,
CAS values masked to zero/non-zero) for every opcode with its quiet variant, errors and bad
input; plus what only twincache can show: SASL PLAIN, one keyspace with the text protocol, and a
client flooding quiet errors without reading."""

import os
import shutil
import socket
import struct
import tempfile
import time

import pytest

import tcharness
from mcbin import (OP, Bin, arith, masked, req, set_, start_memcached_sasl,
                   start_with_auth, touch)
from mcharness import Raw



pytestmark = pytest.mark.sanitize

BIG = 2 * 1024 * 1024

SEQS = {
    "get_family": [set_("set", "a", b"1", flags=5), req("get", "a"), req("getk", "a"),
                   req("getq", "zz"), req("getkq", "zz"), req("getk", "zz"), req("get", "zz"),
                   req("getkq", "a"), req("getq", "a", opaque=77)],
    "store_family": [set_("add", "a", b"1"), set_("addq", "a", b"1"),
                     set_("replace", "nx", b"1"), set_("replaceq", "nx", b"1"),
                     set_("setq", "q", b"2", flags=0xdeadbeef), req("get", "q"),
                     req("append", "nx", value=b"x"), req("append", "a", value=b"x"),
                     req("prepend", "a", value=b"y"), req("get", "a"),
                     req("appendq", "nx", value=b"x"), req("prependq", "a", value=b"z"),
                     req("getk", "a"), set_("replace", "a", b"r"), set_("set", "e", b"")],
    "cas": [set_("set", "c", b"v"), set_("set", "c", b"v", cas=12345),
            set_("set", "nx2", b"v", cas=5), set_("add", "c", b"v", cas=5),
            set_("replace", "c", b"v", cas=5), req("append", "c", value=b"x", cas=5),
            req("delete", "c", cas=999), req("delete", "c"), req("delete", "c"),
            req("deleteq", "c"), set_("setq", "c", b"v"), req("deleteq", "c")],
    "arith": [arith("incr", "n", 1, 10, 0), arith("incr", "n", 5), arith("decr", "n", 100),
              arith("incr", "m", 1, 0, 0xffffffff), arith("incrq", "n", 1),
              arith("decrq", "m2", 1, 0, 0xffffffff), set_("set", "s", b"abc"),
              arith("incr", "s", 1), arith("incr", "n", 1, cas=77), req("get", "n"),
              arith("incr", "w", 2**64 - 1, 2**64 - 1, 0), arith("incr", "w", 2),
              arith("decrq", "w", 1), req("get", "w"), set_("set", "e", b""),
              arith("incr", "e", 1), set_("set", "sp", b"12 "), arith("incr", "sp", 1),
              arith("incr", "fresh", 3, 7, 100, opaque=9), req("get", "fresh")],
    "touch_gat": [set_("set", "t", b"v", flags=3), touch("touch", "t", 100),
                  touch("touch", "nx", 100), touch("gat", "t", 100), touch("gatk", "t", 0),
                  touch("gatq", "nx", 0), touch("gatkq", "nx", 0), touch("gatk", "nx", 0),
                  touch("gat", "nx", 0), touch("gatq", "t", 0), touch("gatkq", "t", 0),
                  touch("gat", "t", 0xffffffff), req("get", "t")],
    "misc": [req("version"), req("flush"), req("flushq"),
             req("flush", extras=struct.pack(">I", 0)), req("sasl_list"),
             req("sasl_auth", "PLAIN", value=b"\0a\0b"), req("sasl_step", "PLAIN", value=b"x"),
             req(0x55, value=b"xyz"), req(0x30), req("verbosity"), req("stat", "nosuch"),
             req("stat", "reset"), req("stat", "detail"), req("noop", opaque=5)],
    "big": [set_("set", "k", b"v"), set_("set", "k", b"x" * BIG), req("get", "k"),
            set_("setq", "k", b"x" * BIG), set_("set", "k", b"v"),
            req("append", "k", value=b"x" * BIG), req("prependq", "k", value=b"x" * BIG),
            set_("add", "k2", b"x" * BIG), req("get", "k"), set_("set", "m", b"x" * 500000),
            req("get", "m")],
    "unknown_with_body": [req(0x40, value=b"body")],
    "opaque_datatype_vbucket": [req("get", "x", opaque=0x01020304, datatype=1, vbucket=7)],
    # protocol errors: EINVAL, then memcached closes
    "key_too_long": [req("get", "a" * 251)],
    "get_body_mismatch": [req("get", "a", bodylen=5) + b"aaaaa"],
    "get_no_key": [req("get", "")],
    "set_no_extras": [req("set", "k", extras=b"\0" * 4, value=b"x")],
    "set_no_key": [set_("set", "", b"x")],
    "delete_extras": [req("delete", "k", extras=b"\0" * 4)],
    "noop_body": [req("noop", value=b"x")],
    "version_key": [req("version", "k")],
    "incr_short": [req("incr", "k", extras=b"\0" * 8)],
    "prepend_no_key": [req("prepend", "")],
    "touch_no_extras": [req("touch", "k")],
    "flush_bad_extras": [req("flush", extras=b"\0\0")],
    "stat_extras": [req("stat", extras=b"\0" * 4)],
    "sasl_list_body": [req("sasl_list", value=b"x")],
    "keylen_over_body": [req("get", "abc", bodylen=2)],
    "quit": [set_("set", "k", b"v"), req("quit"), req("get", "k")],
    "quitq": [req("quitq"), req("get", "k")],
    "bad_magic": [req("get", "a", magic=0x81)],
    "bad_magic_later": [req("version"), b"get a\r\n"],
}

# requests whose body is discarded for ever: compared on their first reply only
ONE_REPLY = {
    "huge_set": set_("set", "k", b"")[:8] + b"\xff\xff\xff\xff" + set_("set", "k", b"")[12:],
    "huge_append": req("append", "k", bodylen=0xffffffff),
    "huge_unknown": req(0x60, bodylen=0xffffffff),
    "huge_get": req("get", "k", bodylen=0xffffffff),
    "huge_sasl": req("sasl_auth", "PLAIN", bodylen=0xffffffff),
}


def run(port, data):
    b = Bin(port)
    try:
        b.until_noop(req("flush"))
        return masked(b.until_noop(data))
    finally:
        b.close()


@pytest.mark.parametrize("name", sorted(SEQS))
def test_differential(tc, memcached, name):
    data = b"".join(SEQS[name])
    want = run(memcached.mc_port, data)
    got = run(tc.mc_port, data)
    assert got == want


@pytest.mark.parametrize("name", sorted(ONE_REPLY))
def test_differential_first_reply(tc, memcached, name):
    got = []
    for srv in (memcached, tc):
        b = Bin(srv.mc_port)
        b.send(ONE_REPLY[name])
        r = b.read()
        got.append(r.masked() if r else None)
        b.close()
    assert got[1] == got[0]


def test_huge_keylen(tc):
    """memcached waits for a 64 KiB key before refusing it; twincache refuses at the header."""
    b = Bin(tc.mc_port)
    r = b.call(req("get", keylen=0xffff, bodylen=0xffff, opaque=8))
    assert r.masked() == (0x81, 0, 4, b"", b"", b"Invalid arguments", 8, 0, 0)
    assert b.read() is None
    b.close()


def test_unknown_opcode_with_key_keeps_stream(tc):
    """memcached discards an unknown request's body from after its key and extras (the stream
    loses sync); twincache discards exactly the body."""
    b = Bin(tc.mc_port)
    out = b.until_noop(req(0x40, key="k", extras=b"\1\2", value=b"body", opaque=4))
    assert masked(out) == [(0x81, 0x40, 0x81, b"", b"", b"Unknown command", 4, 0, 0)]
    b.close()


def test_stat_names(tc, memcached):
    """Every stat group answers with memcached's names, in its order, and a terminator."""
    for group in ("", "settings", "items", "slabs"):
        names = []
        for srv in (tc, memcached):
            b = Bin(srv.mc_port)
            b.until_noop(req("flush") + set_("set", "x", b"1"))
            out = b.until_noop(req("stat", group))
            b.close()
            assert out and out[-1][4] == b"" and out[-1][5] == b"" and out[-1][2] == 0
            assert all(r[1] == 0x10 and r[2] == 0 for r in out)
            names.append([r[4] for r in out])
        if group in ("", "settings"):
            assert names[0] == names[1], group


def test_pipelined_bytes_one_at_a_time(tc):
    """A request split into single bytes gives the same replies."""
    data = b"".join(SEQS["arith"]) + req("noop", opaque=0xfeedf00d)
    b = Bin(tc.mc_port)
    b.until_noop(req("flush"))
    for i in range(0, len(data), 7):
        b.send(data[i:i + 7])
        time.sleep(0.0005)
    out = []
    while True:
        r = b.read()
        if r[1] == 0x0a and r[6] == 0xfeedf00d:
            break
        out.append(r.masked())
    b.close()
    assert out == run(tc.mc_port, b"".join(SEQS["arith"]))


def test_one_keyspace_with_text(tc):
    """Binary and text (and RESP) see the same items; a CAS value handed out by either protocol
    is the one the other checks."""
    b = Bin(tc.mc_port)
    t = Raw(tc.mc_port)
    t.sync(b"set shared 7 0 3\r\nabc\r\n")
    r = b.call(req("get", "shared"))
    assert r.status == 0 and r.value == b"abc" and r[3] == struct.pack(">I", 7)
    gets = t.call(b"gets shared\r\n", b"END\r\n").split()
    assert int(gets[4]) == r.cas
    r2 = b.call(set_("set", "shared", b"new", flags=1, cas=r.cas))
    assert r2.status == 0
    assert t.call(b"cas shared 0 0 1 %d\r\nz\r\n" % r.cas) == b"EXISTS\r\n"
    assert t.call(b"cas shared 0 0 1 %d\r\nz\r\n" % r2.cas) == b"STORED\r\n"
    assert b.call(set_("set", "shared", b"q", cas=r2.cas)).status == 2
    assert t.call(b"incr shared 1\r\n") == b"CLIENT_ERROR cannot increment or decrement " \
        b"non-numeric value\r\n"
    assert b.call(arith("incr", "ctr", 1, 41, 0)).value == struct.pack(">Q", 41)
    assert t.call(b"incr ctr 1\r\n") == b"42\r\n"
    red = tc.client()
    assert red.get("ctr") == b"42"
    red.set("fromredis", "hello")
    assert b.call(req("get", "fromredis")).value == b"hello"
    b.close()
    t.close()


def test_quiet_flood_without_reading(tc):
    """A client sending quiet requests that all fail, never reading: the server stops reading it
    once its output passes the limit, others are served, and it closes cleanly."""
    b = Bin(tc.mc_port)
    b.until_noop(set_("set", "exists", b"1"))
    one = set_("addq", "exists", b"x" * 100)
    chunk = one * 2000
    b.s.setblocking(False)
    sent = 0
    deadline = time.time() + 3
    while time.time() < deadline and sent < (256 << 20):
        try:
            sent += b.s.send(chunk)
        except BlockingIOError:
            time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            break  # closed at the output limit, as for the text protocol
    assert sent > (1 << 20)
    other = Bin(tc.mc_port)
    assert other.call(req("version")).value
    other.close()
    b.close()
    tc.check_running()


def test_truncated_and_random_garbage(tc):
    """Half requests and garbage after a valid request: no crash, others served."""
    for data in (req("set", "k", extras=b"\0" * 8, value=b"v" * 100)[:50],
                 req("get", "k") + os.urandom(200), b"\x80" * 23,
                 req("sasl_auth", "PLAIN", bodylen=0x7fffffff)):
        s = socket.create_connection(("127.0.0.1", tc.mc_port))
        s.sendall(data)
        s.close()
    b = Bin(tc.mc_port)
    assert b.call(req("version")).status == 0
    b.close()


# ---- SASL PLAIN: memcached -S (cyrus-sasl, a sasldb) beside twincache with the same users ----

USERS = {"alice": "secret", "bob": "pa:ss"}
HOST = socket.gethostname().encode()


def auth(value, mech="PLAIN", op="sasl_auth", **kw):
    return req(op, mech, value=value, **kw)


def step(value, mech="PLAIN", **kw):
    return auth(value, mech, "sasl_step", **kw)


OK = auth(b"\0alice\0secret")
PROBE = req("noop", opaque=0x77)  # answered once logged in; else Auth failure and close
EDGE = 512 * 1024 - 56 - 1 - 2 - 5  # the longest PLAIN body memcached reads into one item

SASL_SEQS = {
    "list": [req("sasl_list")],
    "unauth_get": [req("get", "k", opaque=3)],
    "unauth_noop": [req("noop")],
    "unauth_quit": [req("quit")],
    "unauth_stat": [req("stat")],
    "unauth_quiet": [req("getq", "k"), req("sasl_list")],
    "right": [auth(b"\0alice\0secret", opaque=5), set_("set", "k", b"v"), req("get", "k")],
    "colon_password": [auth(b"\0bob\0pa:ss"), PROBE],
    "wrong": [auth(b"\0alice\0wrong"), req("sasl_list"), PROBE],
    "unknown_user": [auth(b"\0carol\0secret"), PROBE],
    "upper_user": [auth(b"\0ALICE\0secret"), PROBE],
    "empty_password": [auth(b"\0alice\0")],
    "no_nul": [auth(b"alicesecret")],
    "one_nul": [auth(b"alice\0secret")],
    "password_with_nul": [auth(b"\0alice\0sec\0ret")],
    "trailing_nul": [auth(b"\0alice\0secret\0")],
    "authzid_self": [auth(b"alice\0alice\0secret"), PROBE],
    "authzid_other": [auth(b"bob\0alice\0secret"), PROBE],
    "authzid_empty_user": [auth(b"alice\0\0secret")],
    "authzid_realm": [auth(b"alice@" + HOST + b"\0alice\0secret"), PROBE],
    "user_realm": [auth(b"alice\0alice@" + HOST + b"\0secret"), PROBE],
    "other_realm": [auth(b"\0alice@other\0secret"), PROBE],
    "empty_realm": [auth(b"\0alice@\0secret"), PROBE],
    "cram_md5": [auth(b"\0alice\0secret", "CRAM-MD5"), auth(b"", "CRAM-MD5")],
    "mech_lowercase": [auth(b"\0alice\0secret", "plain"), PROBE],
    "mech_mixed_case": [auth(b"\0alice\0secret", "PlAiN"), PROBE],
    "mech_nul": [auth(b"\0alice\0secret", "PLAIN\0x"), PROBE],
    "mech_space": [auth(b"\0alice\0secret", "PLAIN ")],
    "mech_32": [auth(b"\0alice\0secret", "P" * 32)],
    "mech_33": [auth(b"\0alice\0secret", "P" * 33), req("sasl_list"), PROBE],
    "step_33": [step(b"\0alice\0secret", "P" * 33), req("sasl_list")],
    "step_first": [step(b"\0alice\0secret"), PROBE],
    "continue_step": [auth(b""), step(b"\0alice\0secret"), PROBE],
    "continue_step_other_mech": [auth(b""), step(b"\0alice\0secret", "CRAM-MD5"), PROBE],
    "continue_wrong_then_right": [auth(b""), step(b"\0alice\0wrong"), step(b""),
                                  step(b"\0alice\0secret"), PROBE],
    "continue_twice": [auth(b""), auth(b""), step(b"\0alice\0secret"), PROBE],
    "continue_then_auth": [auth(b""), OK, step(b"\0alice\0secret"), PROBE],
    "continue_then_bad_mech": [auth(b""), auth(b"", "CRAM-MD5"), step(b"\0alice\0secret")],
    "continue_mech_33_step": [auth(b""), auth(b"x", "P" * 33), step(b"\0alice\0secret"), PROBE],
    "step_after_login": [OK, step(b"\0alice\0secret"), PROBE],
    "step_after_step_login": [auth(b""), step(b"\0alice\0secret"), step(b"\0alice\0secret")],
    "relogin_wrong_logs_out": [OK, auth(b"\0alice\0wrong"), PROBE],
    "relogin_continue_logs_out": [OK, auth(b""), PROBE],
    "wrong_auth_then_step": [auth(b"\0alice\0wrong"), step(b"\0alice\0secret"), PROBE],
    "login_keeps_after_mech_33": [OK, auth(b"x", "P" * 33), PROBE],
    "big_body": [OK, auth(b"x" * 2000), PROBE],
    "big_step": [auth(b""), step(b"x" * 2000), step(b"\0alice\0secret"), PROBE],
    "body_one_item": [auth(b"x" * EDGE), PROBE],
    "body_past_one_item": [OK, auth(b"x" * (EDGE + 1)), PROBE],
    "huge_body_keeps_login": [OK, auth(b"x" * 2000000), step(b"x" * 2000000), PROBE],
    "auth_extras": [req("sasl_auth", "PLAIN", extras=b"\0" * 4, value=b"\0alice\0secret")],
    "list_body": [req("sasl_list", value=b"x")],
    "auth_no_key": [req("sasl_auth", value=b"\0alice\0secret")],
}


@pytest.fixture(scope="module")
def sasl_pair(tmp_path_factory):
    """memcached -S -B binary with USERS in a sasldb, and twincache --memcache-sasl yes with
    them in its auth file."""
    got = start_memcached_sasl(USERS)
    if got is None:
        pytest.skip("saslpasswd2 (sasl2-bin) missing: scripts/install-deps.sh installs it")
    mc, d = got
    pw = tmp_path_factory.mktemp("sasl") / "pw"
    pw.write_text("".join("%s:%s\n" % kv for kv in USERS.items()))
    tc = start_with_auth("twincache", "--memcache-sasl", "yes", "--memcache-auth-file", str(pw))
    yield tc, mc
    tc.stop(check=True)
    mc.stop(check=False)
    shutil.rmtree(d, ignore_errors=True)


def sasl_converse(port, data):
    """Send data then a VERSION (answered logged in or not); every reply before the VERSION's,
    a trailing None when the server closed instead."""
    b = Bin(port)
    try:
        b.send(data + req("version", opaque=0xabcdef))
        out = []
        while True:
            r = b.read()
            if r is None:
                return out + [None]
            if r[1] == OP["version"] and r[6] == 0xabcdef:
                return out
            out.append(r.masked())
    finally:
        b.close()


@pytest.mark.parametrize("name", sorted(SASL_SEQS))
def test_sasl_differential(sasl_pair, name):
    tc, mc = sasl_pair
    data = b"".join(SASL_SEQS[name])
    assert sasl_converse(tc.mc_port, data) == sasl_converse(mc.mc_port, data)


def test_sasl_huge_body_first_reply(sasl_pair):
    """A body of 4 GiB: memcached's Out of memory at the header, the rest discarded."""
    got = []
    for srv in sasl_pair:
        b = Bin(srv.mc_port)
        r = b.call(auth(b"", bodylen=0xffffffff))
        got.append(r.masked() if r else None)
        b.close()
    assert got[0] == got[1] and got[0].status == 0x82


def sasl_stats(port):
    b = Bin(port)
    assert b.call(OK).status == 0
    b.send(req("stat"))
    st = {}
    while True:
        r = b.read()
        if not r[4]:
            break
        st[r[4].decode()] = r.value.decode()
    b.close()
    return int(st["auth_cmds"]), int(st["auth_errors"])


def test_sasl_auth_stats(sasl_pair):
    """auth_cmds counts every SASL AUTH/STEP that succeeded or failed (not AUTH_CONTINUE, not a
    refused header), auth_errors the failures: as memcached's."""
    data = b"".join([OK, auth(b"\0alice\0bad"), auth(b""), step(b""), auth(b"x", "P" * 33),
                     auth(b"x" * 2000), auth(b"x" * 2000000), step(b"\0alice\0secret"),
                     auth(b"\0carol\0x", "CRAM-MD5")])
    deltas = []
    for srv in sasl_pair:
        before = sasl_stats(srv.mc_port)
        sasl_converse(srv.mc_port, data)
        after = sasl_stats(srv.mc_port)
        deltas.append((after[0] - before[0], after[1] - before[1]))
    assert deltas[0] == deltas[1] == (6 + 1, 5)  # and the second login of sasl_stats


@pytest.fixture(scope="module")
def sasl_tc(tmp_path_factory):
    d = tmp_path_factory.mktemp("sasl")
    (d / "pw").write_text("alice:secret\nbob:pa:ss\n")
    srv = start_with_auth("twincache", "--memcache-sasl", "yes", "--memcache-auth-file",
                          str(d / "pw"))
    yield srv
    srv.stop(check=True)


def test_sasl_settings_visible(sasl_tc):
    red = sasl_tc.client()
    got = red.config_get("memcache-*")
    # memcache-sasl is fixed at start-up: hidden from globs (as Redis hides such settings),
    # shown by its exact name
    assert "memcache-sasl" not in got and got["memcache-auth-file"].endswith("pw")
    assert red.config_get("memcache-sasl")["memcache-sasl"] == "yes"


def test_sasl_memcached_command_line(tmp_path):
    """memcached's own flags: -S with -Y FILE (twincache's user list; memcached's is a sasldb)."""
    pw = tmp_path / "pw"
    pw.write_text("alice:secret\n")
    srv = tcharness.Server([str(tcharness.twincache_bin()), "-p", str(tcharness.free_port()),
                            "-l", "127.0.0.1", "-U", "0", "-S", "-Y", str(pw)] + tcharness.MC_AS_ROOT,
                           check=True)
    srv.mc_port = int(srv.argv[2])
    srv.ready = [(srv.mc_port, "tcp")]
    srv.start()
    try:
        assert sasl_converse(srv.mc_port, req("get", "k")) == [
            (0x81, 0, 0x20, b"", b"", b"Auth failure.", 0, 0, 0), None]
        got = sasl_converse(srv.mc_port, OK + PROBE)
        assert [r.status for r in got] == [0, 0]
    finally:
        srv.stop(check=True)


# ---- memcached 1.6's ASCII authentication (-Y / memcache-auth-file) on the text protocol ----

ASCII_AUTH = {
    "not_set_first": [b"get a\r\n", b"version\r\n"],
    "login": [b"set x 0 0 12\r\nalice secret\r\n", b"get a\r\n", b"version\r\n"],
    "wrong_then_right": [b"set x 0 0 11\r\nalice wrong\r\n", b"set x 0 0 12\r\nalice secret\r\n",
                         b"set k 0 0 1\r\nv\r\n", b"get k\r\n"],
    "one_token": [b"set x 0 0 5\r\nalice\r\n", b"version\r\n"],
    "bad_termination": [b"set x 0 0 12\r\nalice secretXX", b"version\r\n"],
    "short_set_line": [b"set x\r\n", b"set x 0 0\r\n"],
    "other_user": [b"set y 1 2 11\r\nbob pa:ss x\r\n", b"version\r\n"],
    "split_login": [b"set x 0 0 12\r", b"\nalice ", b"secret\r\n", b"version\r\n"],
}


@pytest.fixture(scope="module")
def auth_pair():
    d = tempfile.mkdtemp(prefix="tc-auth-")  # readable by memcached's user nobody
    pw = os.path.join(d, "pw")
    with open(pw, "w") as f:
        f.write("alice:secret\nbob:pa:ss\n")
    os.chmod(d, 0o755)
    os.chmod(pw, 0o644)
    mc = start_with_auth("memcached", "-Y", pw)
    tc = start_with_auth("twincache", "--memcache-auth-file", pw)
    yield tc, mc
    tc.stop(check=True)
    mc.stop(check=False)
    shutil.rmtree(d, ignore_errors=True)


def converse(port, steps):
    r = Raw(port)
    out = []
    for step in steps:
        r.send(step)
        got = b""
        r.s.settimeout(0.3)
        try:
            while True:
                d = r.s.recv(65536)
                if not d:
                    got += b"<closed>"
                    break
                got += d
                if got.endswith(b"\r\n"):
                    r.s.settimeout(0.05)
        except socket.timeout:
            pass
        out.append(got)
    r.close()
    return out


@pytest.mark.parametrize("name", sorted(ASCII_AUTH))
def test_ascii_auth_differential(auth_pair, name):
    tc, mc = auth_pair
    assert converse(tc.mc_port, ASCII_AUTH[name]) == converse(mc.mc_port, ASCII_AUTH[name])


def test_ascii_auth_long_junk_closes(auth_pair):
    tc, _ = auth_pair
    assert converse(tc.mc_port, [b"x" * 3000]) == [b"<closed>"]


def test_binary_writes_reach_the_aof():
    """Binary writes are logged like text ones: after a restart the AOF replays them."""
    srv = tcharness.start_twincache("--appendonly", "yes", mc=True, check=True)
    try:
        b = Bin(srv.mc_port)
        b.until_noop(set_("set", "a", b"1", flags=9) + arith("incr", "a", 5) +
                     req("append", "a", value=b"x") + set_("set", "d", b"z") +
                     req("delete", "d") + touch("gat", "a", 1000) +
                     arith("incr", "n", 1, 7, 0) + set_("setq", "q", b"v"))
        b.close()
        srv.restart()
        b = Bin(srv.mc_port)
        got = masked(b.until_noop(req("get", "a") + req("get", "d") + req("get", "n") +
                                  req("get", "q")))
        assert [(r.status, r[3], r.value) for r in got] == [
            (0, struct.pack(">I", 9), b"6x"), (1, b"", b"Not found"),
            (0, b"\0\0\0\0", b"7"), (0, b"\0\0\0\0", b"v")]
        b.until_noop(req("flushq"))
        b.close()
        srv.restart()
        b = Bin(srv.mc_port)
        assert b.call(req("get", "a")).status == 1
        b.close()
    finally:
        srv.stop(check=True)


def test_auth_file_without_sasl_guards_binary(auth_pair):
    """With only an auth file, a binary client must log in with SASL PLAIN too."""
    tc, _ = auth_pair
    b = Bin(tc.mc_port)
    assert b.call(req("get", "k")).status == 0x20
    assert b.read() is None
    b.close()
    b = Bin(tc.mc_port)
    assert b.call(req("sasl_auth", "PLAIN", value=b"\0alice\0secret")).status == 0
    assert b.call(req("get", "nokey")).status == 1
    b.close()
