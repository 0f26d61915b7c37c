"""Start-up loading, side by side with redis-server 7.0: while a big RDB loads (slowed down by
key-load-delay, as Redis's own tests do) the server already answers: INFO says loading:1 with
its progress fields, commands without the "loading" flag get -LOADING, and a SIGTERM ends it at
once with exit code 0 (no save) instead of after the load."""

import os
import signal
import socket
import time

import pytest

from persist_harness import make_redis, make_twincache

KEYS = 20000
DELAY_US = 400  # 20000 keys x 400 us: about 8 s of loading


def raw(port, *cmds, timeout=5.0):
    """Send inline commands on one connection; the reply lines, one per command."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(b"".join(c.encode() + b"\r\n" for c in cmds))
        data = b""
        replies = []
        while len(replies) < len(cmds):
            d = s.recv(65536)
            if not d:
                break
            data += d
            while len(replies) < len(cmds):
                if data.startswith(b"$"):
                    nl = data.find(b"\r\n")
                    if nl < 0:
                        break
                    n = int(data[1:nl])
                    if n < 0:
                        replies.append(None)
                        data = data[nl + 2:]
                        continue
                    if len(data) < nl + 2 + n + 2:
                        break
                    replies.append(data[nl + 2:nl + 2 + n].decode())
                    data = data[nl + 2 + n + 2:]
                else:
                    nl = data.find(b"\r\n")
                    if nl < 0:
                        break
                    replies.append(data[:nl].decode())
                    data = data[nl + 2:]
        return replies
    finally:
        s.close()


def wait_answering(srv, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert srv.alive(), srv.output_tail()
        try:
            return raw(srv.port, "INFO persistence")[0]
        except OSError:
            time.sleep(0.02)
    raise AssertionError("no answer during loading: " + srv.output_tail())


def info_fields(text):
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def loading_server(make, tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    srv = make(str(d), "--enable-debug-command", "yes")
    srv.start()
    c = srv.client()
    c.execute_command("DEBUG", "POPULATE", KEYS, "key", 100)
    c.save()
    c.close()
    srv.stop()
    # Redis answers between chunks of loading-process-events-interval-bytes of the file (2 MB
    # by default, about the whole file here); twincache's workers answer all along
    srv.argv += ["--loading-process-events-interval-bytes", "1024",
                 "--key-load-delay", str(DELAY_US)]
    srv.spawn()
    return srv


@pytest.mark.parametrize("make", [make_redis, make_twincache], ids=["redis", "twincache"])
def test_served_while_loading_then_sigterm(make, tmp_path):
    srv = loading_server(make, tmp_path, "s")
    try:
        info = info_fields(wait_answering(srv))
        assert info["loading"] == "1"
        for f in ("loading_start_time", "loading_total_bytes", "loading_loaded_bytes",
                  "loading_loaded_perc", "loading_eta_seconds"):
            assert f in info, f
        assert int(info["loading_total_bytes"]) == os.path.getsize(srv.dump)
        get, ping, dbg = raw(srv.port, "GET key:1", "PING", "DEBUG LOG hello")
        assert get == "-LOADING Redis is loading the dataset in memory"
        assert ping == "-LOADING Redis is loading the dataset in memory"
        assert dbg == "+OK"  # DEBUG has the loading flag
        # still loading: the 5 s test above did not wait for the load
        assert info_fields(raw(srv.port, "INFO persistence")[0])["loading"] == "1"
        t0 = time.monotonic()
        os.kill(srv.pid, signal.SIGTERM)
        rc = srv.wait_exit(5)
        assert rc == 0, "exit code %r after SIGTERM during loading; output:\n%s" % (
            rc, srv.output_tail())
        assert time.monotonic() - t0 < 3
    finally:
        srv.stop(check=False)
    # no save on that shutdown: the file is the one written before
    srv.argv = [a for a in srv.argv]
    srv.argv[-1] = "0"
    srv.start()
    assert srv.client().dbsize() == KEYS
    srv.stop()


@pytest.mark.parametrize("make", [make_redis, make_twincache], ids=["redis", "twincache"])
def test_load_completes_and_serves(make, tmp_path):
    srv = loading_server(make, tmp_path, "s")
    try:
        srv.argv[-1] = str(DELAY_US)
        wait_answering(srv)
        assert srv.wait_ready(30)
        c = srv.client(decode=True)
        assert c.dbsize() == KEYS
        assert c.get("key:7") is not None
        info = c.info("persistence")
        assert info["loading"] == 0
        assert "loading_total_bytes" not in info
    finally:
        srv.stop()
