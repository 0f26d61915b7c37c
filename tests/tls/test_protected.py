"""protected-mode as Redis 7.0: with no password for the default user, a client from anywhere
but 127.0.0.1 / ::1 gets -DENIED (Redis's exact text) and is closed; side by side with
redis-server 7.0. A second loopback address (127.0.0.2) plays the remote client."""

import socket

import pytest
import redis

import tcharness as th
from conftest import start_redis_tls, start_tc_tls, tls_args
from test_tls import tls_ctx

HOST = th.HOST


def from_remote(port, payload=b"PING\r\n", tls=None):
    """Connect from 127.0.0.2, send payload, read to EOF (at most 5 s): the bytes, and whether
    the peer closed."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.2", 0))
    s.settimeout(5)
    s.connect((HOST, port))
    if tls:
        s = tls.wrap_socket(s, server_hostname="localhost")
    s.sendall(payload)
    data, closed = b"", False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            data += d
            if data.endswith(b"\r\n") and not data.startswith(b"-DENIED"):
                break
    except socket.timeout:
        pass
    except (ConnectionResetError, OSError):
        closed = True
    s.close()
    return data, closed


@pytest.fixture(scope="module")
def pair(certs):
    tc = start_tc_tls(certs, auth="no")
    rs = start_redis_tls(certs, auth="no")
    yield tc, rs
    tc.stop(check=True)
    rs.stop(check=False)


def test_denied_text_and_close(pair):
    got = [from_remote(srv.port) for srv in pair]
    assert got[0] == got[1]
    assert got[0][0].startswith(b"-DENIED Redis is running in protected mode") and got[0][1]


def test_denied_over_tls(pair, certs):
    got = [from_remote(srv.tls_port, tls=tls_ctx(certs, cert=None)) for srv in pair]
    assert got[0] == got[1] and got[0][0].startswith(b"-DENIED")


def test_loopback_allowed(pair):
    for srv in pair:
        assert redis.Redis(host=HOST, port=srv.port).ping()


def test_password_or_protected_mode_off(pair):
    for srv in pair:
        r = redis.Redis(host=HOST, port=srv.port)
        r.config_set("requirepass", "pw")
        try:
            got = from_remote(srv.port)
            assert got[0].startswith(b"-NOAUTH"), got
        finally:
            redis.Redis(host=HOST, port=srv.port, password="pw").config_set("requirepass", "")
        r.config_set("protected-mode", "no")
        try:
            assert from_remote(srv.port) == (b"+PONG\r\n", False)
        finally:
            r.config_set("protected-mode", "yes")
        assert from_remote(srv.port)[0].startswith(b"-DENIED")


def test_memcached_port_not_protected(certs):
    tc = th.start_twincache(mc=True)
    try:
        got = from_remote(tc.mc_port, b"version\r\n")
        assert got[0].startswith(b"VERSION")
    finally:
        tc.stop(check=True)


def test_default_user_password_set_by_acl(pair):
    """The test is the default user's nopass flag, as Redis's: a password given with ACL
    SETUSER (requirepass untouched) lifts the protection, nopass brings it back."""
    got = []
    for srv in pair:
        r = redis.Redis(host=HOST, port=srv.port, single_connection_client=True)
        r.execute_command("ACL", "SETUSER", "default", ">secret")
        try:
            a = from_remote(srv.port)
            r.execute_command("ACL", "SETUSER", "default", "resetpass")
            b = from_remote(srv.port)
        finally:
            r.execute_command("ACL", "SETUSER", "default", "nopass")
        c = from_remote(srv.port)
        got.append((a, b[0][:7], c[0][:7]))
    assert got[0] == got[1]
    assert got[0][0][0].startswith(b"-NOAUTH") and got[0][1] == b"-NOAUTH" and \
        got[0][2] == b"-DENIED", got
