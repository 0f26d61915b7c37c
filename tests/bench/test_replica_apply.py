"""bench/replica-apply plays the primary for a twincache and a redis-server replica, feeds both
the same stream, checks each replica then holds every key it set, and prints the CPU per
applied SET and the ratio."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, tcharness


@pytest.mark.skipif(not shutil.which("redis-server") and not os.path.exists("/usr/bin/redis-server"),
                    reason="Debian's redis-server is not installed")
def test_replica_apply_both_servers():
    env = dict(os.environ, TWINCACHE_BIN=str(tcharness.twincache_bin()))
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "replica-apply"),
                        "--sets", "200000", "--keys", "5000", "--rounds", "1"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    for name in ("twincache", "redis-server"):
        m = re.search(r"^\| %s \| ([\d.]+) \| [\d.]+ \.\. [\d.]+ \| (\d+) \|$" % name, out, re.M)
        assert m, out
        assert float(m.group(1)) > 0 and int(m.group(2)) > 0
    assert re.search(r"^twincache / redis-server replica CPU per applied SET: [\d.]+$", out, re.M)


def test_replica_apply_fails_when_the_stream_is_not_applied(tmp_path):
    # a "replica" that answers the handshake and ACKs everything but stores nothing: the run
    # must fail on the key count instead of reporting a cheap replica
    fake = tmp_path / "fake.py"
    fake.write_text(r'''
import socket, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(4)
while True:
    c, _ = ls.accept()
    d = c.recv(4096)
    if b"REPLICAOF" in d.upper():
        parts = d.split(b"\r\n")
        host, pp = parts[4].decode(), int(parts[6])
        c.sendall(b"+OK\r\n")
        m = socket.create_connection((host, pp))
        for cmd in (b"*1\r\n$4\r\nPING\r\n", b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n"):
            m.sendall(cmd)
        total = 0; buf = b""; hdr = None
        while True:
            x = m.recv(1 << 20)
            if not x:
                break
            buf += x
            if b"GETACK" in buf:
                i = buf.index(b"+FULLRESYNC")
                j = buf.index(b"\xff", i) + 9
                total = buf.rindex(b"*3\r\n$8\r\nREPLCONF") - j
                a = str(total).encode()
                m.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n" % (len(a), a))
                break
        d = c.recv(4096)
        c.sendall(b":0\r\n")
''')
    wrapper = tmp_path / "fake-server"
    wrapper.write_text("#!/bin/sh\nexec /usr/bin/python3 %s \"$@\"\n" % fake)
    wrapper.chmod(0o755)
    env = dict(os.environ, TWINCACHE_BIN=str(wrapper))
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "replica-apply"),
                        "--sets", "100000", "--keys", "1000", "--rounds", "1",
                        "--servers", "twincache"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode != 0
    assert "holds b':0' keys after the stream, not 1000" in r.stderr, r.stdout + r.stderr
