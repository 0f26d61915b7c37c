"""twincache started with memcached's command line (src/server/mc_cmdline.c), side by side with
Debian's memcached 1.6 given the same flags: refusals at start-up (message and exit status),
the settings "stats settings" reports, -F / -C / -A behaviour, idle_timeout, and the Redis port
staying off unless --port is given."""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import tcharness
from mcharness import Raw, twincache_bin

pytestmark = pytest.mark.sanitize

HOST = "127.0.0.1"
MEMCACHED = tcharness.tool("memcached", "/usr/bin/memcached")
# as root both refuse to start without -u; "-u root" as memcached's own suite (t/lib.pm) passes:
# the server keeps the test's rights to its scratch files (a -u nobody drop: test_daemon.py)
USER = tcharness.MC_AS_ROOT


def with_port(args, port):
    """The arguments, "SAME" standing for the TCP port (e.g. -U SAME)."""
    return [str(port) if a == "SAME" else str(a) for a in args]


def tc_mc_argv(port, args):
    return ([str(twincache_bin()), "-l", HOST, "-p", str(port)] + USER + with_port(args, port)
            + os.environ.get("TC_SERVER_ARGS", "").split())


def start_tc(*args):
    """twincache with a memcached command line (no --port: the Redis port stays off)."""
    tcharness.require_twincache()

    def make(ports):
        return tcharness.Server(tc_mc_argv(ports[0], args), mc_port=ports[0],
                                ready=[(ports[0], "mc")], check=True)
    return tcharness.start_fresh(make, 1)


def start_mc(*args):
    def make(ports):
        argv = [MEMCACHED, "-l", HOST, "-p", str(ports[0])] + USER + with_port(args, ports[0])
        return tcharness.Server(argv, port=ports[0], mc_port=ports[0], kind="memcached",
                                ready=[(ports[0], "mc")])
    return tcharness.start_fresh(make, 1)


def run_refused(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10,
                       cwd="/tmp")
    return p.returncode, p.stdout.decode("utf-8", "replace").replace(argv[0], "PROG")


REFUSED = [
    ["-I", "1000"], ["-I", "256m"], ["-m", "64", "-I", "33m"], ["-I", "2g", "-m", "8192"],
    ["-I", "1536m", "-m", "4096"], ["-I", "600k"], ["-I", "100k"], ["-I", "1048577"],
    ["-m", "0"], ["-t", "0"], ["-c", "0"], ["-R", "0"], ["-n", "0"], ["-f", "0.5"],
    ["-B", "foo"], ["-p", "70000"], ["-Q"], ["-o", "foo=1"], ["-o", "idle_timeout=5,bar"],
    ["-Y", "/nonexistent/authfile"],
]


@pytest.mark.parametrize("args", REFUSED, ids=[" ".join(a) for a in REFUSED])
def test_refused_like_memcached(args):
    tcharness.require_twincache()
    want = run_refused([MEMCACHED, "-p", "0", "-U", "0"] + USER + args)
    got = run_refused([str(twincache_bin()), "-p", "0", "-U", "0"] + USER + args)
    assert want[0] != 0, want
    assert got == want


SETTINGS = ("maxbytes", "maxconns", "udpport", "inter", "verbosity", "evictions",
            "domain_socket", "umask", "shutdown_command", "growth_factor", "chunk_size",
            "num_threads", "reqs_per_event", "cas_enabled", "tcp_backlog", "binding_protocol",
            "item_size_max", "maxconns_fast", "hashpower_init", "slab_chunk_max", "lru_crawler",
            "flush_enabled", "dump_enabled", "idle_timeout", "track_sizes")


def settings(port):
    c = Raw(port)
    out = c.call(b"stats settings\r\n", b"END\r\n").decode()
    c.close()
    d = dict(re.findall(r"STAT (\S+) (\S*)\r\n", out))
    return {k: d.get(k) for k in SETTINGS}


FLAG_SETS = [
    ["-U", "0", "-m", "64", "-c", "1024", "-t", "2", "-F", "-C"],
    ["-U", "0", "-m", "128", "-c", "300", "-t", "3", "-I", "2m", "-R", "7", "-B", "ascii",
     "-f", "1.5", "-n", "64", "-a", "600", "-M", "-A", "-vv", "-b", "256", "-L", "-X",
     "-o", "idle_timeout=30,hashpower=16,no_lru_crawler,track_sizes,slab_chunk_max=524288"],
]


@pytest.mark.parametrize("args", FLAG_SETS, ids=["basic", "many"])
def test_stats_settings_like_memcached(args):
    mc = start_mc(*args)
    tc = start_tc(*args)
    try:
        assert settings(tc.mc_port) == settings(mc.mc_port)
    finally:
        tc.stop()
        mc.stop(check=False)


SCRIPT = [
    b"flush_all\r\n", b"flush_all noreply\r\nflush_all 10\r\n", b"set a 1 0 1\r\nx\r\n",
    b"gets a\r\n", b"cas a 1 0 1 0\r\ny\r\n", b"cas a 1 0 1 5\r\ny\r\n", b"cas zz 0 0 1 5\r\ny\r\n",
    b"mg a c v\r\n", b"ms a 1 C0\r\nz\r\n", b"ms a 1 C5\r\nz\r\n", b"ms a 1 I\r\nz\r\n",
    b"mg a c v\r\n", b"ma n N0 c\r\n", b"mg n c v\r\n", b"gats 0 a n\r\n", b"ma n C3\r\n",
    b"shutdown\r\n", b"shutdown graceful\r\n", b"version\r\n",
]


