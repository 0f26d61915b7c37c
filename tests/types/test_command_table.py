"""The command table against redis-server 7.0's: COMMAND INFO facts (arity, flags, first/last/
step, ACL categories, key specs, subcommands) for every command both servers have, and
COMMAND GETKEYS / GETKEYSANDFLAGS for every command and subcommand with representative
argument lines, movable keys included. The same table drives stripe locking, WATCH,
blocking wake-ups and the AOF, so a wrong fact here is a wrong lock or a missed wake-up."""
import pytest

from conftest import call

# Lines for the commands whose keys move with their arguments (numkeys, keywords, options).
MOVABLE_LINES = [
    ["zunionstore", "d", "2", "a", "b"],
    ["zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2", "AGGREGATE", "MAX"],
    ["zinterstore", "d", "3", "a", "b", "c"],
    ["zdiffstore", "d", "1", "a"],
    ["zunion", "2", "a", "b", "WITHSCORES"],
    ["zinter", "1", "a"],
    ["zdiff", "2", "a", "b"],
    ["zintercard", "2", "a", "b", "LIMIT", "3"],
    ["sintercard", "3", "a", "b", "c"],
    ["sintercard", "1", "a", "LIMIT", "0"],
    ["lmpop", "2", "a", "b", "LEFT", "COUNT", "2"],
    ["blmpop", "0", "2", "a", "b", "RIGHT"],
    ["zmpop", "1", "a", "MIN"],
    ["bzmpop", "1.5", "2", "a", "b", "MAX", "COUNT", "3"],
    ["sort", "k"],
    ["sort", "k", "BY", "w_*", "GET", "o_*", "LIMIT", "0", "5", "STORE", "dst"],
    ["sort", "k", "STORE", "d1", "STORE", "d2"],
    ["sort", "k", "GET", "store", "ALPHA"],
    ["sort_ro", "k", "BY", "nosort", "GET", "#"],
    ["georadius", "g", "1", "2", "3", "km", "STORE", "d"],
    ["georadius", "g", "1", "2", "3", "km", "STOREDIST", "d", "COUNT", "2"],
    ["georadius", "g", "1", "2", "3", "km", "WITHDIST"],
    ["georadiusbymember", "g", "m", "3", "km", "STORE", "d"],
    ["georadius_ro", "g", "1", "2", "3", "km"],
    ["xread", "STREAMS", "a", "b", "0", "0"],
    ["xread", "COUNT", "2", "BLOCK", "0", "STREAMS", "a", "$"],
    ["xreadgroup", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"],
    ["xreadgroup", "GROUP", "g", "c", "COUNT", "1", "NOACK", "STREAMS", "s", "0"],
    ["set", "k", "v"],
    ["set", "k", "v", "GET"],
    ["set", "k", "v", "EX", "10", "get"],
    ["bitfield", "k", "GET", "u8", "0"],
    ["bitfield", "k", "GET", "u8", "0", "OVERFLOW", "SAT", "SET", "u8", "0", "1"],
    ["bitfield", "k", "INCRBY", "u8", "0", "1"],
    ["bitfield_ro", "k", "GET", "u8", "0"],
    ["migrate", "h", "1", "k", "0", "10"],
    ["migrate", "h", "1", "", "0", "10", "KEYS", "a", "b"],
    ["eval", "return 1", "2", "a", "b", "x"],
    ["evalsha", "abc", "1", "a"],
    ["fcall", "f", "1", "a", "b"],
    ["xgroup", "create", "s", "g", "$"],
    ["xinfo", "stream", "s"],
    ["object", "encoding", "k"],
    ["memory", "usage", "k"],
    ["lmove", "a", "b", "LEFT", "RIGHT"],
    ["smove", "a", "b", "m"],
    ["rename", "a", "b"],
    ["copy", "a", "b", "DB", "1"],
    ["mset", "a", "1", "b", "2"],
    ["msetnx", "a", "1", "b", "2", "c", "3"],
    ["del", "a", "b", "c"],
    ["watch", "a", "b"],
    ["pfmerge", "d", "a", "b"],
    ["bitop", "AND", "d", "a", "b"],
    ["lcs", "a", "b", "LEN"],
    # bad numkeys and missing keywords: the same error from both
    ["zunionstore", "d", "0", "a"],
    ["zunionstore", "d", "5", "a"],
    ["sintercard", "x", "a"],
    ["lmpop", "-1", "a", "LEFT"],
    ["xread", "COUNT", "1", "a", "b"],
    ["set", "k"],
    ["get", "a", "b"],
    ["ping"],
    ["nosuchcommand", "a"],
    ["config", "nosuch", "a"],
    ["publish", "ch", "msg"],
    ["ssubscribe", "a", "b"],
]


def entries(c):
    """name -> INFO reply for every command and subcommand."""
    out = {}
    for e in call(c, "COMMAND"):
        out[e[0].decode()] = e
        for s in e[9]:
            out[s[0].decode()] = s
    return out


def norm_spec(spec):
    kv = dict(zip(spec[::2], spec[1::2]))
    kv.pop(b"notes", None)  # documentation text: ours is our own
    return (sorted(kv[b"flags"]), kv[b"begin_search"], kv[b"find_keys"])


def facts(e):
    return {"arity": e[1], "flags": sorted(e[2]), "range": e[3:6], "acl": sorted(e[6]),
            "keyspecs": [norm_spec(s) for s in e[8]],
            "subcommands": sorted(s[0] for s in e[9])}


@pytest.fixture(scope="module")
def tables(tc_server, redis_server):
    return entries(tc_server.client()), entries(redis_server.client())


def test_command_info_facts_match_redis(tables):
    tc, rs = tables
    common = sorted(set(tc) & set(rs))
    assert len(common) >= 250, common
    bad = []
    for name in common:
        a, b = facts(tc[name]), facts(rs[name])
        if "|" not in name:
            # a container lists only the subcommands it has here
            a_subs, b_subs = set(a.pop("subcommands")), set(b.pop("subcommands"))
            assert a_subs <= b_subs | {b"client|setinfo", b"client|no-touch"}, name
        if a != b:
            bad.append("%s:\n  twincache %r\n  redis     %r" % (name, a, b))
    assert not bad, "\n".join(bad)


def test_only_known_extras(tables):
    tc, rs = tables
    # internal or newer than 7.0: documented in the table
    assert set(tc) - set(rs) <= {"client|setinfo", "client|no-touch"}


def test_command_info_by_full_name_and_unknown(d):
    d("COMMAND", "INFO", "config|get", "get", "xinfo|stream", "nosuch", "config|nosuch")
    d("COMMAND", "COUNT") if False else None  # counts differ: redis has more commands


def test_command_list_filters(tc_server, redis_server):
    tc, rs = tc_server.client(), redis_server.client()
    for args in (["ACLCAT", "hyperloglog"], ["PATTERN", "x*"], ["PATTERN", "config|*"],
                 ["ACLCAT", "nosuch"], ["MODULE", "m"]):
        a = sorted(call(tc, "COMMAND", "LIST", "FILTERBY", *args))
        b = sorted(call(rs, "COMMAND", "LIST", "FILTERBY", *args))
        assert a == b, args


def lines_for_every_command(table):
    """One plain line per command and subcommand, from its arity: enough arguments, each a
    distinct word, so every key position shows."""
    lines = []
    for name, e in sorted(table.items()):
        if e[9]:
            continue  # a container: its subcommands have their own lines
        argv = name.split("|")
        arity = e[1]
        n = arity if arity > 0 else -arity + 2
        argv += ["a%d" % i for i in range(n - len(argv))]
        lines.append(argv)
    return lines


def test_getkeys_for_every_command(tables, d):
    tc, rs = tables
    common = {k: v for k, v in tc.items() if k in rs}
    # commands redis has and twincache does not yet (MIGRATE, EVAL...) are left out
    lines = lines_for_every_command(common) + [
        l for l in MOVABLE_LINES if l[0] in tc or l[0] not in rs]
    for argv in lines:
        d("COMMAND", "GETKEYS", *argv)
        d("COMMAND", "GETKEYSANDFLAGS", *argv, unordered=False)


def test_getkeys_errors(d):
    d("COMMAND", "GETKEYS")
    d("COMMAND", "GETKEYS", "get")
    d("COMMAND", "GETKEYS", "ping", "x")
    d("COMMAND", "GETKEYS", "nosuch", "x")
    d("COMMAND", "GETKEYSANDFLAGS", "config", "get", "x")


def test_subcommand_errors(d):
    d("CONFIG")
    d("CONFIG", "NOSUCH")
    d("CONFIG", "GET")
    d("config", "Get", "maxmemory")
    d("OBJECT", "ENCODING")
    d("XINFO", "nosuch", "x")
    d("COMMAND", "COUNT", "x")
    d("CLIENT", "GETNAME", "x")
