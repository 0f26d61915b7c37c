"""LATENCY and INFO latencystats against redis-server 7.0 (latency-monitor-threshold 10 ms,
DEBUG SLEEP for slow commands): reply shapes, texts and errors equal; times and milliseconds
checked for sense, not equality (they are measured)."""
import re
import time

import pytest

import tcharness
from conftest import CLIENT, call


@pytest.fixture(scope="module")
def pair():
    tc = tcharness.start_twincache("--latency-monitor-threshold", "10",
                                   "--enable-debug-command", "yes", check=True,
                                   client_defaults=CLIENT)
    rs = tcharness.start_redis("--latency-monitor-threshold", "10",
                               "--enable-debug-command", "yes", client_defaults=CLIENT)
    yield tc.client(), rs.client()
    tc.stop()
    rs.stop()


def both(pair, *args):
    return [call(c, *args) for c in pair]


def test_no_events(pair):
    a, b = both(pair, "LATENCY", "LATEST")
    assert a == b == []
    a, b = both(pair, "LATENCY", "DOCTOR")
    assert a == b
    for args in (("LATENCY", "HISTORY", "nosuch"), ("LATENCY", "GRAPH", "nosuch"),
                 ("LATENCY", "HELP"), ("LATENCY", "RESET"), ("LATENCY", "NOSUCH"),
                 ("LATENCY",), ("LATENCY", "HISTORY"), ("LATENCY", "GRAPH", "a", "b")):
        a, b = both(pair, *args)
        assert a == b, args


def test_spikes(pair):
    both(pair, "LATENCY", "RESET")
    t0 = int(time.time())
    both(pair, "DEBUG", "SLEEP", "0.05")
    both(pair, "DEBUG", "SLEEP", "0.02")
    time.sleep(1.1)
    both(pair, "DEBUG", "SLEEP", "0.03")
    latest = both(pair, "LATENCY", "LATEST")
    for rows in latest:
        assert len(rows) == 1
        name, when, last, worst = rows[0]
        assert name == b"command" and when >= t0 and 30 <= last < 1000 and 50 <= worst < 1000
    hist = both(pair, "LATENCY", "HISTORY", "command")
    for h in hist:
        # one sample per second: the first two sleeps share a second unless a second boundary
        # falls between them
        assert len(h) in (2, 3), h
        assert max(x[1] for x in h) >= 50 and h[-1][1] >= 30 and h[-1][0] > h[0][0]
    for g in both(pair, "LATENCY", "GRAPH", "command"):
        first = g.decode().split("\n")[0]
        assert re.fullmatch(r"command - high \d+ ms, low \d+ ms \(all time high \d+ ms\)", first)
    for doc in both(pair, "LATENCY", "DOCTOR"):
        assert re.search(r"1\. command: [23] latency spikes \(average \d+ms, mean deviation \d+ms, "
                         r"period [\d.]+ sec\)\. Worst all time event \d+ms\.", doc.decode())
    a, b = both(pair, "LATENCY", "RESET", "command", "nosuch")
    assert a == b == 1
    assert both(pair, "LATENCY", "LATEST") == [[], []]


def test_histogram_and_latencystats(pair):
    for c in pair:
        call(c, "CONFIG", "RESETSTAT")
    for _ in range(3):
        both(pair, "SET", "k", "v")
    both(pair, "GET", "k")
    a, b = both(pair, "LATENCY", "HISTOGRAM", "set", "get", "nosuch", "SET")
    for h in (a, b):
        assert [x for x in h[::2]] == [b"set", b"get", b"set"]
        assert h[1][:2] == [b"calls", 3] and h[3][:2] == [b"calls", 1]
        counts = h[1][3][1::2]
        assert counts == sorted(counts) and counts[-1] == 3
    names = []
    for c in pair:
        text = call(c, "INFO", "latencystats").decode()
        names.append(sorted(re.findall(r"latency_percentiles_usec_([^:]+):p50=[\d.]+,"
                                       r"p99=[\d.]+,p99\.9=[\d.]+", text)))
    assert names[0] == names[1]
    assert "set" in names[0] and "get" in names[0]
