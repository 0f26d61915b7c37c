"""XSETID against redis-server 7.0: replies, every error text, and its effect on XADD, XINFO
STREAM (last-generated-id, entries-added, max-deleted-entry-id) and a dump round trip."""
import pytest

SEQS = [
    [("XSETID", "nokey", "1-1")],
    [("SET", "str", "x"), ("XSETID", "str", "1-1")],
    [("XADD", "s", "5-1", "f", "v"), ("XSETID", "s", "4-0"), ("XSETID", "s", "5-1"),
     ("XSETID", "s", "10-0"), ("XADD", "s", "20-1", "f", "v"), ("XADD", "s", "9-9", "f", "v"),
     ("XADD", "s", "10-1", "f", "v")],
    [("XADD", "s", "5-1", "f", "v"), ("XADD", "s", "6-1", "f", "v"), ("XDEL", "s", "6-1"),
     ("XSETID", "s", "5-9"), ("XSETID", "s", "6-0"), ("XSETID", "s", "7-0", "ENTRIESADDED", 1),
     ("XSETID", "s", "7-0", "ENTRIESADDED", 50, "MAXDELETEDID", "6-5"),
     ("XSETID", "s", "7-0", "MAXDELETEDID", "8-0"), ("XSETID", "s", "7-0", "ENTRIESADDED", -1),
     ("XSETID", "s", "7-0", "ENTRIESADDED", "x"), ("XSETID", "s", "7-0", "BOGUS", 1),
     ("XSETID", "s", "7-0", "ENTRIESADDED"), ("XSETID", "s", "bad-id"), ("XSETID", "s", "-"),
     ("XSETID", "s", "+"), ("XSETID", "s", "8")],
    [("XADD", "e", "MAXLEN", "0", "3-3", "f", "v"), ("XSETID", "e", "1-0"),
     ("XSETID", "e", "2-0", "ENTRIESADDED", 0), ("XLEN", "e")],
]


def xinfo(c, key):
    try:
        r = c.execute_command("XINFO", "STREAM", key)
    except Exception as e:  # noqa: BLE001
        return str(e)
    r = dict(zip(r[::2], r[1::2]))
    return {k: r[k] for k in (b"length", b"last-generated-id", b"entries-added",
                              b"max-deleted-entry-id") if k in r}


@pytest.mark.parametrize("seq", range(len(SEQS)))
def test_xsetid_as_redis(d, seq):
    for args in SEQS[seq]:
        d(*args)
    for key in ("s", "e"):
        assert xinfo(d.tc, key) == xinfo(d.rs, key)
