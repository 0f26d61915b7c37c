"""The memcached port with ASCII authentication (memcache-auth-file, memcached's -Y): a login
that names an ACL user (its ACL password, or a line of the auth file) runs as that user, and
the user's key patterns apply to every key a memcached command reads (%R) or writes (%W);
a key outside them is answered CLIENT_ERROR access denied and logged in ACL LOG (reason key).
A login of the auth file alone is not restricted."""

import os
import shutil
import socket
import tempfile
import time

import pytest

from conftest import CLIENT, tcharness


@pytest.fixture(scope="module")
def srv():
    s = tcharness.start_twincache_mc_login(
        ["fileuser:fp", "mcu:filepw"], "--user", "mcu", "on", ">pw", "~app:*", "%R~ro:*",
        "+@all", check=True, client_defaults=CLIENT)
    yield s
    s.stop()


talk = tcharness.mc_talk
login = tcharness.mc_login


def test_acl_user_key_patterns_on_mc_port(srv):
    r = srv.client()
    r.cmd("ACL", "LOG", "RESET")
    out = talk(srv.mc_port, login("mcu", "pw") +
               b"set app:1 0 0 1\r\nv\r\n"
               b"set other 0 0 1\r\nv\r\n"
               b"get app:1\r\n"
               b"get app:1 other\r\n"
               b"set ro:1 0 0 1\r\nv\r\n"
               b"get ro:1\r\n"
               b"delete other\r\n"
               b"incr app:n 1\r\n"
               b"flush_all\r\n"
               b"mg other v\r\n"
               b"mg app:1 v\r\n")
    assert out == (b"STORED\r\n"
                   b"STORED\r\n"
                   b"CLIENT_ERROR access denied\r\n"
                   b"VALUE app:1 0 1\r\nv\r\nEND\r\n"
                   b"CLIENT_ERROR access denied\r\n"
                   b"CLIENT_ERROR access denied\r\n"
                   b"END\r\n"
                   b"CLIENT_ERROR access denied\r\n"
                   b"NOT_FOUND\r\n"
                   b"CLIENT_ERROR access denied\r\n"
                   b"CLIENT_ERROR access denied\r\n"
                   b"VA 1\r\nv\r\n"), out
    log = r.cmd("ACL", "LOG")
    objs = [dict(zip(e[0::2], e[1::2])) for e in log]
    assert {(d[b"reason"], d[b"object"], d[b"username"]) for d in objs} >= {
        (b"key", b"other", b"mcu"), (b"key", b"ro:1", b"mcu"), (b"key", b"*", b"mcu")}
    # the file's password of an ACL user logs in too, with the same restrictions
    out = talk(srv.mc_port, login("mcu", "filepw") + b"set other 0 0 1\r\nv\r\n")
    assert out == b"STORED\r\nCLIENT_ERROR access denied\r\n"
    r.close()


def test_file_only_login_unrestricted_and_bad_password(srv):
    out = talk(srv.mc_port, login("fileuser", "fp") + b"set other 0 0 1\r\nv\r\n")
    assert out == b"STORED\r\nSTORED\r\n"
    out = talk(srv.mc_port, login("mcu", "nope") + b"get app:1\r\n")
    assert out.startswith(b"CLIENT_ERROR authentication failure\r\n")


def test_rules_changed_apply_to_logged_in_mc_connection(srv):
    r = srv.client()
    s = socket.create_connection(("127.0.0.1", srv.mc_port))
    s.sendall(login("mcu", "pw") + b"set app:2 0 0 1\r\nv\r\n")
    time.sleep(0.2)
    assert s.recv(4096) == b"STORED\r\nSTORED\r\n"
    r.cmd("ACL", "SETUSER", "mcu", "resetkeys", "~new:*")
    s.sendall(b"set app:2 0 0 1\r\nv\r\nset new:1 0 0 1\r\nv\r\n")
    time.sleep(0.2)
    assert s.recv(4096) == b"CLIENT_ERROR access denied\r\nSTORED\r\n"
    r.cmd("ACL", "SETUSER", "mcu", "resetkeys", "~app:*", "%R~ro:*")
    s.close()
    r.close()


def bin_req(op, key=b"", val=b"", extras=b""):
    import struct
    return struct.pack(">BBHBBHIIQ", 0x80, op, len(key), len(extras), 0, 0,
                       len(key) + len(extras) + len(val), 0, 0) + extras + key + val


def bin_statuses(data):
    import struct
    out = []
    while len(data) >= 24:
        status, body = struct.unpack(">H", data[6:8])[0], struct.unpack(">I", data[8:12])[0]
        out.append(status)
        data = data[24 + body:]
    return out


def test_sasl_plain_login_of_acl_user():
    """Binary SASL PLAIN: the same mapping; a key outside the patterns answers Auth error."""
    d = tempfile.mkdtemp(prefix="acl2-mcb-")
    f = os.path.join(d, "auth")
    with open(f, "w") as fh:
        fh.write("fileuser:fp\n")
    args = ("--memcache-sasl", "yes", "--memcache-auth-file", f, "--user", "mcu", "on", ">pw",
            "~app:*", "+@all")

    def make(ports):
        return tcharness.Server(tcharness.twincache_argv(ports[0], ports[1], args), port=ports[0],
                                mc_port=ports[1], check=True, client_defaults=CLIENT,
                                ready=[(ports[0], "resp"), (ports[1], "tcp")])
    tcharness.require_twincache()
    srv = tcharness.start_fresh(make, 2)
    try:
        ext = b"\0\0\0\0\0\0\0\0"
        got = talk(srv.mc_port,
                   bin_req(0x21, b"PLAIN", b"\0mcu\0pw") +
                   bin_req(0x01, b"app:1", b"v", ext) +    # SET allowed
                   bin_req(0x01, b"other", b"v", ext) +    # SET denied
                   bin_req(0x00, b"app:1") +               # GET allowed
                   bin_req(0x00, b"other") +               # GET denied
                   bin_req(0x04, b"other") +               # DELETE denied
                   bin_req(0x08, b"", b"", b""))           # FLUSH denied
        assert bin_statuses(got) == [0, 0, 0x20, 0, 0x20, 0x20, 0x20], got
        got = talk(srv.mc_port, bin_req(0x21, b"PLAIN", b"\0fileuser\0fp") +
                   bin_req(0x01, b"other", b"v", ext))
        assert bin_statuses(got) == [0, 0]
        got = talk(srv.mc_port, bin_req(0x21, b"PLAIN", b"\0mcu\0bad"))
        assert bin_statuses(got) == [0x20]
    finally:
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)
