"""Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT) against redis-server 7.0:
conversions both ways (RESP2, and RESP3 after HELLO 3 + redis.setresp(3)), the exact error
texts, the sandbox, KEYS/ARGV, EVALSHA/NOSCRIPT and the SCRIPT subcommands; atomicity across
worker threads (no lost update under concurrent scripts and plain INCRs); redis-py's Lock; and
hostile scripts (bad numkeys, binary arguments, endless recursion, memory hogs)."""
import socket
import threading

import pytest
import redis

from conftest import call


def norm(x):
    """Replies with errors nested in arrays made comparable."""
    if isinstance(x, Exception):
        return ("error", str(x))
    if isinstance(x, list):
        return [norm(v) for v in x]
    return x


class NDiff:
    """The d fixture, comparing nested errors by their text."""

    def __init__(self, d):
        self.tc, self.rs = d.tc, d.rs

    def __call__(self, *args):
        a, b = norm(call(self.tc, *args)), norm(call(self.rs, *args))
        assert a == b, "%r:\n twincache: %r\n redis:     %r" % (args, a, b)
        return a


@pytest.fixture
def nd(d):
    return NDiff(d)


def ev(d, body, *keys_then_args, nkeys=None):
    """EVAL body on both servers; nkeys defaults to 0."""
    n = 0 if nkeys is None else nkeys
    return d("EVAL", body, n, *keys_then_args)


# Lua -> reply
RETURNS = [
    "return 1", "return 3.99", "return -3.99", "return 0.5", "return -0.5", "return 2^31",
    "return 'hello'", "return ''", "return true", "return false", "return nil",
    "return {}", "return {1,2,3}", "return {1,2,nil,4}", "return {1,{2,{3,'x'}},true,false}",
    "return {'a', {ok='fine'}, {err='ERR inner'}}", "return {ok='OK'}", "return {ok='a\\r\\nb'}",
    "return {err='x y'}", "return {err='WRONGTYPE no'}", "return {err='with\\nnewline'}",
    "return redis.error_reply('ZZ')", "return redis.error_reply('-ZZ a')",
    "return redis.error_reply('My Error')", "return redis.status_reply('PONG')",
    "return redis.status_reply('-ZZ a')", "return {double=3.5}", "return {map={a=1}}",
    "return {set={a=true}}", "return {big_number='123'}", "return function() end",
    "return {x=1, y=2}", "return {1, x=2, 3}", "return tostring(1/3)", "return 1e15",
    "return -1e15", "return tostring(0/0) ~= nil", "return #KEYS", "return #ARGV",
    "return redis.sha1hex('abc')", "return redis.sha1hex('')", "return redis.sha1hex(1)",
    "return redis.sha1hex({})", "return redis.REDIS_VERSION_NUM", "return redis.REDIS_VERSION",
    "return redis.replicate_commands()", "return redis.set_repl(redis.REPL_ALL)",
    "return {redis.REPL_ALL, redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, "
    "redis.REPL_REPLICA, redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, "
    "redis.LOG_WARNING}",
    "return redis.log(redis.LOG_DEBUG, 'quiet')", "return redis.breakpoint()",
    "return redis.setresp(2)", "return redis.setresp(3)",
    "return cjson.encode({1,2,3})", "return cjson.decode('[1,2,{\"a\":3}]')[3].a",
    "return cjson.encode(cjson.decode('{\"k\":\"v\"}'))", "return bit.band(0xff, 0x0f)",
    "return bit.bor(1, 2)", "return bit.bxor(5, 3)", "return bit.lshift(1, 10)",
    "return bit.tohex(255)", "return bit.bnot(0)", "return string.format('%d-%s', 5, 'x')",
    "return string.rep('ab', 3)", "return table.concat({'a','b'}, ',')",
    "return math.floor(2.7)", "return type(math.random())", "return select('#', 1, 2, 3)",
    "return unpack({1, 2})", "return tonumber('12') + 1", "return ('x'):upper()",
    "return {pcall(error, 'x')}", "return {pcall(redis.call, 'nosuch')}",
    "return type(coroutine.create(function() end))", "return _VERSION",
    "return loadstring('return 1')()",
    "local t = redis.pcall('nosuch'); local n = 0; for k in pairs(t) do n = n + 1 end return n",
    "local n = 0; for k in pairs(_G) do n = n + 1 end; return n > 10",
    "return rawget(_G, 'redis') ~= nil",
    # unpack's range and bit.tohex's width overflowed in Debian's Lua/LuaBitOp: the server died
    "return {unpack({1,2,3}, -2, 2147483647)}", "return {unpack({1,2,3}, 0, 2147483647)}",
    "return {unpack({1,2,3}, -2147483648, -2)}", "return {unpack({1,2,3}, -1, -2)}",
    "return {unpack({1,2,3}, 1, -1)}", "return select('#', unpack({1,2,3}, -1, 5))",
    "return select('#', unpack({1,2,3}, -2147483648, -2147483646))",
    "return {unpack({1,2,3}, 2)}", "return bit.tohex(65535, -2147483648)",
    "return bit.tohex(65535, 2147483647)", "return bit.tohex(-1, 3)", "return bit.tohex(255, -4)",
    "return bit.tohex(2^40 + 17)", "return bit.tohex('x')",
    "return {big_number='123\\r\\n123'}", "return {verbatim_string={format='mkdown', string='x'}}",
    "return {verbatim_string={format='m', string='a\\nb'}}",
    "return {verbatim_string={format=1, string='x'}}", "return {verbatim_string='x'}",
]


