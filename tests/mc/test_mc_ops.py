"""memcached's operational text commands side by side with memcached 1.6: the HTTP hang-up,
lru_crawler (metadump, crawl, tunables), slabs, lru, cache_memlimit, stats detail / sizes /
cachedump, and memcached-tool's dump over metadump."""

import glob
import re
import shutil
import subprocess
import time

import pytest

from mcharness import Raw

pytestmark = pytest.mark.sanitize


def both(tc, memcached, fn):
    return fn(tc.mc_port), fn(memcached.mc_port)


def hangup(port, data):
    c = Raw(port)
    c.send(data)
    try:
        return c.read_to_close(timeout=2.0)
    finally:
        c.close()


HTTP_LINES = [b"GET / HTTP/1.1\r\n", b"POST /x HTTP/1.0\r\nHost: a\r\n\r\n", b"HTTP/1.1\r\n",
              b"foo HTTP/9\r\n", b"PUT / HTTP/1.1\r\n", b"set a 0 0 1\r\nx\r\nHEAD / HTTP/1.1\r\n",
              b"version\r\nOPTIONS * HTTP/1.1\r\n"]


@pytest.mark.parametrize("data", HTTP_LINES)
def test_http_request_line_hangs_up(tc, memcached, data):
    got, want = both(tc, memcached, lambda p: hangup(p, data))
    assert got == want


NOT_HTTP = [b"GET /\r\n", b"x HTTP/1.1\r\n", b"gx HTTP/1.1\r\n", b"mx HTTP/1.1\r\n",
            b"stats HTTP/1.1\r\n", b"foo HTTPS/1\r\n", b"foo http/1.1\r\n",
            b"foo HTTP/1 x\r\n", b"version HTTP/1.1\r\n", b"add HTTP/1.1\r\n",
            b"touch a HTTP/1.1\r\n", b"lru_crawler HTTP/1.1\r\n"]


def script(port, lines):
    c = Raw(port)
    out = []
    for line in lines:
        c.send(line + b"mn\r\n")
        reply = c.read_until(b"MN\r\n")
        # memcached's crawler runs in the background: a crawl sent while the previous one
        # still runs is refused with BUSY for a moment; ask again so both answer the same
        deadline = time.time() + 5
        while (line.startswith(b"lru_crawler crawl") and reply.startswith(b"BUSY") and
               time.time() < deadline):
            time.sleep(0.05)
            c.send(line + b"mn\r\n")
            reply = c.read_until(b"MN\r\n")
        out.append(reply)
    c.close()
    return out


@pytest.mark.parametrize("line", NOT_HTTP)
def test_not_http_answers(tc, memcached, line):
    got, want = both(tc, memcached, lambda p: script(p, [line]))
    assert got == want


ADMIN = [
    b"lru_crawler", b"lru_crawler foo", b"lru_crawler crawl all", b"lru_crawler crawl 1",
    b"lru_crawler crawl 99", b"lru_crawler crawl 1,2", b"lru_crawler sleep 100",
    b"lru_crawler tocrawl 10", b"lru_crawler enable", b"lru_crawler metadump",
    b"lru_crawler metadump foo nokey",
    b"slabs reassign 1 2", b"slabs reassign 1 1", b"slabs reassign 1 99", b"slabs reassign a b",
    b"slabs automove 1", b"slabs automove 0", b"slabs automove 3", b"slabs foo", b"slabs",
    b"lru mode flat", b"lru mode segmented", b"lru mode x", b"lru temp_ttl 10",
    b"lru tune 10 20 0.1 2", b"lru foo", b"lru",
    b"cache_memlimit 100", b"cache_memlimit 0", b"cache_memlimit 7", b"cache_memlimit abc",
    b"cache_memlimit 100 noreply", b"cache_memlimit",
    b"stats sizes", b"stats detail", b"stats detail foo", b"stats detail on",
    b"stats detail off", b"stats cachedump 99 1", b"stats cachedump 1",
    b"stats cachedump a b",
]


def test_admin_commands(tc, memcached):
    lines = [line + b"\r\n" for line in ADMIN]
    got, want = both(tc, memcached, lambda p: script(p, lines))
    for line, g, w in zip(ADMIN, got, want):
        assert (line, g) == (line, w)
    both(tc, memcached, lambda p: script(p, [b"cache_memlimit 64\r\n"]))


