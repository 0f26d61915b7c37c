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


def test_memory_other_subcommands(d):
    d("MEMORY", "HELP")
    d("MEMORY", "DOCTOR")
    d("MEMORY", "PURGE")
    d("MEMORY", "STATS", "x")
    d("MEMORY", "NOSUCH")
    for c in (d.tc, d.rs):
        report = call(c, "MEMORY", "MALLOC-STATS")
        if b"mem_allocator:jemalloc" in call(c, "INFO", "memory"):
            assert report.startswith(b"___ Begin jemalloc statistics ___")
        else:  # the sanitizer builds use libc's malloc: Redis's text for that case
            assert report == b"Stats not supported for the current allocator"
