"""Connection commands: PING, ECHO, SELECT, HELLO, AUTH, CLIENT, COMMAND, RESET, QUIT."""

import re

import pytest

from itutil import raises_exact, unknown_command_error
from resp import Error, Map, Simple, encode

pytestmark = pytest.mark.sanitize

NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
NO_PASSWORD = ("ERR AUTH <password> called without any password configured for the default "
               "user. Are you sure your configuration is correct?")
HELLO_NOAUTH = ("NOAUTH HELLO must be called with the client already authenticated, otherwise "
                "the HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                "select the RESP protocol version at the same time")
BAD_NAME = "ERR Client names cannot contain spaces, newlines or special characters."


def test_ping_echo(r, raw):
    assert r.ping() is True
    assert r.cmd("PING") == "PONG"
    assert r.cmd("PING", "hello world") == "hello world"  # a bulk reply
    assert r.echo("a\r\nb") == "a\r\nb"
    assert r.cmd("ECHO", "") == ""
    with raises_exact("ERR wrong number of arguments for 'ping' command"):
        r.cmd("PING", "a", "b")
    with raises_exact("ERR wrong number of arguments for 'echo' command"):
        r.cmd("ECHO")
    c = raw()
    c.send(b"PING\r\n*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n")
    assert c.read_raw(len(b"+PONG\r\n$2\r\nhi\r\n")) == b"+PONG\r\n$2\r\nhi\r\n"


def test_commands_are_case_insensitive(r):
    assert r.cmd("pInG") == "PONG"
    assert r.cmd("set", "k", "v") == "OK"
    assert r.cmd("GeT", "k") == "v"
    assert r.cmd("SET", "k", "v2", "ex", "100") == "OK"


def test_select(server, r):
    c0 = server.client(db=0)
    c5 = server.client(db=5)
    c0.set("k", "db0")
    c5.set("k", "db5")
    assert c0.get("k") == "db0"
    assert c5.get("k") == "db5"
    conn = server.client(single_connection_client=True)
    assert conn.cmd("SELECT", "15") == "OK"
    assert conn.cmd("SELECT", "5") == "OK"
    assert conn.get("k") == "db5"
    with raises_exact("ERR DB index is out of range"):
        conn.cmd("SELECT", "16")
    with raises_exact("ERR DB index is out of range"):
        conn.cmd("SELECT", "-1")
    with raises_exact("ERR value is not an integer or out of range"):
        conn.cmd("SELECT", "x")
    assert conn.get("k") == "db5"  # a failed SELECT keeps the current db


def test_databases_setting(start_extra_server):
    srv = start_extra_server("--databases", "4")
    c = srv.client(single_connection_client=True)
    assert c.config_get("databases") == {"databases": "4"}
    assert c.cmd("SELECT", "3") == "OK"
    with raises_exact("ERR DB index is out of range"):
        c.cmd("SELECT", "4")


def hello_fields(reply):
    """HELLO's reply as a dict whichever protocol it came in."""
    if isinstance(reply, Map):
        return {k.decode(): v for k, v in reply.items()}
    assert isinstance(reply, list) and len(reply) == 14
    return {reply[i].decode(): reply[i + 1] for i in range(0, 14, 2)}


def check_hello(reply, proto):
    f = hello_fields(reply)
    assert list(f) == ["server", "version", "proto", "id", "mode", "role", "modules"]
    assert f["proto"] == proto
    assert isinstance(f["id"], int) and f["id"] > 0
    assert re.match(rb"^\d+\.\d+\.\d+$", f["version"])
    assert f["mode"] == b"standalone"
    assert f["role"] == b"master"
    assert f["modules"] == []
    return f


def test_hello(raw):
    c = raw()
    f = check_hello(c.call("HELLO"), 2)  # no argument: current protocol, RESP2
    assert c.call("CLIENT", "ID") == f["id"]
    reply = c.call("HELLO", "3")
    assert isinstance(reply, Map)
    check_hello(reply, 3)
    reply = c.call("HELLO", "2")
    assert isinstance(reply, list)
    check_hello(reply, 2)
    assert c.call("HELLO", "1") == Error("NOPROTO unsupported protocol version")
    assert c.call("HELLO", "4") == Error("NOPROTO unsupported protocol version")
    assert c.call("HELLO", "foo") == Error(
        "ERR Protocol version is not an integer or out of range")
    assert c.call("HELLO", "3", "FOO") == Error("ERR Syntax error in HELLO option 'FOO'")
    assert c.call("HELLO", "3", "AUTH", "default") == Error(
        "ERR Syntax error in HELLO option 'AUTH'")
    assert c.call("HELLO", "3", "setname") == Error("ERR Syntax error in HELLO option 'setname'")
    # none of the failures switched the protocol
    assert c.call("GET", "nokey") is None
    c.send(encode("GET", "nokey"))
    assert c.read_raw(5) == b"$-1\r\n"


def test_hello_setname(raw):
    c = raw()
    check_hello(c.call("HELLO", "3", "SETNAME", "myclient"), 3)
    assert c.call("CLIENT", "GETNAME") == b"myclient"
    assert c.call("HELLO", "2", "SETNAME", "bad name") == Error(BAD_NAME)
    assert c.call("CLIENT", "GETNAME") == b"myclient"
    # the failed HELLO did not switch back to RESP2
    c.send(encode("GET", "nokey"))
    assert c.read_raw(3) == b"_\r\n"


def test_hello_auth_without_requirepass(raw):
    c = raw()
    # the default user has no password: any password is accepted by HELLO AUTH default
    check_hello(c.call("HELLO", "3", "AUTH", "default", "whatever"), 3)
    assert c.call("AUTH", "pw") == Error(NO_PASSWORD)


def test_auth_requirepass(start_extra_server):
    srv = start_extra_server("--requirepass", "s3cret")
    from resp import RespConn
    c = RespConn(srv.host, srv.port)
    assert c.call("PING") == Error(NOAUTH)
    assert c.call("GET", "k") == Error(NOAUTH)
    assert c.call("SELECT", "1") == Error(NOAUTH)
    assert c.call("CLIENT", "ID") == Error(NOAUTH)
    assert c.call("HELLO", "3") == Error(HELLO_NOAUTH)
    assert c.call("AUTH", "wrong") == Error(WRONGPASS)
    assert c.call("AUTH", "default", "wrong") == Error(WRONGPASS)
    assert c.call("AUTH", "s3cret", "s3cret") == Error(WRONGPASS)  # user 's3cret' does not exist
    assert c.call("AUTH", "a", "b", "c") == Error("ERR syntax error")
    assert c.call("PING") == Error(NOAUTH)
    assert c.call("AUTH", "s3cret") == Simple("OK")
    assert c.call("PING") == Simple("PONG")
    assert c.call("SET", "k", "v") == Simple("OK")
    # a wrong AUTH after a good one does not log the client out
    assert c.call("AUTH", "wrong") == Error(WRONGPASS)
    assert c.call("GET", "k") == b"v"
    # RESET logs out
    assert c.call("RESET") == Simple("RESET")
    assert c.call("GET", "k") == Error(NOAUTH)
    assert c.call("AUTH", "default", "s3cret") == Simple("OK")
    assert c.call("GET", "k") == b"v"
    c.close()

    # HELLO with AUTH and SETNAME in one go
    c = RespConn(srv.host, srv.port)
    reply = c.call("HELLO", "3", "AUTH", "default", "wrong")
    assert reply == Error(WRONGPASS)
    reply = c.call("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "app1")
    check_hello(reply, 3)
    assert c.call("CLIENT", "GETNAME") == b"app1"
    assert c.call("GET", "k") == b"v"
    c.close()

    # redis-py: without a password the first command fails, with it everything works
    with raises_exact(NOAUTH):
        srv.client().get("k")
    with raises_exact(WRONGPASS):
        srv.client(password="nope").get("k")
    assert srv.client(password="s3cret").get("k") == "v"


def test_unauthenticated_limits(start_extra_server):
    """Before AUTH, Redis refuses big multibulk counts and bulk lengths and closes."""
    srv = start_extra_server("--requirepass", "pw")
    from resp import RespConn
    with RespConn(srv.host, srv.port) as c:
        c.send(b"*20\r\n")
        assert c.read_reply() == Error("ERR Protocol error: unauthenticated multibulk length")
        assert c.wait_closed()
    with RespConn(srv.host, srv.port) as c:
        c.send(b"*1\r\n$16385\r\n")
        assert c.read_reply() == Error("ERR Protocol error: unauthenticated bulk length")
        assert c.wait_closed()
    with RespConn(srv.host, srv.port) as c:
        # at the limits: accepted (the command itself then needs auth)
        c.send(b"*2\r\n$3\r\nGET\r\n$16384\r\n" + b"k" * 16384 + b"\r\n")
        assert c.read_reply() == Error(NOAUTH)
        c.send(encode("AUTH", "pw"))
        assert c.read_reply() == Simple("OK")
        c.send(encode("MSET", *["k%d" % i for i in range(20)]))
        assert c.read_reply() == Simple("OK")


def test_client_setname_getname(server):
    c = server.client(single_connection_client=True)
    assert c.client_getname() is None
    assert c.client_setname("conn-1") is True
    assert c.client_getname() == "conn-1"
    for bad in ["a b", "a\nb", "\x01"]:
        with raises_exact(BAD_NAME):
            c.client_setname(bad)
    assert c.client_getname() == "conn-1"
    assert c.cmd("CLIENT", "SETNAME", "") == "OK"  # clears the name
    assert c.client_getname() is None
    with raises_exact("ERR wrong number of arguments for 'client|setname' command"):
        c.cmd("CLIENT", "SETNAME")
    with raises_exact("ERR unknown subcommand 'FOO'. Try CLIENT HELP."):
        c.cmd("CLIENT", "FOO")
    with raises_exact("ERR wrong number of arguments for 'client' command"):
        c.cmd("CLIENT")


def parse_client_line(line):
    return dict(kv.split("=", 1) for kv in line.split(" "))


def test_client_id_list_info(server):
    a = server.client(single_connection_client=True)
    b = server.client(single_connection_client=True)
    a.client_setname("alpha")
    ida, idb = a.client_id(), b.client_id()
    assert isinstance(ida, int) and ida != idb
    assert b.client_id() == idb  # stable per connection
    b.cmd("SELECT", "7")
    text = a.cmd("CLIENT", "LIST")
    assert text.endswith("\n")
    clients = {int(c["id"]): c for c in map(parse_client_line, text.rstrip("\n").split("\n"))}
    assert ida in clients and idb in clients
    ca = clients[ida]
    for field in ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "cmd"):
        assert field in ca, field
    assert ca["name"] == "alpha"
    assert ca["cmd"] == "client|list"
    assert clients[idb]["db"] == "7"
    assert re.match(r"^127\.0\.0\.1:\d+$", ca["addr"])
    assert ca["laddr"] == "127.0.0.1:%d" % server.port
    info = parse_client_line(a.cmd("CLIENT", "INFO").rstrip("\n"))
    assert int(info["id"]) == ida and info["name"] == "alpha"
    assert info["addr"] == ca["addr"]
    assert info["cmd"] == "client|info"
    # CLIENT LIST ID filters
    only = a.cmd("CLIENT", "LIST", "ID", str(idb)).rstrip("\n").split("\n")
    assert len(only) == 1 and int(parse_client_line(only[0])["id"]) == idb
    typed = a.cmd("CLIENT", "LIST", "TYPE", "normal")
    assert "id=%d " % ida in typed
    assert int(a.info("clients")["connected_clients"]) >= 2


def test_client_kill(server):
    victim = server.raw()
    victim_id = victim.call("CLIENT", "ID")
    victim_addr = parse_client_line(victim.call("CLIENT", "INFO").decode().strip())["addr"]
    killer = server.client(single_connection_client=True)
    assert killer.cmd("CLIENT", "KILL", "ID", str(victim_id)) == 1
    assert victim.wait_closed()
    assert killer.cmd("CLIENT", "KILL", "ID", str(victim_id)) == 0
    with raises_exact("ERR No such client"):
        killer.cmd("CLIENT", "KILL", victim_addr)  # old form, already gone
    victim2 = server.raw()
    addr2 = parse_client_line(victim2.call("CLIENT", "INFO").decode().strip())["addr"]
    assert killer.cmd("CLIENT", "KILL", addr2) == "OK"
    assert victim2.wait_closed()
    v3 = server.raw()
    addr3 = parse_client_line(v3.call("CLIENT", "INFO").decode().strip())["addr"]
    assert killer.cmd("CLIENT", "KILL", "ADDR", addr3) == 1
    assert v3.wait_closed()
    with raises_exact("ERR client-id should be greater than 0"):
        killer.cmd("CLIENT", "KILL", "ID", "abc")
    with raises_exact("ERR No such client"):
        killer.cmd("CLIENT", "KILL", "1.2.3.4:5")
    assert killer.ping()
    assert server.ping_raw() == b"+PONG\r\n"


FOUNDATION_COMMANDS = {
    # name: (arity, first key, last key, step)
    "ping": (-1, 0, 0, 0), "echo": (2, 0, 0, 0), "quit": (-1, 0, 0, 0),
    "select": (2, 0, 0, 0), "hello": (-1, 0, 0, 0), "auth": (-2, 0, 0, 0),
    "client": (-2, 0, 0, 0), "command": (-1, 0, 0, 0), "reset": (1, 0, 0, 0),
    "info": (-1, 0, 0, 0), "config": (-2, 0, 0, 0), "dbsize": (1, 0, 0, 0),
    "flushdb": (-1, 0, 0, 0), "flushall": (-1, 0, 0, 0), "time": (1, 0, 0, 0),
    "shutdown": (-1, 0, 0, 0), "memory": (-2, 0, 0, 0), "slowlog": (-2, 0, 0, 0),
    "del": (-2, 1, -1, 1), "unlink": (-2, 1, -1, 1), "exists": (-2, 1, -1, 1),
    "type": (2, 1, 1, 1), "expire": (-3, 1, 1, 1), "pexpire": (-3, 1, 1, 1),
    "expireat": (-3, 1, 1, 1), "pexpireat": (-3, 1, 1, 1), "expiretime": (2, 1, 1, 1),
    "pexpiretime": (2, 1, 1, 1), "ttl": (2, 1, 1, 1), "pttl": (2, 1, 1, 1),
    "persist": (2, 1, 1, 1), "rename": (3, 1, 2, 1), "renamenx": (3, 1, 2, 1),
    "keys": (2, 0, 0, 0), "scan": (-2, 0, 0, 0), "randomkey": (1, 0, 0, 0),
    "touch": (-2, 1, -1, 1), "copy": (-3, 1, 2, 1), "object": (-2, 0, 0, 0),
    "get": (2, 1, 1, 1), "set": (-3, 1, 1, 1), "setnx": (3, 1, 1, 1), "setex": (4, 1, 1, 1),
    "psetex": (4, 1, 1, 1), "getset": (3, 1, 1, 1), "getdel": (2, 1, 1, 1),
    "getex": (-2, 1, 1, 1), "mget": (-2, 1, -1, 1), "mset": (-3, 1, -1, 2),
    "msetnx": (-3, 1, -1, 2), "incr": (2, 1, 1, 1), "decr": (2, 1, 1, 1),
    "incrby": (3, 1, 1, 1), "decrby": (3, 1, 1, 1), "incrbyfloat": (3, 1, 1, 1),
    "append": (3, 1, 1, 1), "strlen": (2, 1, 1, 1), "getrange": (4, 1, 1, 1),
    "setrange": (4, 1, 1, 1),
}


def test_command_count_list_info(raw):
    c = raw()
    count = c.call("COMMAND", "COUNT")
    everything = c.call("COMMAND")
    assert isinstance(count, int) and count == len(everything)
    names = {e[0] for e in everything}
    listed = set(c.call("COMMAND", "LIST"))
    assert names <= listed
    for name in FOUNDATION_COMMANDS:
        assert name.encode() in names, name
    infos = c.call("COMMAND", "INFO", *FOUNDATION_COMMANDS)
    assert len(infos) == len(FOUNDATION_COMMANDS)
    for (name, spec), info in zip(FOUNDATION_COMMANDS.items(), infos):
        assert info[0] == name.encode()
        assert tuple(info[1:2] + info[3:6]) == spec, (name, info[:6])
        assert isinstance(info[2], list)
    get = c.call("COMMAND", "INFO", "get")[0]
    assert "readonly" in get[2] and "fast" in get[2]
    assert "write" in c.call("COMMAND", "INFO", "set")[0][2]
    assert c.call("COMMAND", "INFO", "nosuchcommand", "GET") == [
        None, c.call("COMMAND", "INFO", "get")[0]]
    assert c.call("COMMAND", "FOO") == Error(
        "ERR unknown subcommand 'FOO'. Try COMMAND HELP.")


def test_command_docs(raw):
    c = raw()
    docs = c.call("COMMAND", "DOCS", "get", "set")
    # RESP2: a flat array name, doc-map, name, doc-map
    assert isinstance(docs, list) and len(docs) == 4
    pairs = dict(zip(docs[0::2], docs[1::2]))
    assert set(pairs) == {b"get", b"set"}
    for name, doc in pairs.items():
        d = dict(zip(doc[0::2], doc[1::2]))
        # only what the table knows: no invented since/complexity/arguments (redis-cli's
        # HELP prints summary and group and does without the rest)
        assert set(d) == {b"summary", b"group"}, (name, d)
        assert d[b"group"] == b"string"
        assert isinstance(d[b"summary"], bytes) and d[b"summary"]
    docs = c.call("COMMAND", "DOCS", "config")
    sub = dict(zip(docs[1][0::2], docs[1][1::2]))[b"subcommands"]
    assert b"config|get" in sub[0::2]
    assert c.call("COMMAND", "DOCS", "nosuchcommand") == []
    c.call("HELLO", "3")
    docs = c.call("COMMAND", "DOCS", "get")
    assert isinstance(docs, Map) and isinstance(docs[b"get"], Map)


def test_reset(server):
    from resp import RespConn
    c = RespConn(server.host, server.port)
    c.call("HELLO", "3")
    c.call("SELECT", "9")
    c.call("CLIENT", "SETNAME", "before")
    cid = c.call("CLIENT", "ID")
    assert c.call("RESET") == Simple("RESET")
    assert c.call("CLIENT", "GETNAME") is None
    assert c.call("CLIENT", "ID") == cid  # same connection
    c.send(encode("GET", "nokey"))
    assert c.read_raw(5) == b"$-1\r\n"  # back to RESP2
    c.call("SET", "where", "db0?")
    c.close()
    assert server.client().get("where") == "db0?"
    server.client().delete("where")


def test_quit(server, raw):
    c = raw()
    c.send(b"PING\r\nQUIT\r\nPING\r\n")
    data, closed = c.read_all(timeout=2)
    assert data == b"+PONG\r\n+OK\r\n"
    assert closed
    assert server.ping_raw() == b"+PONG\r\n"


def test_unknown_command_error(r):
    with raises_exact(unknown_command_error("foo", "a", "b")):
        r.cmd("foo", "a", "b")
    with raises_exact("ERR unknown command 'NoSuch', with args beginning with: "):
        r.cmd("NoSuch")
    assert r.ping()


def test_connections_spread_over_workers(start_extra_server):
    """A burst of connections is spread over the workers (one of them accepts all of it and
    hands each connection to the least loaded): 40 connections on 2 threads, 20 each; all are
    served; closing them brings the counts back."""
    import socket
    import time
    srv = start_extra_server("--threads", "2")
    socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(40)]

    def counts():
        c = socket.create_connection(("127.0.0.1", srv.port))
        c.sendall(b"INFO server\r\n")
        data = b""
        while not data.endswith(b"\r\n\r\n"):
            data += c.recv(65536)
        c.close()
        line = [l for l in data.decode().split("\r\n") if l.startswith("worker_clients:")][0]
        return [int(x) for x in line.split(":")[1].split(",")]

    time.sleep(0.2)
    got = counts()
    assert len(got) == 2 and sum(got) == 40 + 1 and min(got) >= 19, got
    for s in socks:
        s.sendall(b"PING\r\n")
    assert all(s.recv(16) == b"+PONG\r\n" for s in socks)
    for s in socks:
        s.close()
    deadline = time.time() + 5
    while sum(counts()) != 1 and time.time() < deadline:
        time.sleep(0.05)
    assert sum(counts()) == 1, counts()