@pytest.mark.parametrize("body", RETURNS)
def test_lua_to_reply(nd, body):
    ev(nd, body, "k1", "a1", "a2", nkeys=1)


# reply -> Lua (what redis.call returns, converted back)
CALLS = [
    "return redis.call('set', 'a', 'b')", "return redis.call('get', 'a')",
    "return redis.call('get', 'nokey')", "return type(redis.call('get', 'nokey'))",
    "return redis.call('set', 'a', 'b').ok", "return redis.call('incr', 'n')",
    "return type(redis.call('incr', 'n2'))", "return redis.call('rpush', 'l', 'x', 'y', 'z')",
    "return redis.call('lrange', 'l', 0, -1)", "return redis.call('lrange', 'nol', 0, -1)",
    "return redis.call('hset', 'h', 'f', 'v', 'g', 'w')", "return redis.call('hgetall', 'h')",
    "return redis.call('mget', 'a', 'nokey', 'l')", "return redis.pcall('incr', 'l')",
    "return redis.pcall('incr', 'l')['err']", "return redis.call('zadd', 'z', 1.5, 'm')",
    "return redis.call('zrange', 'z', 0, -1, 'withscores')", "return redis.call('ping')",
    "return redis.call('ping').ok", "return redis.call('echo', 'x')",
    "return redis.call('set', 'f', 0.1)", "return redis.call('get', 'f')",
    "return redis.call('set', 'f', 3)", "return redis.call('get', 'f')",
    "return redis.call('set', 'f', -2.5e30)", "return redis.call('get', 'f')",
    "return redis.call('type', 'h')", "return redis.call('exists', 'a', 'h', 'zz')",
    "return redis.call('select', 1)",
    "redis.call('select', 1); redis.call('set', 'in1', 'v'); return redis.call('get', 'in1')",
    "return redis.call('get', 'in1')", "return redis.call('blpop', 'nol', 0)",
    "return redis.call('lpop', 'nol')", "return redis.call('xadd', 's', '1-1', 'f', 'v')",
    "return redis.call('xrange', 's', '-', '+')",
    "return redis.call('spop', 'noset')", "return redis.call('sadd', 'st', 'x')",
    "return redis.call('smembers', 'st')", "return redis.call('config', 'get', 'maxmemory')",
    "return redis.call('object', 'encoding', 'a')", "return redis.call('set', 'big', string.rep('x', 100000)) and #redis.call('get', 'big')",
    "return redis.call('getrange', 'big', 0, 3)",
    "return redis.pcall('xread', 'block', 0, 'streams', 's', '$')",
    "return redis.pcall('xread', 'count', 1, 'block', 10, 'streams', 's', '0')",
    "return redis.call('xread', 'streams', 's', '0')",
    "return redis.pcall('xgroup', 'create', 's', 'g', '0')",
    "return redis.pcall('xreadgroup', 'group', 'g', 'c', 'block', 0, 'streams', 's', '>')",
    "return redis.call('xreadgroup', 'group', 'g', 'c', 'streams', 's', '>')",
    "return redis.call('xread', 'BLOCK', 0, 'streams', 's', '$')",
    # SORT BY <constant> of a set is ordered for scripts (Redis: CLIENT_SCRIPT)
    "redis.call('sadd', 'sbc', 'z', 'c', 'aa', 'b', 'a', 'q', 'm', 'x1', 'k9') "
    "return redis.call('sort', 'sbc', 'by', '_')",
    "return redis.call('sort', 'sbc', 'by', '_', 'get', '#', 'get', '_:*', 'desc')",
]


def test_redis_call_replies(nd):
    d = nd
    for body in CALLS:
        ev(d, body)
    d("GET", "in1")  # SELECT inside a script affects only the script
    d("SELECT", "0")
    d("MGET", "a", "n", "f")


