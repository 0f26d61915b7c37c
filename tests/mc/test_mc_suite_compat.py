"""What memcached 1.6's own t/ suite checks of the command line and stats, side by side with
memcached where the two can be compared: the stats names shown with the crawler and the
maintainer off, stats conns' listeners, MEMCACHED_PORT_FILENAME, -B binary refusing text,
idle_kicks, and the active expire cycle reported as the crawler's reclaims."""

import os
import socket
import subprocess
import tempfile
import time

import pytest

from test_cmdline import HOST, MEMCACHED, USER, start_mc, start_tc
from tcharness import twincache_bin


def ask(port, cmd, end=(b"END\r\n",), wait=2.0):
    s = socket.create_connection((HOST, port))
    s.settimeout(wait)
    s.sendall(cmd)
    out = b""
    try:
        while not out.endswith(end):
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    s.close()
    return out


def stat_names(port, sub=b""):
    out = ask(port, b"stats" + sub + b"\r\n")
    return sorted(l.split()[1] for l in out.split(b"\r\n") if l.startswith(b"STAT "))


@pytest.mark.parametrize("opts", [[], ["-o", "no_lru_crawler,no_lru_maintainer"],
                                  ["-o", "no_lru_maintainer"], ["-o", "no_modern"],
                                  ["-o", "idle_timeout=100"]])
def test_stats_names_as_memcached(opts):
    tc, mc = start_tc(*opts), start_mc(*opts)
    try:
        assert stat_names(tc.mc_port) == stat_names(mc.mc_port)
    finally:
        tc.stop()
        mc.stop(check=False)


def test_stats_conns_lists_listeners():
    tc, mc = start_tc("-U", "SAME"), start_mc("-U", "SAME")
    try:
        for srv in (tc, mc):
            out = ask(srv.mc_port, b"stats conns\r\n").decode()
            assert "state conn_listening" in out, out
            assert "addr tcp:%s:%d\r\n" % (HOST, srv.mc_port) in out, out
            assert "addr udp:%s:%d\r\n" % (HOST, srv.mc_port) in out, out
    finally:
        tc.stop()
        mc.stop(check=False)


