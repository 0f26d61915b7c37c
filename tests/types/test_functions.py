"""Redis 7.0 functions (FUNCTION LOAD|LIST|DELETE|FLUSH|DUMP|RESTORE|STATS|HELP, FCALL,
FCALL_RO) against redis-server 7.0: error texts, flags, RESP2/RESP3 shapes of FUNCTION LIST,
DUMP payloads moving between the two servers both ways, functions seen by every worker."""
import pytest
import redis

from conftest import call, canon

LIB = """#!lua name=mylib
local function set(keys, args) return redis.call('SET', keys[1], args[1]) end
local function get(keys, args) return redis.call('GET', keys[1]) end
redis.register_function('myset', set)
redis.register_function{function_name='myget', callback=get, flags={'no-writes'}}
redis.register_function{function_name='echo', callback=function(k, a) return {k, a} end,
  flags={'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'},
  description='echoes'}
"""

LIB2 = """#!lua name=other
redis.register_function('ro_write', function(k, a) return redis.call('SET', k[1], 'x') end)
redis.register_function{function_name='ro_ok', callback=function(k, a) return 7 end,
  flags={'no-writes'}}
redis.register_function('fail', function(k, a) return redis.call('nosuch') end)
redis.register_function('err', function(k, a) error('boom') end)
"""


def flist(x):
    """FUNCTION LIST reply with each library's functions sorted (Redis's order is a dict's)."""
    if not isinstance(x, list):
        return x
    out = []
    for lib in x:
        if isinstance(lib, list):
            lib = list(lib)
            for i in range(0, len(lib) - 1, 2):
                if lib[i] == b"functions":
                    lib[i + 1] = sorted(lib[i + 1], key=repr)
        out.append(lib)
    return sorted(out, key=repr)


def norm(x):
    if isinstance(x, Exception):
        return ("error", str(x))
    if isinstance(x, list):
        return [norm(v) for v in x]
    if isinstance(x, set):
        return sorted(norm(v) for v in x)
    if isinstance(x, dict):
        return sorted((norm(k), norm(v)) for k, v in x.items())
    return x


@pytest.fixture
def fd(tc_server, redis_server):
    tc, rs = tc_server.client(), redis_server.client()
    for c in (tc, rs):
        c.execute_command("FUNCTION", "FLUSH")
        c.flushall()

    def diff(*args, unordered=False):
        a, b = norm(call(tc, *args)), norm(call(rs, *args))
        if [str(v).upper() for v in args[:2]] == ["FUNCTION", "LIST"]:
            a, b = flist(a), flist(b)
        elif unordered:
            a, b = canon(a), canon(b)
        assert a == b, "%r:\n twincache: %r\n redis:     %r" % (args, a, b)
        return a
    diff.tc, diff.rs = tc, rs
    yield diff
    for c in (tc, rs):
        c.execute_command("FUNCTION", "FLUSH")
    tc.connection_pool.disconnect()
    rs.connection_pool.disconnect()


BAD_LOADS = [
    "return 1",
    "#!lua\nredis.register_function('f', function() end)",
    "#!lua name=\nredis.register_function('f', function() end)",
    "#!lua name=a-b\nredis.register_function('f', function() end)",
    "#!lua name=x name=y\nredis.register_function('f', function() end)",
    "#!lua name=x foo=bar\nredis.register_function('f', function() end)",
    "#!nosuch name=x\nredis.register_function('f', function() end)",
    "#!lua name=x\nlocal a = 1",
    "#!lua name=x\nredis.call('SET', 'a', 'b')",
    "#!lua name=x\nredis.register_function('f', function() end)\nreturn redis.call('PING')",
    "#!lua name=x\nredis.register_function('bad-name', function() end)",
    "#!lua name=x\nredis.register_function('', function() end)",
    "#!lua name=x\nredis.register_function('f', function() end)\n"
    "redis.register_function('f', function() end)",
    "#!lua name=x\nredis.register_function('f')",
    "#!lua name=x\nredis.register_function('f', 1)",
    "#!lua name=x\nredis.register_function(1, function() end)",
    "#!lua name=x\nredis.register_function('f', function() end, 3)",
    "#!lua name=x\nredis.register_function{function_name='f'}",
    "#!lua name=x\nredis.register_function{callback=function() end}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
    "flags={'nosuch'}}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
    "flags='no-writes'}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
    "what=1}",
    "#!lua name=x\nredis.register_function{function_name=1, callback=function() end}",
    "#!lua name=x\nredis.register_function{function_name='f', callback=1}",
    "#!lua name=x\nredis.register_function('x')",
    "#!lua name=x\nthis is not lua",
    "#!lua name=x\nerror('at load')",
    "#!lua name=x\nwhile true do end",  # FUNCTION LOAD timeout (0.5 s)
    # the shebang split as Redis's sdssplitargs: quotes, engine case, no line feed
    '#!lua name="q1"\nredis.register_function("fq1", function() return 1 end)',
    "#!lua name='q2'\nredis.register_function('fq2', function() return 1 end)",
    "#! name=test\nredis.register_function('foo', function() return 1 end)",
    "#!LUA NAME=x1\nredis.register_function('fx1', function() return 1 end)",
    '#!lua name="unbalanced\nreturn 1', '#!lua name="x"y\nreturn 1', "#!lua name=nolf",
    '#!lua name="a b"\nreturn 1', "#!lua name=x\tname=y\nreturn 1",
]