# errors, with the script position and sha appended as Redis 7.0 does
ERRORS = [
    "return redis.call('nosuch')", "return redis.pcall('nosuch')", "return redis.call('get')",
    "return redis.pcall('get')", "return redis.call('multi')", "return redis.pcall('subscribe','x')",
    "return redis.call('incr', 'k', 'x')", "return redis.call('config', 'nosuch')",
    "return redis.call('config')", "return redis.call()", "return redis.pcall()",
    "return redis.call(1)", "return redis.call('get', {})", "return redis.call('get', nil)",
    "return redis.call('eval', 'return 1', 0)", "return redis.call('script', 'load', 'x')",
    "return redis.call('watch', 'x')", "return redis.call('exec')",
    "x = 5", "return y", "KEYS = {}", "redis.call = nil", "string.x = 1", "rawset(_G, 'x', 1)",
    "setmetatable(_G, nil)", "return getmetatable(_G)", "error('boom')", "error({err='MY boom'})",
    "error()", "error(nil)", "error(5)", "error({err='X'}, 0)", "local t = nil; return t.x",
    "return 1 + {}", "syntax error here", "return 'unterminated", "return redis.log(1)",
    "return redis.log(99, 'x')", "return redis.log('a', 'x')", "return redis.setresp(4)",
    "return redis.setresp()", "return redis.set_repl(99)", "return redis.set_repl()",
    "return redis.sha1hex()", "return redis.error_reply()", "return redis.error_reply(1)",
    "return redis.status_reply()", "return os.time()", "return io.write('x')",
    "return debug.getinfo(1)", "return print('x')", "return loadfile('/etc/passwd')",
    "return dofile('/etc/passwd')", "return require('x')", "return getfenv()",
    "return setfenv(1, {})", "return newproxy()", "return module('x')", "return package",
    "local function f() return f() + 1 end return f()",
    "return {pcall(error, {err='X'})}", "return {pcall(error, {e='X'})}",
    "local ok, e = pcall(redis.call, 'incr', 'x', 'y'); return {ok, type(e), e}",
    "return type(getmetatable(_G))", "return type(getmetatable(_G).__index)",
    "return {xpcall(function() error('q') end, function(e) return 'h:' .. e end)}",
    "return math.random(0)", "return string.rep()", "\n\nerror('line 3')",
    "#!lua\nreturn 1", "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')",
    "#!lua flags=no-writes,allow-oom\nreturn redis.call('get', 'a')", "#!lua flags=bogus\nreturn 1",
    "#!lua foo=bar\nreturn 1", "#!python\nreturn 1", "#!lua", "#!lua flags=no-writes\nerror('x')",
    "#!lua flags=allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 2",
    # the sandbox's corners: metatables of _G and strings, bytecode, acl_check_cmd
    "local g = getmetatable(_G) g.__index = {}", "getmetatable(_G).x = 1",
    "getmetatable('').__index = function() return 1 end", "getmetatable('').__index.upper = 1",
    "return getmetatable('').__index == string", "return type(getmetatable(_G).__index)",
    "return loadstring(string.dump(function() return 1 end))()",
    "local a, b = loadstring(string.dump(function() return 1 end)) return {tostring(a), b}",
    "local s = string.dump(function() return 1 end) local i = 0 "
    "local a, b = load(function() i = i + 1 if i == 1 then return s end end) "
    "return {tostring(a), b}",
    "local a, b = loadstring('return 1 +', 'nm') return {tostring(a), b}",
    "return redis.acl_check_cmd('set', 'xx', 1)", "return redis.acl_check_cmd('invalid-cmd', 'a')",
    "return redis.acl_check_cmd()", "return redis.acl_check_cmd('get', {})",
    "return redis.acl_check_cmd('get')",
    "local a = {} for i = 1, 7999 do a[i] = 1 end return redis.call('lpush', 'ul', unpack(a))",
]


@pytest.mark.parametrize("body", ERRORS)
def test_errors(nd, body):
    ev(nd, body)