def test_cache_memlimit_sets_maxbytes(tc, memcached):
    def run(p):
        out = script(p, [b"cache_memlimit 100\r\n", b"stats settings\r\n",
                         b"cache_memlimit 64\r\n"])
        return out[0], re.search(rb"STAT maxbytes (\d+)", out[1]).group(1)
    got, want = both(tc, memcached, run)
    assert got == want == (b"OK\r\nMN\r\n", b"104857600")


META_RE = re.compile(r"key=(\S+) exp=(-?\d+) la=(\d+) cas=(\d+) fetch=(yes|no) cls=(\d+) "
                     r"size=(\d+)$")


def metadump(port, arg=b"all"):
    c = Raw(port)
    out = c.call(b"lru_crawler metadump " + arg + b"\r\n", b"END\r\n").decode()
    c.close()
    rows = {}
    assert out.endswith("\nEND\r\n") or out == "END\r\n", out
    for line in out[:-5].split("\n")[:-1]:
        assert not line.endswith("\r"), line
        m = META_RE.match(line)
        assert m, line
        rows[m.group(1)] = m.groups()
    return rows


def fill(port):
    c = Raw(port)
    # (no flush_all: memcached's crawler skips items stored in the second of a flush)
    c.sync(b"".join(b"delete %s noreply\r\n" % k for k in (b"foo", b"k2", b"a:b", b"sp%ce")))
    c.sync(b"set foo 5 0 3\r\nbar\r\nset k2 0 100 2\r\nhi\r\nset a:b 0 0 1\r\nx\r\n"
           b"set sp%ce 7 0 4\r\nabcd\r\n")
    c.call(b"get a:b\r\n", b"END\r\n")
    c.close()


@pytest.mark.parametrize("arg", [b"all", b"hash", b"1"])
def test_metadump(tc, memcached, arg):
    for p in (tc.mc_port, memcached.mc_port):
        fill(p)
    got, want = both(tc, memcached, lambda p: metadump(p, arg))
    assert sorted(got) == sorted(want)
    assert {"a%3Ab", "foo", "k2", "sp%25ce"} <= set(want)
    for k in want:
        g, w = got[k], want[k]
        assert abs(int(g[1]) - int(w[1])) <= 2 if w[1] != "-1" else g[1] == "-1"
        assert abs(int(g[2]) - int(w[2])) <= 2
        assert (g[4], g[5], g[6]) == (w[4], w[5], w[6]), k


def test_metadump_not_pipelined(tc, memcached):
    def run(p):
        c = Raw(p)
        c.send(b"version\r\nlru_crawler metadump all\r\n")
        out = c.read_until(b"metadump\r\n")
        c.close()
        return out
    got, want = both(tc, memcached, run)
    assert got == want


def memcached_tool():
    found = shutil.which("memcached-tool") or next(
        iter(glob.glob("/usr/share/memcached/scripts/memcached-tool")), None)
    if not found:
        pytest.skip("memcached-tool not installed")
    return found


