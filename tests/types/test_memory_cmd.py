"""MEMORY STATS / DOCTOR / PURGE / MALLOC-STATS / HELP against redis-server 7.0: the same
fields of the same kinds (numbers measured, not compared), the same texts where Redis's are
fixed (help, an empty instance's doctor), and the allocator's own report."""
import pytest

from conftest import call


def fields(reply):
    out = {}
    for k, v in zip(reply[::2], reply[1::2]):
        if isinstance(v, list):
            out[k] = ("map", tuple(sorted(fields(v).items())))
        else:
            try:
                float(v)
                out[k] = "number"
            except (TypeError, ValueError):
                out[k] = type(v).__name__
    return out


def test_memory_stats_fields(d):
    for c in (d.tc, d.rs):
        call(c, "SET", "k", "v")
        call(c, "SELECT", 3)
        call(c, "SET", "k", "v")
        call(c, "SELECT", 0)
    a, b = fields(call(d.tc, "MEMORY", "STATS")), fields(call(d.rs, "MEMORY", "STATS"))
    assert list(a) == list(b)
    assert a == b


def test_memory_doctor(tc_factory, redis_server):
    """An empty instance's doctor is Redis's fixed text. It is decided on the memory the server
    holds (Redis: under 5 MB allocated), so it runs on a fresh twincache: the session's server
    keeps, after 800 tests, freed item chunks in its threads' caches, near that line. Filled
    past it, both servers stop calling themselves empty."""
    tc, rs = tc_factory().client(), redis_server.client()
    rs.flushall()
    a, b = call(tc, "MEMORY", "DOCTOR"), call(rs, "MEMORY", "DOCTOR")
    assert a == b and a.startswith(b"Hi Sam, this instance is empty"), (a, b)
    for c in (tc, rs):
        p = c.pipeline(transaction=False)
        for i in range(20000):
            p.set(b"doc:%d" % i, b"v" * 400)
        p.execute()
        report = call(c, "MEMORY", "DOCTOR")
        assert b"this instance is empty" not in report, report
        assert report.startswith((b"Hi Sam, I can't find any memory issue", b"Sam, I detected")), report
    rs.flushall()


def test_memory_other_subcommands(d):
    d("MEMORY", "HELP")
    d("MEMORY", "PURGE")
    d("MEMORY", "STATS", "x")
    d("MEMORY", "NOSUCH")
    for c in (d.tc, d.rs):
        report = call(c, "MEMORY", "MALLOC-STATS")
        if b"mem_allocator:jemalloc" in call(c, "INFO", "memory"):
            assert report.startswith(b"___ Begin jemalloc statistics ___")
        else:  # the sanitizer builds use libc's malloc: Redis's text for that case
            assert report == b"Stats not supported for the current allocator"