def test_eval_ro_and_numkeys(d):
    d("EVAL_RO", "return redis.call('set', KEYS[1], 'b')", 1, "a")
    d("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "a")
    d("EVAL_RO", "return redis.pcall('del', KEYS[1])", 1, "a")
    d("EVAL_RO", "return redis.pcall('publish', 'ch', 'm')", 0)
    d("EVAL_RO", "return redis.pcall('spublish', 'ch', 'm')", 0)
    d("EVAL_RO", "return redis.pcall('pfcount', 'h')", 0)
    d("EVAL_RO", "return redis.pcall('pubsub', 'channels')", 0)
    d("EVAL", "#!lua flags=no-writes\nreturn redis.pcall('publish', 'ch', 'm')", 0)
    d("EVAL", "return redis.pcall('publish', 'ch', 'm')", 0)
    d("EVAL_RO", "#!lua\nreturn 1", 0)
    d("EVAL_RO", "#!lua flags=no-writes\nreturn 1", 0)
    d("EVAL", "return 1", -1)
    d("EVAL", "return 1", 3, "a")
    d("EVAL", "return 1", "x")
    d("EVAL", "return 1", "99999999999999999999")
    d("EVAL", "return 1", "9223372036854775807")
    d("EVAL", "return 1", "-9223372036854775808")
    d("EVAL", "return 1")
    d("EVAL")
    d("EVALSHA", "x")
    d("EVALSHA", "fff", 0)
    d("EVALSHA", "fff", -1)
    d("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0)
    d("EVALSHA_RO", "ffffffffffffffffffffffffffffffffffffffff", 0)
    d("EVAL", "return {KEYS, ARGV}", 2, "k1", "k2", "a1", "a2", "a3")
    d("EVAL", "return {KEYS, ARGV}", 0, "a1")
    d("EVAL", "return {KEYS, ARGV}", 3, "k1", "k2", "k3")


def test_evalsha_and_script_subcommands(d):
    body = "return {KEYS[1], ARGV[1], 'x'}"
    sha = d("SCRIPT", "LOAD", body)
    d("SCRIPT", "EXISTS", sha, "ffffffffffffffffffffffffffffffffffffffff", sha.upper(), "x")
    d("EVALSHA", sha, 1, "k", "v")
    d("EVALSHA", sha.upper(), 1, "k", "v")
    d("EVALSHA_RO", sha, 1, "k", "v")
    d("SCRIPT", "FLUSH")
    d("SCRIPT", "EXISTS", sha)
    d("EVALSHA", sha, 1, "k", "v")
    d("EVAL", body, 1, "k", "v")  # EVAL caches the script too
    d("EVALSHA", sha, 1, "k", "v")
    d("SCRIPT", "FLUSH", "ASYNC")
    d("SCRIPT", "FLUSH", "sync")
    d("SCRIPT", "FLUSH", "bogus")
    d("SCRIPT", "FLUSH", "sync", "async")
    d("SCRIPT", "LOAD", "syntax error here")
    d("SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1")
    d("SCRIPT", "LOAD")
    d("SCRIPT", "LOAD", "a", "b")
    d("SCRIPT", "EXISTS")
    d("SCRIPT", "NOSUCH")
    d("SCRIPT")
    d("EVALSHA", d("SCRIPT", "LOAD", "return 'loaded'"), 0)


def test_scripts_in_multi(d):
    for c in (d.tc, d.rs):
        c.execute_command("SET", "m", "1")
    d("MULTI")
    d("EVAL", "return redis.call('incr', KEYS[1])", 1, "m")
    d("EVAL", "return redis.call('set', 'other', 'x')", 0)
    d("INCR", "m")
    d("EXEC")
    d("MGET", "m", "other")


def test_binary_arguments(d):
    blob = bytes(range(256)) + b"\r\n\x00end"
    d("EVAL", "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])", 1,
      b"k\x00\xff", blob)
    d("GET", b"k\x00\xff")
    d("EVAL", "return {ARGV[1], #ARGV[1]}", 0, blob)
    d("EVAL", "return KEYS[1]", 1, b"\xc3\x28\xff")


def test_write_then_error_keeps_writes(d):
    d("EVAL", "redis.call('set', 'w1', 'v'); redis.call('incr', 'w1'); return 1", 0)
    d("GET", "w1")
    d("EVAL", "redis.call('set', 'w2', 'v'); error('late')", 0)
    d("GET", "w2")


def raw_resp3(port, args):
    """Send HELLO 3, then args; the raw bytes of the reply (read up to a trailing PING)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)

    def enc(a):
        out = b"*%d\r\n" % len(a)
        for x in a:
            x = x if isinstance(x, bytes) else str(x).encode()
            out += b"$%d\r\n%s\r\n" % (len(x), x)
        return out

    s.sendall(enc(["HELLO", "3"]) + enc(["PING", "hello-done"]))
    buf = b""
    while not buf.endswith(b"$10\r\nhello-done\r\n"):
        buf += s.recv(65536)
    s.sendall(enc(args) + enc(["PING", "end-of-reply"]))
    buf = b""
    while not buf.endswith(b"$12\r\nend-of-reply\r\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    return buf


RESP3_SCRIPTS = [
    "return true", "return false", "return nil", "return {1, true, false}",
    "redis.setresp(3); return true", "redis.setresp(3); return false",
    "return {double=3.5}", "return {map={a=1}}", "return {set={a=true}}",
    "return {big_number='12345678901234567890'}", "return {big_number='1\\r\\n2'}",
    "return {verbatim_string={format='mkdown', string='x'}}",
    "return {verbatim_string={format='m', string='a\\nb'}}",
    "return {verbatim_string={format=1, string='x'}}",
    "redis.setresp(3); return redis.call('hgetall', 'h3')",
    "redis.setresp(3); local r = redis.call('hgetall', 'h3'); return r.map.f",
    "redis.setresp(3); return type(redis.call('get', 'nokey'))",
    "redis.setresp(3); return redis.call('zscore', 'z3', 'm')",
    "redis.setresp(3); return redis.call('zscore', 'z3', 'm').double",
    "redis.setresp(3); return redis.call('smembers', 's3')",
    "redis.setresp(3); return redis.call('smembers', 's3').set.x",
    "redis.setresp(3); return redis.call('set', 'a', 'b')",
    "return redis.call('hgetall', 'h3')",
]


def test_resp3_conversions(tc_server, redis_server):
    for srv in (tc_server, redis_server):
        c = srv.client()
        c.execute_command("DEL", "h3", "z3", "s3")
        c.execute_command("HSET", "h3", "f", "v")
        c.execute_command("ZADD", "z3", "1.5", "m")
        c.execute_command("SADD", "s3", "x")
    for body in RESP3_SCRIPTS:
        a = raw_resp3(tc_server.port, ["EVAL", body, "0"])
        b = raw_resp3(redis_server.port, ["EVAL", body, "0"])
        assert a == b, "%r:\n twincache: %r\n redis:     %r" % (body, a, b)


def test_sandbox_globals(d):
    for g in ("assert collectgarbage dofile error gcinfo getfenv getmetatable ipairs load "
              "loadfile loadstring module next pairs pcall print rawequal rawget rawset require "
              "select setfenv setmetatable tonumber tostring type unpack xpcall _VERSION "
              "coroutine newproxy _G string table math os io debug cjson bit cmsgpack struct redis KEYS ARGV "
              "__redis__err__handler").split():
        d("EVAL", "return type(rawget(_G, '%s'))" % g, 0)


CONCURRENT_SCRIPT = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local add = (v % 7) + 1
redis.call('INCRBY', KEYS[1], add)
redis.call('SET', KEYS[2], v + add)
return {add, v + add}
"""


def test_concurrent_scripts_are_atomic(tc_server):
    """4 threads x 2,000 read-modify-write scripts and 2 threads of plain INCR over the same
    keys: every script must see a value nobody else saw (no interleaving), and the final
    counter must be the sum of every increment (no lost update)."""
    keys = ["cnt:%d" % i for i in range(4)]
    c0 = tc_server.client()
    c0.delete(*keys, *[k + ":copy" for k in keys])
    sha = c0.script_load(CONCURRENT_SCRIPT)
    adds = {k: [] for k in keys}
    seen = {k: [] for k in keys}
    incrs = {k: 0 for k in keys}
    lock = threading.Lock()
    errors = []

    def scripter(t):
        c = tc_server.client()
        mine = {k: [] for k in keys}
        mine_seen = {k: [] for k in keys}
        try:
            for i in range(2000):
                k = keys[(i * 7 + t) % 4]
                add, after = c.evalsha(sha, 2, k, k + ":copy")
                mine[k].append(add)
                mine_seen[k].append(after)
        except Exception as e:  # reported below
            errors.append(e)
        with lock:
            for k in keys:
                adds[k] += mine[k]
                seen[k] += mine_seen[k]

    def incrementer(t):
        c = tc_server.client()
        mine = {k: 0 for k in keys}
        try:
            for i in range(3000):
                k = keys[(i + t) % 4]
                c.incr(k)
                mine[k] += 1
        except Exception as e:
            errors.append(e)
        with lock:
            for k in keys:
                incrs[k] += mine[k]

    threads = [threading.Thread(target=scripter, args=(t,)) for t in range(4)]
    threads += [threading.Thread(target=incrementer, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in keys:
        final = int(c0.get(k))
        assert final == sum(adds[k]) + incrs[k], k
        # each script's result value is unique: no two scripts read the same counter
        assert len(set(seen[k])) == len(seen[k]), k
    assert sum(len(v) for v in adds.values()) == 8000


def test_redis_py_lock(tc_server):
    c = redis.Redis(host="127.0.0.1", port=tc_server.port, decode_responses=True)
    c.delete("resource")
    a = c.lock("resource", timeout=10, blocking_timeout=0)
    b = c.lock("resource", timeout=10, blocking_timeout=0)
    assert a.acquire()
    assert not b.acquire()
    assert a.owned() and not b.owned()
    assert a.extend(5)
    assert 10000 < c.pttl("resource") <= 15000
    assert a.reacquire()
    assert 9000 < c.pttl("resource") <= 10000
    a.release()
    assert c.get("resource") is None
    assert b.acquire()
    b.release()
    assert a.acquire()
    c.set("resource", "someone-else")  # the lock was lost: the scripts refuse
    with pytest.raises(redis.exceptions.LockNotOwnedError):
        a.extend(1)
    with pytest.raises(redis.exceptions.LockNotOwnedError):
        a.release()
    assert c.get("resource") == "someone-else"
    c.delete("resource")
    with c.lock("resource", timeout=5) as held:
        assert held.locked()
    assert not c.exists("resource")
    c.script_flush()  # register_script falls back to EVAL after NOSCRIPT
    with c.lock("resource", timeout=5):
        pass


def test_hostile_scripts_server_survives(tc_server):
    c = tc_server.client()
    # endless recursion: Lua's stack limit answers an error
    e = call(c, "EVAL", "local function f() return f() + 1 end return f()", 0)
    assert e[0] == "error" and "stack overflow" in e[1], e
    # C-level recursion through pcall
    e = call(c, "EVAL", "local function f() return pcall(f) end return f()", 0)
    assert c.ping()
    # a memory hog hits the state's cap: an error, not a crash
    e = call(c, "EVAL", "local s = 'x'; while true do s = s .. s end", 0)
    assert e[0] == "error" and "not enough memory" in e[1], e
    e = call(c, "EVAL", "local t = {}; for i = 1, 1e9 do t[i] = i end", 0)
    assert e[0] == "error" and "not enough memory" in e[1], e
    e = call(c, "EVAL", "return string.rep('x', 2^30)", 0)
    assert e[0] == "error", e
    # deep tables both ways
    e = call(c, "EVAL", "local t = {} local r = t for i = 1, 100000 do t[1] = {} t = t[1] end "
                        "return r", 0)
    assert isinstance(e, (list, tuple)), e
    e = call(c, "EVAL", "local t = {} for i = 1, 100000 do t = {t} end return cjson.encode(t)", 0)
    assert c.ping()
    # error tables without a text (redis-server 7.0.15 crashes on these): an error reply
    e = call(c, "EVAL", "error({})", 0)
    assert e[0] == "error", e
    e = call(c, "EVAL", "error(setmetatable({}, {__tostring = function() return 'x' end}))", 0)
    assert e[0] == "error", e
    # the state still works after all that
    assert call(c, "EVAL", "return redis.call('ping')", 0) == b"PONG"
    assert call(c, "EVAL", "return ARGV[1]", 0, "ok") == b"ok"
    huge = call(c, "EVAL", "return 1", "1" + "0" * 30)
    assert huge == ("error", "ERR value is not an integer or out of range")


def test_info_scripting_fields(tc_server):
    c = tc_server.client(decode=True, raw=False)
    c.script_flush()
    c.eval("return 1", 0)
    c.script_load("return 2")
    mem = c.info("memory")
    assert mem["number_of_cached_scripts"] == 2
    assert mem["used_memory_lua"] > 0
    assert mem["used_memory_scripts"] > 0


CMSGPACK = [
    "return cmsgpack.pack(string.rep('x', 40))",
    "return cmsgpack.pack(string.rep('x', 300), string.rep('y', 70000))",
    "return cmsgpack.pack(1.5, -1, 200, -200, 70000, 2^40, -2^40, 0.1, true, false, nil)",
    "return cmsgpack.pack(0, 127, 128, 255, 256, 65535, 65536, 2^32 - 1, 2^32, 2^53)",
    "return cmsgpack.pack(-32, -33, -128, -129, -32768, -32769, -2^31, -2^31 - 1, -2^53)",
    "return cmsgpack.pack(2^63, -2^63, 2^64, 1/3, -0.0, 1/0, -1/0, 3.25, 1e300)",
    "return cmsgpack.pack({1,2,3}, {a=1}, {}, {[1]=1,[3]=3}, {[0]=1}, {[1.5]=2})",
    "local t = {} for i = 1, 20 do t[i] = i end return cmsgpack.pack(t)",
    "local t = {} for i = 1, 70000 do t[i] = i % 3 end return #cmsgpack.pack(t)",
    "local t = {} for i = 1, 20 do t['k' .. i] = i end return #cmsgpack.pack(t)",
    "local t = {} t[1] = t return cmsgpack.pack(t)",
    "return cmsgpack.pack(function() end, {f = function() end})",
    "return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, {b=2}, 'c'}, true))}",
    "return cmsgpack.unpack(cmsgpack.pack({a={b={c='deep'}}})).a.b.c",
    "local t = {} for i = 1, 20 do t['k' .. i] = i end "
    "local u = cmsgpack.unpack(cmsgpack.pack(t)) return u.k7 + u.k20",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 2)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5)}",
    "return {cmsgpack.unpack_one('')}", "return cmsgpack.unpack('')",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 5)}",
    "return cmsgpack.unpack('\\205\\001')", "return cmsgpack.unpack('\\147\\001')",
    "return cmsgpack.unpack('\\217')", "return cmsgpack.pack()",
    "return tostring(cmsgpack.unpack(cmsgpack.pack(0.1)))",
    "return tostring(cmsgpack.unpack(cmsgpack.pack(-2^63)))",
    "return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'))",
    "return tostring(cmsgpack.unpack('\\211\\255\\255\\255\\255\\255\\255\\255\\254'))",
    "return {cmsgpack.unpack('\\208\\128\\209\\128\\000\\210\\128\\000\\000\\000')}",
    "return cmsgpack.unpack('\\202\\063\\192\\000\\000')",
    "return cmsgpack.unpack('\\164abcd')",
    "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}",
    "cmsgpack.pack = nil",
]


