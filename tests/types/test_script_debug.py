"""SCRIPT DEBUG YES|SYNC|NO (the Lua debugger) against redis-server 7.0, side by side: the same
debugging sessions driven over raw RESP sockets and through redis-cli --ldb / --ldb-sync-mode
must give the same transcripts (Lua object addresses aside); YES runs the script in a forked
session whose changes are rolled back while the server keeps serving others, SYNC keeps them;
a client that disconnects mid-session ends it cleanly; the table entry matches COMMAND INFO."""
import os
import re
import socket
import subprocess
import time

import pytest

import tcharness
from conftest import CLIENT

ADDR = re.compile(rb"(function|userdata|thread|light-userdata)@0x[0-9a-f]+")


class Raw:
    """One RESP connection: send arrays of bulk strings, read replies as Python values (status
    and error lines with their first byte, bulk strings as '$...')."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t = line[:1]
        if t in (b"+", b"-", b":"):
            return ADDR.sub(rb"\1@ADDR", line).decode()
        if t == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return "$" + v.decode()
        if t == b"*":
            n = int(line[1:])
            return None if n < 0 else [self.read() for _ in range(n)]
        return "?" + line.decode()

    def call(self, *args):
        self.send(*args)
        return self.read()

    def close(self):
        self.s.close()


def session(port, mode, script, keys=(), args=(), cmds=()):
    """Transcript of one debugging session: SCRIPT DEBUG's reply, EVAL's first stop, the reply
    to each debugger command, then after "<endsession>" EVAL's reply and what follows (the
    connection closes)."""
    r = Raw(port)
    out = [r.call("SCRIPT", "DEBUG", mode)]
    r.send("EVAL", script, len(keys), *keys, *args)
    try:
        out.append(r.read())
        for c in cmds:
            v = out[-1]
            if isinstance(v, list) and v and v[-1] == "+<endsession>":
                break
            r.send(*(c.split(" ") if isinstance(c, str) else c))
            out.append(r.read())
        v = out[-1]
        if isinstance(v, list) and v and v[-1] == "+<endsession>":
            out.append(r.read())  # EVAL's reply
            try:
                out.append(r.read())
            except (EOFError, ConnectionError) as e:
                out.append("closed")
    except (EOFError, ConnectionError, socket.timeout) as e:
        out.append(("exception", type(e).__name__))
    r.close()
    return out


SCRIPT = """local a = redis.call('set', KEYS[1], ARGV[1])
local t = {1, 2, 'x', {k='v'}}
redis.debug('hello', 42, t)
redis.breakpoint()
local b = redis.call('get', KEYS[1])
local c = redis.pcall('incr', KEYS[1])
return b
"""

FUNCS = """local function g(n)
  redis.breakpoint()
  return n + 1
end
local function f(n)
  return g(n) * 2
