"""redis-benchmark's whole default suite against twincache: every test must complete with no
error reply. TYPES_BENCH_N sets -n (default 10000; the acceptance run uses 100000)."""
import os
import re
import shutil
import subprocess

import pytest

N = int(os.environ.get("TYPES_BENCH_N", "10000"))
EXPECTED = ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP",
            "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LRANGE_100", "LRANGE_300", "LRANGE_500",
            "LRANGE_600", "MSET"]


@pytest.mark.skipif(not shutil.which("redis-benchmark"), reason="redis-benchmark not installed")
def test_default_suite(tc_server):
    out = subprocess.run(["redis-benchmark", "-p", str(tc_server.port), "-n", str(N), "-q"],
                         capture_output=True, text=True, timeout=900)
    text = out.stdout.replace("\r", "\n") + out.stderr
    assert out.returncode == 0, text
    assert "rror" not in text, text
    done = {m.group(1) for m in re.finditer(r"^(\w+)[^:\n]*: [\d.]+ requests per second", text,
                                            re.M)}
    missing = [t for t in EXPECTED if t not in done]
    assert not missing, "missing %s in:\n%s" % (missing, text)
    c = tc_server.client(decode=True, raw=False)
    assert c.llen("mylist") > 0
    assert c.type("myset") in ("set", "none")
    assert c.hlen("myhash") > 0
    c.connection_pool.disconnect()