@pytest.mark.parametrize("body", CMSGPACK)
def test_cmsgpack(nd, body):
    ev(nd, body)


STRUCT = [
    "return struct.pack('>i', 1)", "return struct.pack('<hHbB', -2, 65535, -1, 255)",
    "return struct.pack('>I3', 65536)", "return struct.pack('!4bi', 1, 2)",
    "return struct.pack('!2bh!8bd', 1, 2, 3, 4.5)", "return struct.pack('s', 'ab')",
    "return struct.pack('c5', 'ab')", "return struct.pack('c0', 'abc')",
    "return struct.pack('c2', 'abc')", "return struct.pack('fd', 1.5, 0.1)",
    "return struct.pack('>fd', 1.5, 0.1)", "return struct.pack('lLT', -1, 1, 2)",
    "return struct.pack('x>i2', 3)", "return struct.pack('i17', 1)",
    "return struct.pack('i17', -1)", "return struct.pack('>i9', -2)", "return struct.pack('i33', 1)",
    "return struct.pack('i', 2^40)", "return struct.pack('>i', 1.9)",
    "return struct.pack('>i', -1.9)", "return struct.pack('>I', -1)", "return struct.pack('q', 1)",
    "return struct.pack('!3i', 1)", "return struct.pack('i', 'x')", "return struct.pack('i')",
    "return struct.pack('i', '12')", "return struct.pack(' > i 2', 5)",
    "return {struct.unpack('>i', struct.pack('>i', -5))}",
    "return {struct.unpack('bc0', struct.pack('bc0', 3, 'xyz'))}",
    "return {struct.unpack('s', 'ab\\0cd')}", "return {struct.unpack('s', 'abcd')}",
    "return {struct.unpack('>I2', 'abc', 2)}", "return {struct.unpack('>I2', 'abc', 0)}",
    "return {struct.unpack('>I2', 'abc', 4)}", "return {struct.unpack('>I2', 'abc', 3)}",
    "return {struct.unpack('>i', 'ab')}", "return struct.unpack('c0', 'a')",
    "return {struct.unpack('I8', struct.pack('i8', -1))}",
    "return {struct.unpack('i8', struct.pack('i8', -3))}",
    "return {struct.unpack('>i2 i2', '\\0\\1\\0\\2')}", "return {struct.unpack('<h', '\\255\\255')}",
    "return {struct.unpack('<H', '\\255\\255')}", "return {struct.unpack('>b', '\\128')}",
    "return tostring(struct.unpack('>d', struct.pack('>d', 2.5)))",
    "return tostring(struct.unpack('<f', struct.pack('<f', 0.1)))",
    "return {struct.unpack('!4bi', struct.pack('!4bi', 1, 2))}",
    "return {struct.unpack('c', 'ab')}", "return {struct.unpack('xxc', 'abc')}",
    "return struct.size('>i!8d')", "return struct.size('bhlLTfdxi3c7')", "return struct.size('s')",
    "return struct.size('c0')", "return struct.size('q')", "return struct.size('!3')",
    "struct.pack = nil",
]