def tool_dump(port):
    p = subprocess.run(["perl", memcached_tool(), "127.0.0.1:%d" % port, "dump"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.decode().split("\r\n" if b"\r\n" in p.stdout else "\n")
    items = {}
    i = 0
    while i < len(lines):
        m = re.match(r"add (\S+) (\d+) (\d+) (\d+)$", lines[i])
        if m:
            items[m.group(1)] = (m.group(2), m.group(3) != "0", m.group(4), lines[i + 1])
            i += 2
        else:
            i += 1
    return items


def test_memcached_tool_dump(tc, memcached):
    memcached_tool()
    for p in (tc.mc_port, memcached.mc_port):
        fill(p)
    got, want = both(tc, memcached, tool_dump)
    assert {"a:b", "foo", "k2", "sp%ce"} <= set(want)
    assert got == want


def test_stats_cachedump(tc, memcached):
    """memcached lists the items in its cold LRU (which ones depends on its LRU maintainer):
    the line format is compared, and twincache lists every item of its one class."""
    for p in (tc.mc_port, memcached.mc_port):
        fill(p)
    item_re = re.compile(rb"ITEM (\S+) \[(\d+) b; (\d+) s\]\r\n")
    for p in (tc.mc_port, memcached.mc_port):
        c = Raw(p)
        out = c.call(b"stats cachedump 1 0\r\n", b"END\r\n")
        c.close()
        rows = item_re.findall(out)
        assert out == b"".join(b"ITEM %s [%s b; %s s]\r\n" % r for r in rows) + b"END\r\n"
        if p == tc.mc_port:
            got = {k: (n, e != b"0") for k, n, e in rows}
            assert got[b"foo"] == (b"3", False) and got[b"k2"] == (b"2", True), got
    c = Raw(tc.mc_port)
    out = c.call(b"stats cachedump 1 2\r\n", b"END\r\n")
    c.close()
    assert len(item_re.findall(out)) == 2


STALE_SET = [b"ms st 1 T0\r\na\r\n", b"md st I T30\r\n", b"mg st t v\r\n",
             b"ms st S1 I T90 C1\r\nb\r\n", b"mg st t v\r\n", b"ms st 1 I T90 C1\r\nc\r\n",
             b"mg st t v\r\n", b"ms st2 1 T50\r\na\r\n", b"md st2 I\r\n",
             b"ms st2 1 I T90 C1\r\nb\r\n", b"mg st2 t v\r\n", b"md st2\r\n", b"md st\r\n"]


def test_stale_set_keeps_ttl(tc, memcached):
    """ms with I and an older CAS over an invalidated item stores a stale value that keeps the
    item's TTL (until a valid set)."""
    got, want = both(tc, memcached, lambda p: script(p, STALE_SET))
    assert got == want
    assert want[6] == b"VA 1 t30 Z X\r\nc\r\nMN\r\n", want


DETAIL = [b"stats reset\r\n", b"stats detail on\r\n", b"set d1:b 0 0 1\r\nx\r\n",
          b"get d1:b d1:c d2:x nokey\r\n", b"get d1:b\r\n", b"gat 0 d1:b\r\n",
          b"delete d1:b\r\n", b"delete d1:q\r\n", b"mg d1:z v\r\n", b"ms d1:y 1\r\nx\r\n",
          b"add d3:a 0 0 1\r\nx\r\n", b"append d3:zz 0 0 1\r\nx\r\n", b"touch d1:y 10\r\n",
          b"stats detail dump\r\n", b"stats detail off\r\n", b"get d1:b\r\n",
          b"stats detail dump\r\n", b"stats reset\r\n", b"stats detail dump\r\n"]


def test_stats_detail(tc, memcached):
    got, want = both(tc, memcached, lambda p: script(p, DETAIL))

    def norm(out):  # memcached lists the prefixes in its hash order
        return [b"".join(sorted(o.split(b"\r\n"))) if b"PREFIX" in o else o for o in out]
    assert norm(got) == norm(want)
    assert b"PREFIX d1 get 4 hit 3 set 1 del 2\r\n" in want[13]


WATCHED = (b"set wa 1 0 1\r\nx\r\nget wa wb\r\nmg wa v\r\nmg wz v\r\ndelete wa\r\n"
           b"ms wq 1 T0\r\nx\r\nappend wq 0 0 1\r\ny\r\nadd wq 0 0 1\r\nz\r\n"
           b"set wt 0 100 2\r\nhi\r\ngets wt\r\nmn\r\n")


def watch_log(port):
    """The lines two watchers (fetchers+mutations, and the default) get for WATCHED, with the
    timestamp, event id and client fd left out."""
    w1, w2, c = Raw(port), Raw(port), Raw(port)
    try:
        assert w1.call(b"watch fetchers mutations\r\n") == b"OK\r\n"
        assert w2.call(b"watch\r\n") == b"OK\r\n"
        c.call(WATCHED, b"MN\r\n")
        out = []
        for w, n in ((w1, 16), (w2, 11)):
            data = b""
            while data.count(b"\n") < n:
                data += w.read_until(b"\n", timeout=10)
            out.append(re.sub(rb"ts=\S+ gid=\d+ (.*) cfd=\d+", rb"\1", data).split(b"\n"))
        return out
    finally:
        for x in (w1, w2, c):
            x.close()


def test_watch(tc, memcached):
    got, want = both(tc, memcached, watch_log)
    assert got == want
    assert want[0][1] == b"type=item_store key=wa status=stored cmd=set ttl=0 clsid=1 size=1"


def test_watch_not_pipelined(tc, memcached):
    got, want = both(tc, memcached, lambda p: script(p, [b"watch bogus\r\n"]))
    assert got == want
    def run(p):
        c = Raw(p)
        c.send(b"version\r\nwatch\r\n")
        out = c.read_until(b"watch\r\n")
        c.close()
        return out
    got, want = both(tc, memcached, run)
    assert got == want