end
local big = string.rep('a', 300)
return f(1)
"""

NESTED = "{" + "".join("%s={" % c for c in "abcdefghijk") + "}" * 12

SESSIONS = {
    # stepping, redis.call logging (replies, errors, refusals), print, list, breakpoints
    "basic": (SCRIPT, ["dk1"], ["v1"], [
        "s", "r ping", "r hset dh a 1", "r hgetall dh", "r get nokey", "r lrange nolist 0 -1",
        "r incr dk1", "r foo", "r get", "r del a b c d e f g h i j k l m", "p", "p t",
        "p KEYS", "p ARGV", "p nosuch", "w", "l 3 1", "l 0", "l 100 2", "b 6", "b", "b x",
        "b -3", "b 100", "b 6", "xyz", "h", "c", "s", "s", "s"]),
    # RESP3 replies, eval forms and values, maxlen
    "resp3": ("redis.setresp(3)\nredis.call('zadd', KEYS[1], '1.5', 'm')\nlocal x = 1\n"
              "return 1\n", ["dz"], [], [
        "s", "s", "r zscore dz m", "r zrange dz 0 -1 withscores", "r hset dh2 f v",
        "r hgetall dh2", "r smembers nos", "r sadd ds a", "r smembers ds", "r exists ds",
        "r get nokey", "e redis.debug()", "e {1,2,nil,4}", "e {[2]=1}", "e 1e20", "e 0.1",
        "e 'a\\0b\\n'", "e x = 1", "e (", "e error('boom')", "eval", "m", "m 10",
        "e string.rep('y', 100)", "m 0", "e string.rep('y', 100)", "c"]),
    # functions: trace, locals of a frame, breakpoints in functions, value dumps trimmed
    "funcs": (FUNCS, [], [], ["c", "t", "p", "p n", "e n", "b 6", "c", "p", "s", "s", "p big",
                              "m 70", "p big", "print big x", "c"]),
    # value dumps: nesting limit, loop variables, numbers; breakpoint lists; more replies
    "values": ("local x = " + NESTED + "\nlocal t = {}\nfor i = 1, 3 do\n  t[i] = i * 2\nend\n"
               "return t\n", [], [], [
        "s", "p", "s", "s", "s", "s", "p", "e 1e15", "e 2^53", "e -1/0", "e true",
        "e {true, false}", "e {{1},{2}}", "list 2 -1", "b 1 2 3 4 9", "b", "b -4", "b", "e ''",
        "r set dk v ex 10", "r ttl dk", "r del dL", "r lpush dL a b", "r lrange dL 0 -1",
        "r del dZ", "r zadd dZ 1 a 2.5 b", "r zrange dZ 0 -1 withscores",
        "r eval 'return 1' 0", "b 0", "c"]),
    "abort": ("redis.call('set', KEYS[1], '1')\nreturn 1\n", ["dab"], [], ["a"]),
    "runtime-error": ("local x = nil\nreturn x.y\n", [], [], ["s", "s"]),
    "command-error": ("redis.call('set', KEYS[1], 'a')\nreturn redis.call('incr', KEYS[1])\n",
                      ["dq"], [], ["s", "s"]),
    "read-only": ("#!lua flags=no-writes\nlocal a = 1\nreturn redis.call('set', 'x', '1')\n",
                  [], [], ["s", "s", "s"]),
    "compile-error": ("retur 1", [], [], []),
    "protocol-error": ("return 1\n", [], [], [["e", "x" * 1025]]),
    "empty-argument": ("return 1\n", [], [], [["r", "set", "k", ""]]),
}


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_session_raw(tc_server, redis_server, name):
    script, keys, args, cmds = SESSIONS[name]
    for mode in ("sync",) if name != "basic" else ("sync", "yes"):
        a = session(tc_server.port, mode, script, keys, args, cmds)
        b = session(redis_server.port, mode, script, keys, args, cmds)
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        assert a == b, "%s %s: first difference\n twincache: %r\n redis:     %r" % (
            name, mode, *(diff[0] if diff else (a, b)))
        assert a[-1] == "closed"


def test_timeout_stop(tc_server, redis_server):
    """A run that goes on for busy-reply-threshold ms without stopping stops ("timeout
    reached"); aborting it then ends the script with the abort error."""
    loop = "local i = 0\nwhile true do\n  i = i + 1\nend\n"
    out = []
    for srv in (tc_server, redis_server):
        c = srv.client()
        c.config_set("busy-reply-threshold", "200")
        try:
            out.append(session(srv.port, "sync", loop, cmds=["c", "a"]))
        finally:
            c.config_set("busy-reply-threshold", "5000")
    assert out[0] == out[1]
    assert out[0][2][0] == "+* Stopped at 3, stop reason = timeout reached, infinite loop?"


def test_commands_and_errors(tc_server, redis_server):
    def run(port):
        r = Raw(port)
        res = []
        for c in (["SCRIPT", "DEBUG", "maybe"], ["SCRIPT", "DEBUG"],
                  ["SCRIPT", "DEBUG", "yes", "x"],
                  ["SCRIPT", "DEBUG", "YES"],
                  ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
                  ["EVALSHA", "abc", "0"],
                  ["SCRIPT", "DEBUG", "NO"], ["EVAL", "return 1", "0"],
                  ["MULTI"], ["SCRIPT", "DEBUG", "SYNC"], ["EXEC"],
                  ["EVAL", "return redis.breakpoint()", "0"],
                  ["EVAL", "return redis.debug('x')", "0"],
                  ["EVAL", "return redis.call('script', 'debug', 'no')", "0"],
                  ["SCRIPT", "HELP"]):
            res.append(r.call(*c))
        # pipelined behind a reply not yet sent: refused, as Redis
        r.s.sendall(b"PING\r\nSCRIPT DEBUG NO\r\n")
        res += [r.read(), r.read()]
        r.close()
        return res

    a, b = run(tc_server.port), run(redis_server.port)
    assert a == b
    assert a[0] == "-ERR Use SCRIPT DEBUG YES/SYNC/NO"
    assert a[-1] == "-ERR SCRIPT DEBUG must be called outside a pipeline"


def test_command_info(tc_server, redis_server):
    tc, rs = tc_server.client(), redis_server.client()
    assert (tc.execute_command("COMMAND", "INFO", "script|debug")
            == rs.execute_command("COMMAND", "INFO", "script|debug"))
    d1 = tc.execute_command("COMMAND", "DOCS", "script|debug")
    d2 = rs.execute_command("COMMAND", "DOCS", "script|debug")
    f1, f2 = dict(zip(d1[1][::2], d1[1][1::2])), dict(zip(d2[1][::2], d2[1][1::2]))
    assert d1[0] == d2[0] == b"script|debug"
    assert f1[b"summary"] == f2[b"summary"] and f1[b"group"] == f2[b"group"]


def test_yes_rolls_back_sync_keeps(tc_server, redis_server):
    """YES: the session's writes are the fork's alone, others are served meanwhile and the key
    is as they left it; SYNC: the writes stay."""
    script = "redis.call('set', KEYS[1], 'session')\nreturn redis.call('get', KEYS[1])\n"
    for srv in (tc_server, redis_server):
        other = srv.client(socket_timeout=5)
        other.delete("dyes", "dsync")
        r = Raw(srv.port)
        assert r.call("SCRIPT", "DEBUG", "YES") == "+OK"
        r.send("EVAL", script, 1, "dyes")
        assert r.read()[0] == "+* Stopped at 1, stop reason = step over"
        assert r.call("s")[:2] == ["+<redis> set dyes session", '+<reply> "+OK"']
        # the session waits for its client: the server serves others, on every key
        assert other.set("dyes", "other") and other.get("dyes") == b"other"
        assert other.incr("dcount") >= 1
        assert r.call("r", "get", "dyes") == ["+<redis> get dyes", '+<reply> "session"']
        assert r.call("c") == ["+<endsession>"]
        assert r.read() == "$session"
        r.close()
        assert other.get("dyes") == b"other"
        assert session(srv.port, "sync", script, ["dsync"], [], ["c"])[-2] == "$session"
        assert other.get("dsync") == b"session"


def children(pid):
    """Child processes of pid (forked by any of its threads)."""
    kids = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def wait_no_children(srv, timeout=5.0):
    deadline = time.time() + timeout
    while children(srv.pid) and time.time() < deadline:
        time.sleep(0.05)
    return children(srv.pid)


def test_disconnect_mid_session(tc_server, redis_server):
    """The client goes away at a stop: the script runs to its end without stopping (SYNC: its
    writes stay and the server answers at once), the forked session exits (YES), and a script
    that loops ends at the debugger's time limit."""
    loop = "redis.call('set', KEYS[1], '1')\nlocal i = 0\nwhile true do\n  i = i + 1\nend\n"
    script = ("redis.call('set', KEYS[1], '1')\nredis.breakpoint()\n"
              "redis.call('set', KEYS[2], '2')\nreturn 1\n")
    for srv in (tc_server, redis_server):
        other = srv.client(socket_timeout=10)
        other.delete("dd1", "dd2", "dd3", "dd4")
        r = Raw(srv.port)
        assert r.call("SCRIPT", "DEBUG", "SYNC") == "+OK"
        r.send("EVAL", script, 2, "dd1", "dd2")
        assert r.read()[0].startswith("+* Stopped at 1")
        r.close()
        assert other.ping()
        assert other.mget("dd1", "dd2") == [b"1", b"2"]

        r = Raw(srv.port)
        assert r.call("SCRIPT", "DEBUG", "YES") == "+OK"
        r.send("EVAL", script, 2, "dd3", "dd4")
        assert r.read()[0].startswith("+* Stopped at 1")
        r.close()
        assert other.mget("dd3", "dd4") == [None, None]
        if srv is tc_server:
            assert wait_no_children(tc_server) == []  # the session's child exited, was reaped

        other.config_set("busy-reply-threshold", "200")
        try:
            r = Raw(srv.port)
            assert r.call("SCRIPT", "DEBUG", "SYNC") == "+OK"
            r.send("EVAL", loop, 1, "dd1")
            assert r.read()[0].startswith("+* Stopped at 1")
            r.close()
            time.sleep(0.5)
            assert other.ping()
        finally:
            other.config_set("busy-reply-threshold", "5000")
    assert wait_no_children(tc_server) == []


def test_redis_cli(tc_server, redis_server, tmp_path):
    """redis-cli --ldb (forked) and --ldb-sync-mode with debugger commands on stdin print the
    same on both servers."""
    script = tmp_path / "s.lua"
    script.write_text(SCRIPT)
    runs = [
        ("--ldb", "s\ns\np\nr get dc1\nb 6\nc\nw\nc\nc\n"),
        ("--ldb-sync-mode", "s\nn\nprint a\nl\nc\nc\n"),
        ("--ldb", "s\nabort\n"),
    ]
    for flag, stdin in runs:
        outs = []
        for srv in (tc_server, redis_server):
            p = subprocess.run(
                ["redis-cli", "-p", str(srv.port), flag, "--eval", str(script), "dc1", ",", "v1"],
                input=stdin.encode(), capture_output=True, timeout=20)
            outs.append((p.returncode, ADDR.sub(rb"\1@ADDR", p.stdout), p.stderr))
        assert outs[0] == outs[1], "%s:\n twincache: %r\n redis:     %r" % (flag, outs[0], outs[1])
        assert b"Lua debugging session started" in outs[0][1]
    assert tc_server.client().get("dc1") == b"v1"  # the sync run kept its write


def test_shutdown_during_sessions(tc_factory):
    """SHUTDOWN (SIGTERM) while a forked session and a synchronous one wait for their clients:
    the forked child is killed, the synchronous run ends, the server exits 0."""
    srv = tc_factory()
    forked, sync = Raw(srv.port), Raw(srv.port)
    assert forked.call("SCRIPT", "DEBUG", "YES") == "+OK"
    forked.send("EVAL", SCRIPT, 1, "k", "v")
    assert forked.read()[0].startswith("+* Stopped at 1")
    assert children(srv.pid)
    assert sync.call("SCRIPT", "DEBUG", "SYNC") == "+OK"
    sync.send("EVAL", SCRIPT, 1, "k", "v")
    assert sync.read()[0].startswith("+* Stopped at 1")
    assert srv.stop(timeout=20) == 0
    for r in (forked, sync):
        r.s.settimeout(5)
        with pytest.raises((EOFError, ConnectionError)):
            while True:
                r.read()


def test_bad_debugger_input(tc_server, redis_server):
    """Input that is no command: more than 1 MB without one ends the session with "max client
    buffer reached", junk without '*' with "protocol error"; bytes before a '*' are skipped."""
    def run(port, payload):
        r = Raw(port)
        assert r.call("SCRIPT", "DEBUG", "SYNC") == "+OK"
        r.send("EVAL", "local a = 1\nreturn a\n", 0)
        out = [r.read()]
        r.s.sendall(payload)
        try:
            while True:
                out.append(r.read())
        except (EOFError, ConnectionError) as e:
            out.append("closed")
        r.close()
        return out

    for payload in (b"*1\r\n$" + b"9" * (1 << 20) + b"0", b"hello\r\n", b"xx*1\r\n$1\r\nc\r\n"):
        a, b = run(tc_server.port, payload), run(redis_server.port, payload)
        assert a == b, "%r:\n twincache: %r\n redis:     %r" % (payload[:20], a, b)
        assert a[-1] == "closed"
    assert tc_server.client().ping()