@pytest.mark.parametrize("body", STRUCT)
def test_struct(nd, body):
    ev(nd, body)


ERRORSTAT_SCRIPTS = [
    ("EVAL", "redis.pcall('XGROUP', 'CREATECONSUMER', 's1', 'mygroup', 'consumer') return", 0),
    ("EVAL", "a"), ("EVAL", "return redis.call('incr', 'estr')", 0),
    ("EVAL", "return redis.pcall('incr', 'estr')", 0), ("EVAL", "return redis.call('nosuch')", 0),
    ("EVAL", "return redis.pcall('nosuch')", 0), ("EVAL", "return redis.call('get')", 0),
    ("EVAL", "error('boom')", 0), ("EVAL", "return {err='MYCODE x'}", 0),
    ("EVAL", "return redis.error_reply('E2 y')", 0), ("EVAL", "return {1, {err='NESTED z'}}", 0),
    ("EVAL_RO", "return redis.call('set', 'ea', 1)", 0), ("EVAL", "return redis.call('get', {})", 0),
    ("EVALSHA", "NotValidShaSUM", 0),
]


def test_errorstats_of_scripts(d):
    """Errors of commands inside scripts count once, when the command answers them; the
    script's own errors when they are replied (errorstats, total_error_replies, the commands'
    failed and rejected calls), as redis-server counts them."""
    out = []
    for c in (d.tc, d.rs):
        call(c, "SET", "estr", "x")
        call(c, "CONFIG", "RESETSTAT")
        for args in ERRORSTAT_SCRIPTS:
            call(c, *args)
        info = call(c, "INFO", "all").decode()
        keep = [line for line in info.split("\r\n")
                if line.startswith(("errorstat_", "total_error_replies"))
                or line.startswith(("cmdstat_eval", "cmdstat_incr", "cmdstat_get",
                                    "cmdstat_set", "cmdstat_xgroup"))]
        out.append(sorted(",".join(p for p in line.split(",") if "usec" not in p)
                          for line in keep))
    assert out[0] == out[1], "\n twincache: %r\n redis:     %r" % (out[0], out[1])