@pytest.mark.parametrize("code", BAD_LOADS)
def test_load_errors(fd, code):
    fd("FUNCTION", "LOAD", code)
    fd("FUNCTION", "LIST")


def test_load_list_delete(fd):
    fd("FUNCTION", "LOAD", LIB)
    fd("FUNCTION", "LOAD", LIB)  # already exists
    fd("FUNCTION", "LOAD", "REPLACE", LIB)
    fd("FUNCTION", "LOAD", "NOSUCH", LIB)
    fd("FUNCTION", "LOAD", "REPLACE", "REPLACE", LIB)
    fd("FUNCTION", "LOAD", "REPLACE", "x", LIB)
    fd("FUNCTION", "LOAD", "REPLACE")
    fd("FUNCTION", "LOAD")
    fd("FUNCTION", "LOAD", "#!lua name=clash\nredis.register_function('myset', function() end)")
    fd("FUNCTION", "LOAD", LIB2)
    fd("FUNCTION", "LIST", unordered=True)
    fd("FUNCTION", "LIST", "WITHCODE", unordered=True)
    fd("FUNCTION", "LIST", "LIBRARYNAME", "my*")
    fd("FUNCTION", "LIST", "LIBRARYNAME", "my*", "WITHCODE")
    fd("FUNCTION", "LIST", "LIBRARYNAME", "nosuch")
    fd("FUNCTION", "LIST", "LIBRARYNAME")
    fd("FUNCTION", "LIST", "BOGUS")
    fd("FUNCTION", "STATS")
    fd("FUNCTION", "DELETE", "nosuch")
    fd("FUNCTION", "DELETE", "other")
    fd("FUNCTION", "DELETE")
    fd("FUNCTION", "LIST")
    fd("FUNCTION", "FLUSH", "BOGUS")
    fd("FUNCTION", "FLUSH", "ASYNC")
    fd("FUNCTION", "LOAD", LIB)
    fd("FUNCTION", "FLUSH", "SYNC")
    fd("FUNCTION", "LIST")
    fd("FUNCTION", "STATS")
    fd("FUNCTION", "HELP")
    fd("FUNCTION", "NOSUCH")
    fd("FUNCTION")


def test_fcall(fd):
    fd("FUNCTION", "LOAD", LIB)
    fd("FUNCTION", "LOAD", LIB2)
    fd("FCALL", "myset", 1, "k", "v")
    fd("FCALL", "myget", 1, "k")
    fd("FCALL_RO", "myget", 1, "k")
    fd("FCALL_RO", "myset", 1, "k", "v")
    fd("FCALL", "echo", 2, "a", "b", "c", "d")
    fd("FCALL", "echo", 0)
    fd("FCALL", "nosuch", 0)
    fd("FCALL", "myget", 5, "k")
    fd("FCALL", "myget", -1, "k")
    fd("FCALL", "myget", "x", "k")
    fd("FCALL_RO", "ro_write", 1, "k")
    fd("FCALL_RO", "ro_ok", 0)
    fd("FCALL", "fail", 0)
    fd("FCALL", "err", 0)
    fd("FCALL", "myset", 1, "k")
    fd("FCALL")
    fd("GET", "k")
    # a function that writes under no-writes
    fd("FUNCTION", "LOAD", "#!lua name=nw\nredis.register_function{function_name='nw', "
       "callback=function(k) return redis.call('SET', k[1], 1) end, flags={'no-writes'}}")
    fd("FCALL", "nw", 1, "k")
    fd("FUNCTION", "DELETE", "mylib")
    fd("FCALL", "myset", 1, "k", "v")
    # SCRIPT FLUSH and FLUSHALL leave functions alone
    fd("SCRIPT", "FLUSH")
    fd("FLUSHALL")
    fd("FCALL", "ro_ok", 0)
    fd("FUNCTION", "LIST", "LIBRARYNAME", "other")


