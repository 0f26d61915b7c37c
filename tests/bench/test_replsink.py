"""bench/replsink, the stand-in for a replica on another machine in bench/replication: it
attaches to twincache and to redis-server as a replica, its acknowledged offset reaches the
primary's after a burst of writes and after a lone small one (the data it discards without
copying is still counted byte for byte), WAIT counts it, and it leaves when the primary goes."""
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT, tcharness

SINK = os.path.join(ROOT, "bench", "replsink")


SERVERS = {"twincache": tcharness.start_twincache}
if shutil.which("redis-server") or os.path.exists("/usr/bin/redis-server"):
    SERVERS["redis-server"] = tcharness.start_redis


def acked(c):
    """(the sink's acknowledged offset, the primary's offset), or None before it is online."""
    i = c.info("replication")
    s = i.get("slave0")
    if not s or s.get("state") != "online":
        return None
    return s["offset"], i["master_repl_offset"]


def wait_acked(c, timeout=10.0):
    end = time.time() + timeout
    last = None
    while time.time() < end:
        last = acked(c)
        if last and last[0] == last[1]:
            return last[1]
        time.sleep(0.01)
    raise AssertionError("the sink did not acknowledge the primary's offset: %r" % (last,))


@pytest.mark.parametrize("name", list(SERVERS))
def test_sink_acknowledges_every_byte(name):
    srv = SERVERS[name]("--repl-diskless-sync-delay", "0")
    sink = None
    try:
        c = srv.client()
        for i in range(2000):
            c.set("pre:%d" % i, "v" * 100)  # a full sync with data in it
        sink = subprocess.Popen([sys.executable, SINK, "127.0.0.1", str(srv.port)])
        first = wait_acked(c)
        p = c.pipeline(transaction=False)
        for i in range(100000):  # ~27 MB of stream: many 256 KiB wake-ups
            p.set("k:%d" % (i % 30000), "x" * 200)
        p.execute()
        burst = wait_acked(c)
        assert burst - first > 100000 * 200, (first, burst)
        c.set("one", "1")  # far below the wake-up size: the ACK timer reports it
        assert wait_acked(c) > burst
        assert c.execute_command("WAIT", 1, 2000) == 1
        assert sink.poll() is None
    finally:
        srv.stop()
        if sink:
            assert sink.wait(timeout=10) in (0, 1)  # the primary closed the link
