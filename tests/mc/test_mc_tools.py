"""libmemcached's tools (Debian libmemcached-tools, Debian 12 names): the conformance tester
memccapable -a, and memccp, memccat, memcrm, memcflush, memcstat, memcping, memcaslap."""

import os
import shutil
import subprocess

import pytest

TOOLS = ["memccapable", "memccp", "memccat", "memcrm", "memcflush", "memcstat", "memcping",
         "memcaslap"]
missing = [t for t in TOOLS if not shutil.which(t)]
pytestmark = pytest.mark.skipif(bool(missing), reason="libmemcached-tools missing: %s" % missing)


def run(*argv, timeout=120):
    p = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def test_memccapable_ascii(tc):
    rc, out = run("memccapable", "-h", "127.0.0.1", "-p", str(tc.mc_port), "-a")
    assert rc == 0, out
    assert "All tests passed" in out, out
    assert "[FAIL]" not in out, out


def test_memccp_memccat_memcrm(tc, tmp_path):
    servers = "--servers=127.0.0.1:%d" % tc.mc_port
    f = tmp_path / "hello.txt"
    data = "line one\nline two with some bytes \x01\x02\n" * 50
    f.write_text(data)
    rc, out = run("memccp", servers, str(f))
    assert rc == 0, out
    rc, out = run("memccat", servers, "hello.txt")
    assert rc == 0, out
    assert data in out
    rc, out = run("memcrm", servers, "hello.txt")
    assert rc == 0, out
    rc, out = run("memccat", servers, "hello.txt")
    assert rc != 0, out


def test_memcflush_memcstat_memcping(tc, raw):
    servers = "--servers=127.0.0.1:%d" % tc.mc_port
    raw.sync(b"set fl 0 0 1 noreply\r\nx\r\n")
    rc, out = run("memcflush", servers)
    assert rc == 0, out
    assert raw.call(b"get fl\r\n", b"END\r\n") == b"END\r\n"
    rc, out = run("memcstat", servers)
    assert rc == 0, out
    for field in ("pid", "uptime", "curr_items", "total_items", "cmd_get", "get_hits", "threads",
                  "version", "curr_connections"):
        assert "\t%s: " % field in out, out
    rc, out = run("memcping", servers)
    assert rc == 0, out


def test_memcaslap_verify(tc):
    rc, out = run("memcaslap", "-s", "127.0.0.1:%d" % tc.mc_port, "-T", "2", "-c", "16",
                  "-x", "30000", "--verify=1.0")
    assert rc == 0, out
    assert "CLIENT_ERROR" not in out and "SERVER_ERROR" not in out, out[-3000:]
    stats = dict(line.split(": ", 1) for line in out.splitlines()
                 if line.startswith(("cmd_get", "cmd_set", "get_misses", "verify_misses",
                                     "verify_failed")))
    assert int(stats["cmd_get"]) + int(stats["cmd_set"]) == 30000, out
    assert int(stats["verify_failed"]) == 0, out
    assert int(stats["verify_misses"]) == 0, out
    assert int(stats["get_misses"]) == 0, out
