"""A logged-in ACL user on the memcached port: memcached's admin and metadata commands are
checked as their nearest Redis command (stats: INFO, stats cachedump / lru_crawler metadump:
KEYS, verbosity / slabs / lru / lru_crawler settings: CONFIG SET, lru_crawler crawl: DEBUG,
watch: MONITOR, stats conns: CLIENT LIST, flush_all: FLUSHALL, me <key>: OBJECT IDLETIME <key>),
so a user without @dangerous / @admin cannot list other keys, read another key's metadata or
change settings. Denials are answered CLIENT_ERROR access denied (binary: Auth error) and
logged in ACL LOG."""

import os
import struct
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402

CLIENT = {"decode": False, "exact_errors": True, "raw": True}
DENIED = b"CLIENT_ERROR access denied\r\n"


@pytest.fixture(scope="module")
def srv():
    s = tcharness.start_twincache_mc_login(
        ["fileuser:fp"], "--memcache-sasl", "yes",
        "--user", "lim", "on", ">pw", "~app:*", "+@all", "-@dangerous", "-@admin",
        "--user", "ops", "on", ">pw", "~app:*", "+@all",
        "--user", "reader", "on", ">pw", "~*", "+@read", check=True, client_defaults=CLIENT)
    yield s
    s.stop()


def talk(port, data, wait=0.3):
    return tcharness.mc_talk(port, data, wait)


login = tcharness.mc_login


def seed(srv):
    out = talk(srv.mc_port, login("fileuser", "fp") +
               b"set app:1 0 0 1\r\nv\r\nset secret:1 0 0 6\r\nhidden\r\n")
    assert out == b"STORED\r\nSTORED\r\nSTORED\r\n"


@pytest.mark.parametrize("cmd", [
    b"stats cachedump 1 0", b"lru_crawler metadump all", b"lru_crawler mgdump 1",
    b"stats detail dump", b"stats", b"stats items", b"stats slabs", b"stats settings",
    b"stats conns", b"stats reset", b"stats detail on", b"verbosity 1", b"slabs automove 1",
    b"slabs reassign 1 2", b"lru_crawler crawl 1", b"lru_crawler enable", b"lru_crawler sleep 5",
    b"lru mode flat", b"cache_memlimit 100", b"watch", b"flush_all", b"me secret:1",
    b"me app:1"])
def test_admin_commands_need_dangerous(srv, cmd):
    seed(srv)
    out = talk(srv.mc_port, login("lim", "pw") + cmd + b"\r\nversion\r\n")
    # every one of these is @dangerous or @admin in Redis, except OBJECT (me), which a key
    # outside the patterns denies: me app:1 is the user's own key
    if cmd == b"me app:1":
        assert out.startswith(b"STORED\r\nME app:1 "), out
    else:
        assert out == b"STORED\r\n" + DENIED + b"VERSION 1.6.18\r\n", (cmd, out)


def test_allowed_with_dangerous_but_me_checks_key_patterns(srv):
    seed(srv)
    r = srv.client()
    r.cmd("ACL", "LOG", "RESET")
    out = talk(srv.mc_port, login("ops", "pw") + b"me secret:1\r\nme app:1\r\n"
               b"stats cachedump 1 0\r\nverbosity 0\r\n")
    assert out.startswith(b"STORED\r\n" + DENIED + b"ME app:1 "), out
    assert b"ITEM secret:1 [6 b;" in out and out.endswith(b"END\r\nOK\r\n"), out
    # the file-only login is not restricted
    out = talk(srv.mc_port, login("fileuser", "fp") + b"me secret:1\r\n")
    assert out.startswith(b"STORED\r\nME secret:1 "), out
    log = [dict(zip(e[0::2], e[1::2])) for e in r.cmd("ACL", "LOG")]
    assert (b"key", b"secret:1", b"ops") in {
        (d[b"reason"], d[b"object"], d[b"username"]) for d in log}
    r.close()


def test_denials_logged_as_redis_commands(srv):
    r = srv.client()
    r.cmd("ACL", "LOG", "RESET")
    talk(srv.mc_port, login("lim", "pw") + b"stats cachedump 1 0\r\nverbosity 1\r\n"
         b"lru_crawler crawl 1\r\nwatch\r\n")
    log = [dict(zip(e[0::2], e[1::2])) for e in r.cmd("ACL", "LOG")]
    got = {(d[b"reason"], d[b"object"], d[b"username"]) for d in log}
    assert {(b"command", b"keys", b"lim"), (b"command", b"config|set", b"lim"),
            (b"command", b"debug", b"lim"), (b"command", b"monitor", b"lim")} <= got, got
    r.close()


def bin_req(op, key=b"", val=b"", extras=b""):
    return struct.pack(">BBHBBHIIQ", 0x80, op, len(key), len(extras), 0, 0,
                       len(key) + len(extras) + len(val), 0, 0) + extras + key + val


def bin_statuses(data):
    out = []
    while len(data) >= 24:
        status, body = struct.unpack(">H", data[6:8])[0], struct.unpack(">I", data[8:12])[0]
        out.append(status)
        data = data[24 + body:]
    return out


def test_binary_stat_and_flush_need_dangerous(srv):
    got = talk(srv.mc_port, bin_req(0x21, b"PLAIN", b"\0lim\0pw") +
               bin_req(0x10, b"cachedump 1 0") +   # STAT cachedump: KEYS
               bin_req(0x10) +                     # STAT: INFO
               bin_req(0x08))                      # FLUSH: FLUSHALL
    assert bin_statuses(got) == [0, 0x20, 0x20, 0x20], got


def test_data_commands_need_their_category(srv):
    """A read-only user (+@read) reads through the memcached port but cannot write: each data
    command is checked as the Redis command of its kind (set: SET, delete: DEL, ...)."""
    seed(srv)
    r = srv.client()
    r.cmd("ACL", "LOG", "RESET")
    out = talk(srv.mc_port, login("reader", "pw") +
               b"get app:1\r\nmg app:1 v\r\nset app:1 0 0 1\r\nw\r\ndelete app:1\r\n"
               b"incr app:1 1\r\ntouch app:1 10\r\nappend app:1 0 0 1\r\nw\r\n"
               b"ms app:1 1\r\nw\r\nget app:1\r\n")
    assert out == (b"STORED\r\nVALUE app:1 0 1\r\nv\r\nEND\r\nVA 1\r\nv\r\n" + DENIED * 6 +
                   b"VALUE app:1 0 1\r\nv\r\nEND\r\n"), out
    log = [dict(zip(e[0::2], e[1::2])) for e in r.cmd("ACL", "LOG")]
    got = {(d[b"reason"], d[b"object"]) for d in log}
    assert {(b"command", b"set"), (b"command", b"del"), (b"command", b"incrby"),
            (b"command", b"expire"), (b"command", b"append")} <= got, got
    ext = b"\0\0\0\0\0\0\0\0"
    got = talk(srv.mc_port, bin_req(0x21, b"PLAIN", b"\0reader\0pw") +
               bin_req(0x00, b"app:1") + bin_req(0x01, b"app:1", b"x", ext) +
               bin_req(0x04, b"app:1"))
    assert bin_statuses(got) == [0, 0, 0x20, 0x20], got
    r.close()