def replies(port):
    c = Raw(port)
    out = []
    for cmd in SCRIPT:
        c.send(cmd + b"mn\r\n")
        out.append(c.read_until(b"MN\r\n"))
    c.close()
    return out


def test_flush_and_cas_disabled():
    args = ["-U", "0", "-m", "64", "-c", "1024", "-t", "2", "-F", "-C"]
    mc = start_mc(*args)
    tc = start_tc(*args)
    try:
        got, want = replies(tc.mc_port), replies(mc.mc_port)
        assert got == want
        assert want[0] == b"CLIENT_ERROR flush_all not allowed\r\nMN\r\n"
        out = tc.output()
        assert "port=0," in out  # the Redis port stays off
    finally:
        tc.stop()
        mc.stop(check=False)


def test_redis_port_on_request():
    port = tcharness.free_port()
    tc = start_tc("-U", "0", "--port", port)
    try:
        r = tcharness.redis.Redis(host=HOST, port=port)
        assert r.ping()
        r.close()
    finally:
        tc.stop()


def shutdown_probe(srv, line):
    c = Raw(srv.mc_port)
    c.send(b"shutdown foo\r\n")
    bad = c.read_until(b"\r\n")
    c.send(line)
    rest = c.read_to_close()
    c.close()
    return bad, rest, srv.wait_exit(20)


@pytest.mark.parametrize("line", [b"shutdown\r\n", b"shutdown graceful\r\n"])
def test_shutdown_enabled(line):
    mc = start_mc("-U", "0", "-A")
    tc = start_tc("-U", "0", "-A")
    try:
        want = shutdown_probe(mc, line)
        got = shutdown_probe(tc, line)
        assert want[0] == b"CLIENT_ERROR invalid shutdown mode\r\n"
        assert got == want
    finally:
        tc.stop()
        mc.stop(check=False)


def idle_closed(port, wait=8.0):
    """True when an idle connection is closed by the server within wait seconds."""
    s = socket.create_connection((HOST, port))
    s.sendall(b"version\r\n")
    s.settimeout(wait)
    data = b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return True
            data += d
    except socket.timeout:
        return False
    finally:
        s.close()


def test_idle_timeout():
    mc = start_mc("-U", "0", "-o", "idle_timeout=1")
    tc = start_tc("-U", "0", "-o", "idle_timeout=1")
    try:
        assert idle_closed(mc.mc_port)
        assert idle_closed(tc.mc_port)
    finally:
        tc.stop()
        mc.stop(check=False)


def test_no_idle_timeout_by_default():
    tc = start_tc("-U", "0")
    try:
        assert not idle_closed(tc.mc_port, wait=2.5)
    finally:
        tc.stop()


@pytest.mark.parametrize("flags,setting", [(["-S"], "memcache-sasl"),
                                           (["-Y", "AUTHFILE"], "memcache-auth-file")])
def test_sasl_flags_map(tmp_path, flags, setting):
    """-S and -Y map to the binary protocol's settings (skipped where they do not exist)."""
    tcharness.require_twincache()
    auth = tmp_path / "auth"
    auth.write_text("user:pass\n")
    flags = [str(auth) if f == "AUTHFILE" else f for f in flags]
    argv = [str(twincache_bin()), "-p", "0", "-U", "0"] + USER + flags + ["--pidfile", "x"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=str(tmp_path))
    try:
        out, _ = p.communicate(timeout=1.5)
        text = out.decode("utf-8", "replace")
        if setting in text and "FATAL" in text:
            pytest.skip("this branch has no %s setting" % setting)
        pytest.fail("exited: %r" % text)
    except subprocess.TimeoutExpired:
        p.terminate()
        p.communicate(timeout=30)  # it started: the flag was accepted


def unix_call(path, data, ends):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(data)
    out = b""
    while out.count(b"END\r\n") < ends:
        d = s.recv(65536)
        if not d:
            break
        out += d
    s.close()
    return out


def test_unix_socket():
    """-s serves memcached on a unix socket (mode from -a) instead of the TCP port."""
    tcharness.require_twincache()
    res = {}
    tmp_path = Path(tempfile.mkdtemp(prefix="tc-mcsock-"))
    os.chmod(tmp_path, 0o777)  # memcached runs as nobody
    for name, prog in (("tc", str(twincache_bin())), ("mc", MEMCACHED)):
        path = str(tmp_path / (name + ".sock"))
        argv = [prog, "-s", path, "-a", "0760", "-U", "0"] + USER
        srv = tcharness.Server(argv, mc_port=None, ready=[], kind="twincache" if name == "tc"
                               else "memcached", check=name == "tc")
        srv.spawn()
        try:
            for _ in range(200):
                if os.path.exists(path):
                    break
                time.sleep(0.05)
            time.sleep(0.1)
            mode = os.stat(path).st_mode & 0o777
            out = unix_call(path, b"set u 0 0 1\r\nx\r\nget u\r\nstats settings\r\n",
                            2)
            st = dict(re.findall(rb"STAT (\S+) (\S*)\r\n", out))
            res[name] = (mode, out.split(b"STAT")[0], st[b"tcpport"], st[b"umask"],
                         st[b"domain_socket"] == path.encode())
        finally:
            srv.stop()
    shutil.rmtree(tmp_path, ignore_errors=True)
    assert res["tc"] == res["mc"]
    assert res["mc"][0] == 0o760