def test_function_globals(fd):
    fd("FUNCTION", "LOAD", "#!lua name=y\nredis.register_function('g', function() return FOO end)")
    fd("FCALL", "g", 0)
    fd("FUNCTION", "LOAD", "#!lua name=z\nredis.register_function('h', function() BAR = 1 end)")
    fd("FCALL", "h", 0)
    fd("FUNCTION", "LOAD", "#!lua name=w\nredis.register_function('i', function() "
       "return {type(string), type(redis.call), type(KEYS)} end)")
    fd("FCALL", "i", 0)


def test_fcall_in_multi(fd):
    fd("FUNCTION", "LOAD", LIB)
    for c in (fd.tc, fd.rs):
        p = c.pipeline(transaction=True)
        p.execute_command("FCALL", "myset", 1, "k", "v1")
        p.execute_command("FCALL", "myget", 1, "k")
        assert p.execute() == [b"OK", b"v1"]


def test_resp3_shapes(tc_server, redis_server):
    """FUNCTION LIST (with and without code) and STATS over HELLO 3, byte for byte (one
    function per library: the order within a library is a dict's in Redis)."""
    from test_resp3 import Raw
    lib = ("#!lua name=r3\nredis.register_function{function_name='f', callback=function() "
           "return 1 end, flags={'no-writes', 'allow-oom'}, description='d'}")
    a, b = Raw(tc_server.port), Raw(redis_server.port)
    try:
        for c in (a, b):
            c.send("HELLO", "3")
            c.send("FUNCTION", "FLUSH")
            c.send("FUNCTION", "LOAD", lib)
        for cmd in (("FUNCTION", "LIST"), ("FUNCTION", "LIST", "WITHCODE"), ("FUNCTION", "STATS"),
                    ("FCALL", "f", 0), ("FUNCTION", "LIST", "LIBRARYNAME", "zz")):
            x, y = a.send(*cmd), b.send(*cmd)
            assert x == y, (cmd, x, y)
        for c in (a, b):
            c.send("FUNCTION", "FLUSH")
    finally:
        a.close()
        b.close()


def test_dump_restore_both_ways(fd):
    tc, rs = fd.tc, fd.rs
    tc.execute_command("FUNCTION", "LOAD", LIB)
    payload = tc.execute_command("FUNCTION", "DUMP")
    assert rs.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
    fd("FUNCTION", "LIST", "WITHCODE")
    fd("FUNCTION", "RESTORE", payload)  # already exists
    fd("FUNCTION", "RESTORE", payload, "REPLACE")
    fd("FUNCTION", "RESTORE", payload, "BOGUS")
    fd("FUNCTION", "RESTORE", b"\x00" + payload[1:])
    fd("FUNCTION", "RESTORE", payload[:-1] + bytes([payload[-1] ^ 1]))
    fd("FUNCTION", "RESTORE", "x")
    rs.execute_command("FUNCTION", "LOAD", LIB2)
    payload = rs.execute_command("FUNCTION", "DUMP")
    fd("FUNCTION", "FLUSH")
    assert tc.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
    rs.execute_command("FUNCTION", "RESTORE", payload)
    fd("FUNCTION", "LIST", "WITHCODE", unordered=True)
    fd("FCALL", "ro_ok", 0)
    fd("FUNCTION", "LOAD", "#!lua name=z\nredis.register_function('myset', function() end)")
    fd("FUNCTION", "RESTORE", payload, "FLUSH")
    fd("FUNCTION", "LIST", "WITHCODE", unordered=True)
    # twincache's payload of two libraries (uncompressed) back into redis-server
    payload = tc.execute_command("FUNCTION", "DUMP")
    assert rs.execute_command("FUNCTION", "RESTORE", payload, "FLUSH") == b"OK"
    fd("FUNCTION", "LIST", "WITHCODE")
    fd("FCALL", "myget", 1, "k")


