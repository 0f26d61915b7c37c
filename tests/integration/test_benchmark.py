"""redis-benchmark -t ping,set,get,incr,mset -n 100000 -q, plain, with -P 16 and with -c 500.

redis-benchmark (Redis 7) exits with code 1 and prints "Error from server: ..." on the first
error reply, so a zero exit code plus one "requests per second" line per test means every
request got a non-error reply. Without -r every test hits one fixed key, which lets us check
the totals afterwards: counter:__rand_int__ must equal the number of INCRs.

TC_BENCH_REQUESTS lowers -n for slow (sanitizer) builds; the flags stay as in the acceptance.
"""

import os
import re
import subprocess

import pytest

REQUESTS = int(os.environ.get("TC_BENCH_REQUESTS", "100000"))
TESTS = ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "MSET (10 keys)"]


def run_benchmark(server, *extra, timeout=240):
    cmd = ["redis-benchmark", "-h", server.host, "-p", str(server.port),
           "-t", "ping,set,get,incr,mset", "-n", str(REQUESTS), "-q"] + list(extra)
    res = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    stdout = res.stdout.decode("utf-8", "replace")
    stderr = res.stderr.decode("utf-8", "replace")
    # -q prints progress lines terminated by \r and one final line per test
    lines = [l.strip() for l in re.split(r"[\r\n]", stdout) if l.strip()]
    return res.returncode, lines, stdout, stderr


@pytest.mark.parametrize("extra", [
    [],
    pytest.param(["-P", "16"], marks=pytest.mark.sanitize),  # deep pipelines: worth ASan
    ["-c", "500"],
], ids=["default", "pipeline16", "clients500"])
def test_redis_benchmark(server, r, extra):
    rc, lines, stdout, stderr = run_benchmark(server, *extra)
    context = "rc=%d\nstdout tail: %s\nstderr: %s" % (rc, stdout[-2000:], stderr[-2000:])
    assert rc == 0, context
    assert "Error from server" not in stdout + stderr, context
    # benchmark asks CONFIG GET save/appendonly first and warns if that fails
    assert "Could not fetch server CONFIG" not in stdout + stderr, context
    results = {}
    for line in lines:
        m = re.match(r"^(.+?): ([0-9.]+) requests per second", line)
        if m:
            results[m.group(1)] = float(m.group(2))
    assert sorted(results) == sorted(TESTS), context
    assert all(v > 0 for v in results.values()), results
    # every request landed: INCR ran exactly REQUESTS times on one key
    assert r.get("counter:__rand_int__") == str(REQUESTS)
    assert r.get("key:__rand_int__") == "VXK"  # SET/MSET value of -d 3
    assert r.dbsize() == 2
    assert server.ping_raw() == b"+PONG\r\n"