def test_port_file():
    d = tempfile.mkdtemp(prefix="mc-portfile-")
    f = os.path.join(d, "ports")
    env = dict(os.environ, MEMCACHED_PORT_FILENAME=f)
    p = subprocess.Popen([str(twincache_bin()), "-l", HOST, "-p", "-1", "-U", "-1"] + USER,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if os.path.exists(f):
                break
            time.sleep(0.1)
        lines = open(f).read().splitlines()
        kinds = [l.split(":")[0] for l in lines]
        assert kinds == ["TCP INET", "UDP INET"], lines
        tcp = int(lines[0].split(": ")[1])
        assert tcp not in (0, 11211)
        assert ask(tcp, b"version\r\n", end=(b"\r\n",)).startswith(b"VERSION ")
    finally:
        p.terminate()
        p.wait(10)
        for x in os.listdir(d):
            os.unlink(os.path.join(d, x))
        os.rmdir(d)


def test_binding_binary_closes_text():
    import tcharness
    from test_cmdline import tc_mc_argv

    def make(ports):  # ready once it accepts: a text probe would be refused
        return tcharness.Server(tc_mc_argv(ports[0], ["-B", "binary"]), mc_port=ports[0],
                                ready=[(ports[0], "tcp")], check=True)
    tc = tcharness.start_fresh(make, 1)
    try:
        s = socket.create_connection((HOST, tc.mc_port))
        s.settimeout(3)
        s.sendall(b"get foo\r\n")
        assert s.recv(100) == b""  # closed, nothing answered
        s.close()
    finally:
        tc.stop()


@pytest.mark.parametrize("modern", [False, True])
def test_crawler_reclaimed_and_emptied_class(modern):
    """Expired items the background sweep removes: memcached's LRU maintainer counts them in
    reclaimed (its default, as Debian's memcached shows), its crawler in crawler_reclaimed
    (-o no_modern, then "lru_crawler crawl", t/lru-crawler.t)."""
    tc = start_tc() if modern else start_tc("-o", "no_modern")
    field = b"reclaimed" if modern else b"crawler_reclaimed"
    other = b"crawler_reclaimed" if modern else b"reclaimed"
    try:
        ask(tc.mc_port, b"".join(b"set exp%d 0 1 2\r\nok\r\n" % i for i in range(5)) +
            b"set keep 0 0 2\r\nok\r\nversion\r\n", end=(b"VERSION 1.6.18\r\n",))
        time.sleep(2.5)  # the active expire cycle removes them without any access
        items = ask(tc.mc_port, b"stats items\r\n")
        assert b"STAT items:1:" + field + b" 5\r\n" in items, items
        assert b"STAT items:1:" + other + b" 0\r\n" in items, items
        assert b"STAT " + field + b" 5\r\n" in ask(tc.mc_port, b"stats\r\n")
        ask(tc.mc_port, b"delete keep\r\n", end=(b"\r\n",))
        # memcached keeps listing a class that had pages, even emptied
        assert b"STAT 1:used_chunks 0\r\n" in ask(tc.mc_port, b"stats slabs\r\n")
        assert ask(tc.mc_port, b"stats reset\r\n", end=(b"RESET\r\n",)) == b"RESET\r\n"
        assert b"STAT " + field + b" 0\r\n" in ask(tc.mc_port, b"stats\r\n")
    finally:
        tc.stop()


def test_idle_kicks_counted():
    tc = start_tc("-o", "idle_timeout=1")
    try:
        assert b"STAT idle_kicks 0\r\n" in ask(tc.mc_port, b"stats\r\n")
        s = socket.create_connection((HOST, tc.mc_port))
        s.settimeout(5)
        assert s.recv(10) == b""  # kicked after a second or two
        s.close()
        assert b"STAT idle_kicks 1\r\n" in ask(tc.mc_port, b"stats\r\n")
    finally:
        tc.stop()


def test_help_names_what_is_supported():
    out = subprocess.run([str(twincache_bin()), "-h"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, timeout=10).stdout.decode()
    for word in ("unix-socket", "enable-sasl", "enable-ssl"):
        assert word in out
    # no external storage, proxy or seccomp privilege dropping: not advertised, and ext_path
    # refused as a memcached built without extstore refuses it
    for word in ("ext_path", "proxy_config", "no_drop_privileges"):
        assert word not in out
    p = subprocess.run([str(twincache_bin()), "-p", "0", "-o", "ext_path=/tmp/x:64m"] + USER,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    assert p.returncode != 0 and b'Illegal suboption "ext_path=/tmp/x:64m"' in p.stdout


def test_no_cas_flush_loses_same_second_sets():
    """-C: memcached's flush_all is exact only to the second (oldest_live), so a set in the
    flush's own second is flushed too, on memcached and on twincache."""
    tc, mc = start_tc("-C"), start_mc("-C")
    try:
        for srv in (tc, mc):
            s = socket.create_connection((HOST, srv.mc_port))
            s.settimeout(2)
            f = s.makefile("rb")
            lost = 0
            for _ in range(20):
                s.sendall(b"flush_all 0\r\nset foo 0 0 3\r\nnew\r\nget foo\r\n")
                assert f.readline() == b"OK\r\n" and f.readline() == b"STORED\r\n"
                line = f.readline()
                if line == b"END\r\n":
                    lost += 1
                    break
                assert f.readline() == b"new\r\n" and f.readline() == b"END\r\n"
            assert lost == 1, srv
            s.sendall(b"stats\r\n")
            stats = b""
            while not stats.endswith(b"END\r\n"):
                stats += f.readline()
            assert b"STAT get_flushed 1\r\n" in stats, (srv, stats)
            s.close()
    finally:
        tc.stop()
        mc.stop(check=False)