def test_every_worker_sees_functions(tc_server):
    clients = [tc_server.client() for _ in range(8)]
    try:
        clients[0].execute_command("FUNCTION", "LOAD", LIB)
        for i, c in enumerate(clients):
            assert c.execute_command("FCALL", "myset", 1, "w%d" % i, i) == b"OK"
        clients[3].execute_command("FUNCTION", "DELETE", "mylib")
        for c in clients:
            with pytest.raises(redis.exceptions.ResponseError, match="Function not found"):
                c.execute_command("FCALL", "myset", 1, "k", "v")
    finally:
        clients[0].execute_command("FUNCTION", "FLUSH")
        for c in clients:
            c.connection_pool.disconnect()


def test_info_and_command(fd):
    fd("FUNCTION", "LOAD", LIB)
    for c in (fd.tc, fd.rs):
        text = c.execute_command("INFO", "memory").decode()
        info = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
        assert info["number_of_functions"] == "3"
        assert info["number_of_libraries"] == "1"
        for f in ("used_memory_vm_functions", "used_memory_functions"):
            assert f in info
    fd("COMMAND", "GETKEYS", "FCALL", "myset", 2, "a", "b", "c")
    fd("COMMAND", "GETKEYS", "FCALL_RO", "myget", 0, "c")
    tcinfo = fd.tc.execute_command("COMMAND", "INFO", "FCALL")
    assert b"movablekeys" in tcinfo[0][2]


def test_fcall_while_libraries_change(tc_server):
    """FCALL on several connections while another one replaces, deletes and reloads the
    library: every call either runs a version of the function or finds none."""
    import threading
    code = "#!lua name=race\nredis.register_function('rf', function(k) " \
           "return redis.call('INCR', k[1]) end)"
    admin = tc_server.client()
    admin.execute_command("FUNCTION", "LOAD", code)
    admin.delete("race:n")
    stop, errors, done = threading.Event(), [], [0]

    def caller():
        c = tc_server.client()
        while not stop.is_set():
            try:
                c.execute_command("FCALL", "rf", 1, "race:n")
                done[0] += 1
            except redis.exceptions.ResponseError as e:
                if "Function not found" not in str(e):
                    errors.append(str(e))
        c.connection_pool.disconnect()

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(40):
            admin.execute_command("FUNCTION", "LOAD", "REPLACE", code + "\n-- v%d" % i)
            if i % 10 == 0:
                admin.execute_command("FUNCTION", "DELETE", "race")
                admin.execute_command("FUNCTION", "LOAD", code)
    finally:
        stop.set()
        for t in threads:
            t.join()
        admin.execute_command("FUNCTION", "FLUSH")
    assert not errors, errors[:3]
    assert int(admin.get("race:n")) == done[0]
    admin.connection_pool.disconnect()


def test_register_function_kept_past_load_and_name_case(fd):
    """A library that keeps redis.register_function and calls it from a function later gets
    Redis's error (the server died: the loading state it used was gone); FCALL finds a
    function whatever the case of its name; the engine name ignores case."""
    fd("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\n"
       "local lib = redis\n"
       "lib.register_function('f1', function () lib.redis = redis return {ok='OK'} end)\n"
       "lib.register_function('f2', function ()\n"
       "    lib.register_function('f1', function () return 1 end)\n"
       "end)")
    fd("FCALL", "f1", 0)
    fd("FCALL", "f2", 0)
    fd("FCALL", "F2", 0)
    fd("FUNCTION", "LOAD", "#!LUA name=lib2\nredis.register_function('Upper', function() "
       "return 2 end)")
    fd("FCALL", "upper", 0)
    fd("FCALL", "UPPER", 0)
    fd("FUNCTION", "LOAD", "#!lua name=lib3\nredis.register_function('uPPER', function() "
       "return 3 end)")
    assert fd.tc.ping()


def test_subcommand_argument_errors(fd):
    fd("FUNCTION", "RESTORE", "a", "b", "c")
    fd("FUNCTION", "FLUSH", "sync", "extra")
    fd("FUNCTION", "FLUSH", "bad")
    fd("FUNCTION", "LIST", "withcode", "withcode")
    fd("FUNCTION", "LIST", "withcode", "libraryname", "foo", "libraryname", "foo")
    fd("FUNCTION", "LIST", "libraryname")
