"""Fixtures for the TLS and protected-mode tests: test certificates (gen_certs.sh), twincache
with a plain RESP port, a TLS RESP port and a TLS memcached port, and redis-server 7.0 with
TLS side by side.

Run:  /usr/bin/python3 -m pytest tests/tls
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tcharness as th  # noqa: E402

HERE = Path(__file__).resolve().parent


class Certs:
    def __init__(self, d):
        self.dir = Path(d)

    def __getattr__(self, name):
        # certs.ca_crt -> DIR/ca.crt, certs.server_enc_key -> DIR/server-enc.key
        base, _, ext = name.rpartition("_")
        return str(self.dir / ("%s.%s" % (base.replace("_", "-"), ext)))


@pytest.fixture(scope="session")
def certs():
    d = th.scratch_dir("tls-certs")
    subprocess.run([str(HERE / "gen_certs.sh"), d], check=True)
    return Certs(d)


def tls_args(certs, auth="yes"):
    return ["--tls-cert-file", certs.server_crt, "--tls-key-file", certs.server_key,
            "--tls-ca-cert-file", certs.ca_crt, "--tls-auth-clients", auth]


def start_tc_tls(certs, *args, auth="yes", threads=2):
    """twincache on free ports: .port plain RESP, .tls_port TLS RESP, .tls_mc_port TLS
    memcached."""
    def make(ports):
        argv = th.twincache_argv(ports[0], 0, tls_args(certs, auth) + [
            "--tls-port", ports[1], "--tls-memcache-port", ports[2]] + list(args),
            threads=threads)
        srv = th.Server(argv, port=ports[0])
        srv.tls_port, srv.tls_mc_port = ports[1], ports[2]
        return srv
    return th.start_fresh(make, 3)


def start_redis_tls(certs, *args, auth="yes"):
    def make(ports):
        argv = th.redis_argv(ports[0], tls_args(certs, auth) + ["--tls-port", ports[1]]
                             + list(args))
        srv = th.Server(argv, port=ports[0], kind="redis")
        srv.tls_port = ports[1]
        return srv
    return th.start_fresh(make, 2)


@pytest.fixture(scope="module")
def tc(certs):
    srv = start_tc_tls(certs)
    yield srv
    srv.stop(check=True)


@pytest.fixture(scope="module")
def rs(certs):
    srv = start_redis_tls(certs)
    yield srv
    srv.stop(check=False)


@pytest.fixture(autouse=True)
def _tc_alive(request):
    yield
    for name in ("tc", "tc_io"):
        if name in request.fixturenames:
            try:
                request.getfixturevalue(name).check_running()
            except AssertionError as e:
                pytest.fail(str(e), pytrace=False)