@pytest.mark.parametrize("enabled", ["no", "yes"])
def test_lua_enable_deprecated_api(tc_factory, enabled):
    """Debian's redis-server 7.0.15 setting: getfenv, setfenv and newproxy only when yes."""
    c = tc_factory("--lua-enable-deprecated-api", enabled).client()
    for name, body in [("setfenv", "local f = function() return 1 end setfenv(f, {}) return 0"),
                       ("getfenv", "local f = function() return 1 end getfenv(f) return 0"),
                       ("newproxy", "getmetatable(newproxy(true)).__gc = function() end "
                                    "return 0")]:
        r = call(c, "EVAL", body, 0)
        if enabled == "yes":
            assert r == 0, r
        else:
            assert "nonexistent global variable '%s'" % name in r[1], r
    assert call(c, "CONFIG", "GET", "lua-enable-deprecated-api") == [
        b"lua-enable-deprecated-api", enabled.encode()]


def test_client_tracking_of_script_keys(tc_server, redis_server):
    """A tracking client's script that calls a read-only command remembers the script's
    declared keys (and a read-only script only through its commands), as Redis."""
    import time as _time

    def run(port):
        a = socket.create_connection(("127.0.0.1", port))
        b = socket.create_connection(("127.0.0.1", port))

        def cmd(s, *args):
            out = b"*%d\r\n" % len(args)
            for x in args:
                x = str(x).encode()
                out += b"$%d\r\n%s\r\n" % (len(x), x)
            s.sendall(out)
            _time.sleep(0.05)
            return s.recv(65536)
        cmd(a, "HELLO", "3")
        cmd(a, "CLIENT", "TRACKING", "on")
        res = [cmd(a, "EVAL", "redis.call('set', 'tk3', 'bar')", 2, "tk1", "tk2")]
        cmd(b, "MSET", "tk1", 1, "tk2", 1)
        res.append(cmd(a, "PING"))
        res.append(cmd(a, "EVAL", "redis.call('get', 'tk3')", 2, "tk1", "tk2"))
        cmd(b, "MSET", "tk1", 2, "tk2", 2)
        res.append(cmd(a, "PING"))
        res.append(cmd(a, "EVAL_RO", "redis.call('ping')", 2, "tk1", "tk2"))
        cmd(b, "MSET", "tk1", 2, "tk2", 2)
        res.append(cmd(a, "PING"))
        res.append(cmd(a, "EVAL_RO", "redis.call('get', 'tk1')", 2, "tk1", "tk2"))
        cmd(b, "MSET", "tk1", 3, "tk2", 3)
        res.append(cmd(a, "PING"))
        a.close()
        b.close()
        return res
    assert run(tc_server.port) == run(redis_server.port)


