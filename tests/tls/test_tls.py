"""TLS on the RESP and memcached ports, side by side with redis-server 7.0 (and memcached 1.6
-Z): redis-cli --tls, redis-py ssl=True, openssl s_client, pymemcache with a TLS context,
client certificates (tls-auth-clients yes / no / optional), plain clients and hostile bytes on
the TLS port, handshakes that never finish, certificate reload by CONFIG SET, both I/O paths
(io_uring and read/writev)."""

import os
import socket
import ssl
import subprocess
import threading
import time

import pytest
import redis
from pymemcache.client.base import Client as McClient

import tcharness as th
from conftest import start_redis_tls, start_tc_tls, tls_args

HOST = th.HOST


def cli(port, certs, *args, cert="client", timeout=10):
    argv = ["redis-cli", "-h", HOST, "-p", str(port), "--tls", "--cacert", certs.ca_crt]
    if cert:
        argv += ["--cert", getattr(certs, cert + "_crt"), "--key", getattr(certs, cert + "_key")]
    p = subprocess.run(argv + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def rclient(port, certs, cert="client", **kw):
    extra = {}
    if cert:
        extra = dict(ssl_certfile=getattr(certs, cert + "_crt"),
                     ssl_keyfile=getattr(certs, cert + "_key"))
    return redis.Redis(host=HOST, port=port, ssl=True, ssl_ca_certs=certs.ca_crt,
                       socket_timeout=10, **extra, **kw)


def tls_ctx(certs, cert="client"):
    ctx = ssl.create_default_context(cafile=certs.ca_crt)
    if cert:
        ctx.load_cert_chain(getattr(certs, cert + "_crt"), getattr(certs, cert + "_key"))
    return ctx


def tls_sock(port, certs, cert="client"):
    s = socket.create_connection((HOST, port), timeout=10)
    return tls_ctx(certs, cert).wrap_socket(s, server_hostname="localhost")


def closed_by_peer(s, timeout=10):
    """True when the peer closes s (EOF or reset) within timeout, reading whatever comes."""
    s.settimeout(timeout)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return True
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def plain_ping(srv):
    with socket.create_connection((HOST, srv.port), timeout=5) as s:
        s.sendall(b"PING\r\n")
        return s.recv(100)


# -- clients ------------------------------------------------------------------------------------


def test_redis_cli_with_client_cert(tc, rs, certs):
    for srv in (tc, rs):
        assert cli(srv.tls_port, certs, "SET", "k", "v")[:2] == (0, "OK\n")
        assert cli(srv.tls_port, certs, "GET", "k")[:2] == (0, "v\n")
        assert cli(srv.tls_port, certs, "PING")[:2] == (0, "PONG\n")


def test_client_cert_required_by_default(tc, rs, certs):
    for cert in (None, "badclient"):
        got = [cli(srv.tls_port, certs, "PING", cert=cert) for srv in (tc, rs)]
        assert got[0][0] != 0 and got[1][0] != 0, got
        assert "PONG" not in got[0][1] and got[0][1] == got[1][1]
    # the server goes on
    assert cli(tc.tls_port, certs, "PING")[:2] == (0, "PONG\n")


@pytest.mark.parametrize("auth", ["no", "optional"])
def test_tls_auth_clients(tc, rs, certs, auth):
    try:
        for srv in (tc, rs):
            r = redis.Redis(host=HOST, port=srv.port)
            assert r.config_set("tls-auth-clients", auth)
            assert r.config_get("tls-auth-clients") == {"tls-auth-clients": auth}
            # without a certificate: accepted
            assert cli(srv.tls_port, certs, "PING", cert=None)[:2] == (0, "PONG\n")
            # with a good one: accepted; with one from another CA: refused when optional
            assert cli(srv.tls_port, certs, "PING")[:2] == (0, "PONG\n")
            bad = cli(srv.tls_port, certs, "PING", cert="badclient")
            assert (bad[0] == 0) == (auth == "no"), (srv, bad)
    finally:
        for srv in (tc, rs):
            redis.Redis(host=HOST, port=srv.port).config_set("tls-auth-clients", "yes")


def test_redis_py_ssl(tc, certs):
    r = rclient(tc.tls_port, certs)
    assert r.ping()
    r.set("a", "1")
    assert r.get("a") == b"1"
    assert r.incr("a") == 2
    # a pipeline of many commands (replies in many records) and values above one record
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.set("p%d" % i, "x" * (i % 50))
    for i in range(2000):
        p.get("p%d" % i)
    out = p.execute()
    assert out[2000:] == [b"x" * (i % 50) for i in range(2000)]
    big = os.urandom(3 * 1024 * 1024 + 17)
    r.set("big", big)
    assert r.get("big") == big
    assert r.mget(["big", "a", "big"]) == [big, b"2", big]


@pytest.mark.parametrize("which", ["tc", "rs"])
def test_slow_reader_large_replies(tc, rs, certs, which):
    """Replies larger than the socket takes: OpenSSL's writes stop part-way (WANT_WRITE) and
    resume from the same bytes while more output is queued after them."""
    srv = tc if which == "tc" else rs
    r = rclient(srv.tls_port, certs)
    val = os.urandom(300 * 1024)
    r.set("slow", val)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    s.settimeout(10)
    s.connect((HOST, srv.tls_port))
    s = tls_ctx(certs).wrap_socket(s, server_hostname="localhost")
    n = 4
    s.sendall(b"GET slow\r\n" * n + b"PING\r\n")
    time.sleep(0.3)
    want = (b"$%d\r\n" % len(val) + val + b"\r\n") * n + b"+PONG\r\n"
    got = bytearray()
    while len(got) < len(want):
        d = s.recv(5000)
        assert d, "closed after %d of %d bytes" % (len(got), len(want))
        got += d
        if len(got) % 10 == 0:
            time.sleep(0.001)
    assert bytes(got) == want
    s.close()


def test_openssl_s_client(tc, rs, certs):
    outs = []
    for srv in (tc, rs):
        p = subprocess.run(["openssl", "s_client", "-connect", "%s:%d" % (HOST, srv.tls_port),
                            "-CAfile", certs.ca_crt, "-cert", certs.client_crt, "-key",
                            certs.client_key, "-quiet", "-verify_return_error"],
                           input=b"PING\r\nECHO hello\r\nQUIT\r\n", capture_output=True,
                           timeout=20)
        outs.append(p.stdout)
    assert outs[0] == outs[1] == b"+PONG\r\n$5\r\nhello\r\n+OK\r\n"


def test_pymemcache_tls(tc, certs):
    c = McClient((HOST, tc.tls_mc_port), tls_context=tls_ctx(certs), timeout=10)
    c.set("mk", b"mv")
    assert c.get("mk") == b"mv"
    big = os.urandom(900 * 1024)
    c.set("mbig", big)
    assert c.get_many(["mk", "mbig"]) == {"mk": b"mv", "mbig": big}
    assert c.version()
    c.close()
    # one keyspace: the RESP port sees it
    assert rclient(tc.tls_port, certs).get("mk") == b"mv"


def test_memcached_cmdline_tls(certs):
    """memcached's own flags (-Z -o ssl_chain_cert,ssl_key,ssl_verify_mode) side by side with
    memcached 1.6."""
    sub = "ssl_chain_cert=%s,ssl_key=%s,ssl_ca_cert=%s" % (certs.server_crt, certs.server_key,
                                                            certs.ca_crt)

    def mk_tc(ports):
        argv = [str(th.twincache_bin()), "-l", HOST, "-p", str(ports[0]), "-U", "0", "-t", "2",
                "-Z", "-o", sub] + th.MC_AS_ROOT
        return th.Server(argv, mc_port=ports[0], ready=[(ports[0], "tcp")])

    def mk_mc(ports):
        return th.Server(th.memcached_argv(ports[0], ["-Z", "-o", sub]), mc_port=ports[0],
                         kind="memcached", ready=[(ports[0], "tcp")])

    servers = [th.start_fresh(mk_tc, 1), th.start_fresh(mk_mc, 1)]
    try:
        got = []
        for srv in servers:
            # memcached's default ssl_verify_mode 0: no client certificate asked
            c = McClient((HOST, srv.mc_port), tls_context=tls_ctx(certs, cert=None), timeout=10)
            c.set("z", b"1")
            got.append((c.get("z"), c.incr("z", 5)))
            c.close()
            s = socket.create_connection((HOST, srv.mc_port), timeout=5)
            s.sendall(b"version\r\n")
            got.append(closed_by_peer(s))
            s.close()
        assert got[0:2] == got[2:4] == [(b"1", 6), True]
    finally:
        servers[0].stop(check=True)
        servers[1].stop(check=False)


# -- hostile input ------------------------------------------------------------------------------


def test_plain_client_on_tls_port_closed(tc, rs, certs):
    for srv in (tc, rs):
        for payload in (b"PING\r\n", b"*1\r\n$4\r\nPING\r\n", b"GET / HTTP/1.1\r\n\r\n"):
            s = socket.create_connection((HOST, srv.tls_port), timeout=5)
            s.sendall(payload)
            assert closed_by_peer(s), srv
            s.close()
    assert plain_ping(tc) == b"+PONG\r\n"


def test_garbage_and_truncated_records(tc, certs):
    hello_hdr = b"\x16\x03\x01\x40\x00"  # a handshake record announcing 16 KiB
    cases = [
        os.urandom(4096),
        b"\x16\x03\x01\x00\x05" + b"\x01\x00\x00\x01\x00",      # ClientHello cut short
        b"\x17\x03\x03\x00\x10" + os.urandom(16),                # application data first
        b"\x15\x03\x03\x00\x02\x02\x28",                          # an alert
        b"\x16\x03\x03\xff\xff" + os.urandom(100),               # record over the limit
    ]
    for payload in cases:
        s = socket.create_connection((HOST, tc.tls_port), timeout=5)
        s.sendall(payload)
        assert closed_by_peer(s), payload[:8]
        s.close()
    # a truncated record and the client goes away
    s = socket.create_connection((HOST, tc.tls_port), timeout=5)
    s.sendall(hello_hdr + os.urandom(300))
    s.close()
    # garbage after a finished handshake: the record layer fails, the connection closes
    raw = socket.create_connection((HOST, tc.tls_port), timeout=5)
    inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = tls_ctx(certs).wrap_bio(inb, outb, server_hostname="localhost")
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(outb.read())
            d = raw.recv(65536)
            assert d
            inb.write(d)
    raw.sendall(outb.read())
    obj.write(b"PING\r\n")
    raw.sendall(outb.read())
    raw.sendall(b"\x17\x03\x03\x00\x40" + os.urandom(64))  # a record that does not decrypt
    assert closed_by_peer(raw)
    raw.close()
    r = rclient(tc.tls_port, certs)
    assert r.ping() and plain_ping(tc) == b"+PONG\r\n"


def test_stuck_handshake_times_out(certs):
    srv = start_tc_tls(certs, "--tls-handshake-timeout", "700", "--hz", "50")
    try:
        stuck = []
        for i in range(4):
            s = socket.create_connection((HOST, srv.tls_port), timeout=15)
            if i % 2:
                s.sendall(b"\x16\x03\x01\x02\x00\x01")  # half a ClientHello, never the rest
            stuck.append(s)
        # others are served meanwhile, over TLS and plain
        r = rclient(srv.tls_port, certs)
        for i in range(50):
            assert r.set("k%d" % i, i)
        assert plain_ping(srv) == b"+PONG\r\n"
        t0 = time.monotonic()
        for s in stuck:
            assert closed_by_peer(s, timeout=15)
            s.close()
        assert time.monotonic() - t0 < 15
        # a finished handshake is not timed out: an idle TLS client stays
        idle = tls_sock(srv.tls_port, certs)
        time.sleep(1.2)
        idle.sendall(b"PING\r\n")
        assert idle.recv(100) == b"+PONG\r\n"
        idle.close()
    finally:
        srv.stop(check=True)


# -- configuration ------------------------------------------------------------------------------


def peer_cn(port, certs):
    s = tls_sock(port, certs)
    cn = dict(x[0] for x in s.getpeercert()["subject"])["commonName"]
    s.close()
    return cn


def test_config_set_reload(tc, rs, certs):
    for srv in (tc, rs):
        r = redis.Redis(host=HOST, port=srv.port)
        old = rclient(srv.tls_port, certs)  # a connection open before the reload
        assert old.ping()
        assert peer_cn(srv.tls_port, certs) == "localhost"
        try:
            assert r.config_set("tls-cert-file", certs.server2_crt) is not None
        except redis.ResponseError as e:
            # the new certificate with the old key: refused, as Redis does
            assert "Unable to update TLS configuration" in str(e)
        r.execute_command("CONFIG", "SET", "tls-cert-file", certs.server2_crt, "tls-key-file",
                          certs.server2_key)
        assert peer_cn(srv.tls_port, certs) == "reloaded"
        assert old.ping()  # kept its session
        r.execute_command("CONFIG", "SET", "tls-cert-file", certs.server_crt, "tls-key-file",
                          certs.server_key)
        assert peer_cn(srv.tls_port, certs) == "localhost"
    errs = []
    for srv in (tc, rs):
        r = redis.Redis(host=HOST, port=srv.port)
        with pytest.raises(redis.ResponseError) as e:
            r.config_set("tls-cert-file", "/nonexistent/cert.pem")
        errs.append(str(e.value))
        assert r.config_get("tls-cert-file") == {"tls-cert-file": certs.server_crt}
        assert peer_cn(srv.tls_port, certs) == "localhost"
    assert errs[0] == errs[1]


def test_config_get_names(tc, rs):
    names = ["tls-port", "tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-ca-cert-file",
             "tls-ca-cert-dir", "tls-auth-clients", "tls-protocols", "tls-ciphers",
             "tls-ciphersuites", "tls-prefer-server-ciphers", "tls-session-caching",
             "tls-session-cache-size", "tls-session-cache-timeout", "tls-replication",
             "tls-client-cert-file", "tls-client-key-file", "tls-cluster"]
    got = []
    for srv in (tc, rs):
        r = redis.Redis(host=HOST, port=srv.port, decode_responses=True)
        d = {}
        for n in names:
            d.update(r.config_get(n))
        d.pop("tls-port")
        got.append(d)
    assert got[0] == got[1]


def test_key_file_pass_and_protocols(certs):
    srv = start_tc_tls(certs, "--tls-key-file", certs.server_enc_key, "--tls-key-file-pass",
                       "secret", "--tls-protocols", "TLSv1.3", auth="no")
    try:
        s = tls_sock(srv.tls_port, certs, cert=None)
        assert s.version() == "TLSv1.3"
        s.close()
        ctx = tls_ctx(certs, cert=None)
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            ctx.wrap_socket(socket.create_connection((HOST, srv.tls_port), timeout=5),
                            server_hostname="localhost")
        assert plain_ping(srv) == b"+PONG\r\n"
    finally:
        srv.stop(check=True)


def test_bad_tls_config_fails_start(certs):
    srv = th.start_twincache("--tls-port", th.free_port(), "--tls-cert-file", certs.server_crt,
                             "--tls-key-file", certs.server2_key, "--tls-auth-clients", "no",
                             start=False)
    with pytest.raises(th.ServerStartError):
        srv.start(timeout=10)
    assert "Failed to configure TLS" in srv.output()


def test_session_resumption(tc, certs):
    ctx = tls_ctx(certs)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    s1 = ctx.wrap_socket(socket.create_connection((HOST, tc.tls_port), timeout=5),
                         server_hostname="localhost")
    s1.sendall(b"PING\r\n")
    assert s1.recv(100) == b"+PONG\r\n"
    sess = s1.session
    s1.close()
    s2 = ctx.wrap_socket(socket.create_connection((HOST, tc.tls_port), timeout=5),
                         server_hostname="localhost", session=sess)
    s2.sendall(b"PING\r\n")
    assert s2.recv(100) == b"+PONG\r\n"
    assert s2.session_reused
    s2.close()


# -- both I/O paths -----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["yes", "no"])
def tc_io(request, certs):
    srv = start_tc_tls(certs, "--io-uring", request.param)
    yield srv
    srv.stop(check=True)


def test_io_paths_concurrent_clients(tc_io, certs):
    errors = []

    def worker(n):
        try:
            r = rclient(tc_io.tls_port, certs)
            p = r.pipeline(transaction=False)
            for i in range(200):
                p.set("c%d:%d" % (n, i), "v" * (i * 37 % 3000))
                p.get("c%d:%d" % (n, i))
            out = p.execute()
            assert out[1::2] == [b"v" * (i * 37 % 3000) for i in range(200)]
            for i in range(50):
                assert r.get("c%d:%d" % (n, i)) == b"v" * (i * 37 % 3000)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in ts:
        t.start()
    # plain clients at the same time
    pr = redis.Redis(host=HOST, port=tc_io.port)
    for i in range(100):
        pr.set("plain%d" % i, i)
    for t in ts:
        t.join()
    assert not errors
    c = McClient((HOST, tc_io.tls_mc_port), tls_context=tls_ctx(certs), timeout=10)
    assert c.get("plain7") == b"7"
    c.close()