def test_blocked_client_served_after_the_script(tc_server, redis_server):
    """A client blocked on a key a script pushes to twice is served once the script ended
    (it pops the second value), as Redis; the other worker does not wait for the script's
    stripes meanwhile (the signals wait for the script's end)."""
    import time as _time

    def run(port):
        a = socket.create_connection(("127.0.0.1", port))
        b = socket.create_connection(("127.0.0.1", port))

        def send(s, *args):
            out = b"*%d\r\n" % len(args)
            for x in args:
                x = str(x).encode()
                out += b"$%d\r\n%s\r\n" % (len(x), x)
            s.sendall(out)
        send(a, "DEL", "bx")
        _time.sleep(0.05)
        a.recv(100)
        send(b, "BLPOP", "bx", 0)
        _time.sleep(0.1)
        send(a, "EVAL", "redis.call('lpush', KEYS[1], 'y') local t = redis.call('time') "
             "local s = t[1] * 1e6 + t[2] repeat local n = redis.call('time') "
             "until n[1] * 1e6 + n[2] - s > 200000 redis.call('lpush', KEYS[1], 'z') return 1",
             1, "bx")
        _time.sleep(0.5)
        r = b.recv(200)
        a.recv(100)
        send(a, "LRANGE", "bx", 0, -1)
        _time.sleep(0.05)
        out = (r, a.recv(200))
        a.close()
        b.close()
        return out
    assert run(tc_server.port) == run(redis_server.port)
